"""robots.txt (RFC 9309): a pure parser, and a per-run cache that fetches and gates.

Matching is Protego's (our product token's group, longest match, Allow wins
ties); fetching is ours, because the RFC's status rules are where harvesters
go wrong: 4xx means everything is allowed, 5xx or no answer means nothing is
fetched from that host this run, at most 500 KiB is parsed, a result is kept
for the run (at most 24 hours). `RobotsCache.gate` plugs into
`Fetcher(gate=...)`, so every hop of every fetch (a redirect to another host
included) is checked against that host's own robots.txt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

from adapter.discovery.robotstxt import RobotsPolicy, parse_robots, product_token
from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity
from adapter.http import findings as fetch_findings
from adapter.http.addresses import host_key, origin
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS

UNAVAILABLE = FindingType(
    "robots/unavailable",
    Severity.INFO,
    "robots.txt answered with a 4xx status; RFC 9309 lets crawlers fetch everything.",
)
UNREACHABLE = FindingType(
    "robots/unreachable",
    Severity.ERROR,
    "robots.txt answered 5xx or could not be fetched; RFC 9309 then forbids crawling, so "
    "nothing is fetched from this host in this run.",
)
LOCATION = FindingType(
    "robots/location",
    Severity.INFO,
    "Which robots.txt was used for the repository: the one at the repository entry URL "
    "(the Signmap rule) or the one at the host root.",
)
TRUNCATED = FindingType(
    "robots/too-large",
    Severity.WARNING,
    "robots.txt is larger than 500 KiB; only the first 500 KiB were read.",
)
CRAWL_DELAY = FindingType(
    "robots/crawl-delay",
    Severity.INFO,
    "robots.txt asks for a Crawl-delay; requests to the host are spaced accordingly "
    "(at most 60 s apart).",
)
NOT_TEXT = FindingType(
    "robots/not-text",
    Severity.WARNING,
    "robots.txt was served as HTML or another non-text type; it was parsed as text anyway.",
)

ROBOTS_TTL = 24 * 3600.0  # RFC 9309 § 2.4: cache at most 24 hours
ROBOTS_REDIRECTS = 5  # RFC 9309 § 2.3.1.2
MAX_CRAWL_DELAY = 60.0  # seconds; a Crawl-delay of hours would stall a run, not pace it


@dataclass(slots=True)
class _Entry:
    policy: RobotsPolicy
    url: str  # the robots.txt used
    fetched_at: float
    served: bool = False  # a 2xx answer: a file that exists at this location


class Refusal(str):
    """Why the gate refused a URL, with the finding code to raise when it is not
    robots/disallowed (robots.txt unreachable: the site said nothing, it did not say no)."""

    code: str

    def __new__(cls, why: str, code: str) -> Refusal:
        made = super().__new__(cls, why)
        made.code = code
        return made


def _blocked(url: str, why: str, now: float) -> _Entry:
    return _Entry(RobotsPolicy("*", disallow_all=True, reason=why), url, now)


_REDIRECT_TROUBLE = (fetch_findings.TOO_MANY_REDIRECTS.code, fetch_findings.REDIRECT_LOOP.code)


def robots_url(url: str) -> str:
    """The host-root robots.txt for any URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


def entry_robots_url(entry_url: str) -> str:
    """Where the Signmap rule puts robots.txt: at the repository entry URL."""
    parts = urlsplit(entry_url)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path}/robots.txt"


class RobotsCache:
    """robots.txt per origin, fetched once per run through the fetcher, with a gate.

    `findings()` drains what the cache learned (unreachable hosts, 4xx, which
    file was used) so the caller yields it where it belongs. Wiring:

        fetcher = Fetcher(limits, policy=..., pacer=HostPacer())
        robots = RobotsCache(fetcher)        # fetches nothing yet
        fetcher.gate = robots.gate           # every hop of every fetch is checked
    """

    def __init__(
        self,
        fetcher: Fetcher,
        user_agent: str | None = None,
        *,
        honour_crawl_delay: bool = True,
        ttl: float = ROBOTS_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetcher = fetcher
        self.user_agent = user_agent or fetcher.user_agent
        self.honour_crawl_delay = honour_crawl_delay
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._origin_locks: dict[str, threading.Lock] = {}
        self._findings: list[Finding] = []
        self._local = threading.local()

    # -- the gate -----------------------------------------------------------

    def gate(self, url: str) -> str | None:
        """None when robots.txt allows `url`; else why not. robots.txt itself is never gated."""
        if getattr(self._local, "fetching", False) or urlsplit(url).path.endswith("/robots.txt"):
            return None
        policy = self.policy(url)
        if policy.disallow_all and policy.reason:  # robots.txt could not be read: not a "no"
            return Refusal(policy.reason, UNREACHABLE.code)
        if policy.disallow_all:
            return "robots.txt forbids everything"
        if not policy.can_fetch(url):
            return f"robots.txt of {origin(url)} disallows {urlsplit(url).path or '/'}"
        return None

    def crawl_delay(self, origin_or_url: str) -> float | None:
        entry = self._entries.get(origin(origin_or_url))
        return entry.policy.crawl_delay if entry else None

    def sitemaps(self, url: str) -> tuple[str, ...]:
        """The Sitemap lines of the robots.txt that governs `url` (fetched if needed)."""
        return self.policy(url).sitemaps

    def findings(self) -> list[Finding]:
        with self._lock:
            out, self._findings = self._findings, []
        return out

    # -- lookup and fetch ---------------------------------------------------

    def policy(self, url: str) -> RobotsPolicy:
        key = origin(url)
        with self._lock:
            lock = self._origin_locks.setdefault(key, threading.Lock())
        with lock:
            entry = self._entries.get(key)
            if entry is None or self._clock() - entry.fetched_at > self.ttl:
                entry = self._fetch_and_note(robots_url(url))
                self._remember(key, entry)
            return entry.policy

    def locate(self, entry_url: str) -> RobotsPolicy:
        """robots.txt for a repository entry URL: at the entry URL (Signmap), else the root.

        Only a robots.txt actually served (2xx) at the entry URL counts; any
        other answer there falls back to the host root, whose answer decides.
        """
        key = origin(entry_url)
        candidates = list(dict.fromkeys([entry_robots_url(entry_url), robots_url(entry_url)]))
        with self._lock:
            lock = self._origin_locks.setdefault(key, threading.Lock())
        with lock:
            entry = self._entries.get(key)
            if entry is not None and self._clock() - entry.fetched_at <= self.ttl:
                return entry.policy
            for candidate in candidates:
                entry, notes = self._load(candidate)
                if entry.served or candidate == candidates[-1]:
                    break
            assert entry is not None
            for note in notes:
                self._note(note)
            self._remember(key, entry)
            if entry.served:
                where = "the host root" if entry.url == candidates[-1] else "the entry URL"
                self._note(LOCATION.at(entry.url, f"robots.txt used from {where}: {entry.url}"))
            return entry.policy

    def load(self, url: str) -> RobotsPolicy:
        """Fetch the robots.txt at `url` (as given) and use it for its origin."""
        key = origin(url)
        with self._lock:
            lock = self._origin_locks.setdefault(key, threading.Lock())
        with lock:
            entry, notes = self._load(url)
            for note in notes:
                self._note(note)
            self._remember(key, entry)
        return entry.policy

    def _fetch_and_note(self, url: str) -> _Entry:
        entry, notes = self._load(url)
        for note in notes:
            self._note(note)
        return entry

    def _remember(self, key: str, entry: _Entry) -> None:
        with self._lock:
            self._entries[key] = entry
        delay = entry.policy.crawl_delay
        if not delay or not self.honour_crawl_delay:
            return
        used = min(delay, MAX_CRAWL_DELAY)
        if self.fetcher.pacer.set_crawl_delay(host_key(entry.url), used):
            capped = f" (asked {delay:g} s, capped)" if used < delay else ""
            message = f"Crawl-delay {used:g} s honoured for {host_key(entry.url)}{capped}"
            self._note(CRAWL_DELAY.at(entry.url, message))

    @contextmanager
    def _fetching(self) -> Iterator[None]:
        self._local.fetching = True
        try:
            yield
        finally:
            self._local.fetching = False

    def _load(self, url: str) -> tuple[_Entry, list[Finding]]:
        """Fetch one robots.txt; the RFC 9309 status rules decide the policy."""
        max_bytes = self.fetcher.limits.max_robots_bytes or DEFAULT_LIMITS.max_robots_bytes
        now = self._clock()
        allow_all = _Entry(RobotsPolicy(product_token(self.user_agent)), url, now)
        try:
            with self._fetching():
                fetched = self.fetcher.get(
                    url,
                    accept="text/plain, */*;q=0.1",
                    max_bytes=max_bytes,
                    max_redirects=ROBOTS_REDIRECTS,
                    truncate=True,
                )
        except FetchError as exc:
            if exc.code in _REDIRECT_TROUBLE:  # § 2.3.1.2: MAY assume unavailable
                why = f"robots.txt redirects too often ({exc.message}); everything is allowed"
                return allow_all, [UNAVAILABLE.at(url, why)]
            why = f"robots.txt could not be fetched ({exc.code}: {exc.message}); host skipped"
            return _blocked(url, why, now), [UNREACHABLE.at(url, why)]
        status = fetched.status
        if 400 <= status < 500 and status != 429:
            why = f"robots.txt answered HTTP {status}; everything is allowed"
            return allow_all, [UNAVAILABLE.at(url, why)]
        if not 200 <= status < 300:
            why = f"robots.txt answered HTTP {status}; nothing is fetched from this host"
            return _blocked(url, why, now), [UNREACHABLE.at(url, why)]
        notes: list[Finding] = []
        if fetched.truncated:
            notes.append(TRUNCATED.at(url, f"robots.txt passes {max_bytes} bytes; rest ignored"))
        if fetched.content_type in ("text/html", "application/xhtml+xml"):
            notes.append(NOT_TEXT.at(url, f"robots.txt served as {fetched.content_type}"))
        policy = parse_robots(fetched.body, self.user_agent, max_bytes)
        return _Entry(policy, url, now, served=True), notes

    def _note(self, finding: Finding) -> None:
        with self._lock:
            self._findings.append(finding)
