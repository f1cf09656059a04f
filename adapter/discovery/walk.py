"""Discovery: repository entry URL -> robots.txt -> sitemaps -> landing pages, as a stream.

`discover()` is a generator: nothing is fetched until it is iterated, each
landing page is yielded as soon as its `<url>` is parsed, and findings come
out as values in the same stream. Sitemap indexes are walked depth-first to
`max_sitemap_depth` with cycle detection; entries are deduplicated across
all sitemaps with a compact hash table (8 bytes per URL), so a million URLs
cost about 16 MB, not a million strings.

Start URLs are told apart by their path: `.../robots.txt` is a robots.txt;
a last segment ending in `.xml`, `.gz`, `.txt` or containing `sitemap` is a
sitemap (index or not, compressed or not); anything else is a repository
entry URL, whose robots.txt is looked for at the entry URL (the Signmap rule)
and then at the host root, and whose `Sitemap:` lines are followed.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Generator, Iterator, Sequence
from typing import Literal
from urllib.parse import urlsplit

from adapter.discovery.findings import (
    BAD_GZIP,
    BAD_XML,
    CYCLE,
    NO_SITEMAPS,
    NOT_LISTED,
    OUT_OF_SCOPE,
    SITEMAP_FAILED,
    SITEMAP_READ,
    TOO_DEEP,
    TOO_LARGE,
    TOO_MANY_SITEMAPS,
)
from adapter.discovery.locset import LocSet
from adapter.discovery.robots import UNREACHABLE, RobotsCache
from adapter.discovery.sitegraph import (
    SITEGRAPH_OVER_LIMIT,
    SITEGRAPH_READ,
    SITEGRAPH_UNREADABLE,
)
from adapter.discovery.sitemap import ChildSitemap, SitemapParser
from adapter.errors import FetchError
from adapter.findings import Finding, Stage
from adapter.http import findings as fetch_findings
from adapter.http.fetcher import ACCEPT_XML, Fetcher
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import SitemapEntry

StartKind = Literal["robots", "sitemap", "entry"]
_SCOPE_FINDINGS_PER_SITEMAP = 10
MAX_FOREIGN_HOSTS = 20  # other hosts checked for cross-submission per discovery
CHUNK = 1 << 20  # bytes handed to the parser at a time
_CUT_SHORT = frozenset({BAD_XML.code, BAD_GZIP.code})
_OWN = {UNREACHABLE.code: UNREACHABLE}  # refusals the robots.txt gate names itself
# The fetcher may drop the last decoded piece when it truncates; fetching a little
# more than the cap lets the parser stop exactly at `max_sitemap_bytes` itself.
FETCH_HEADROOM = 1 << 20
_GRAPH_CODES = frozenset(t.code for t in (SITEGRAPH_UNREADABLE, SITEGRAPH_OVER_LIMIT))


def classify(url: str) -> StartKind:
    """robots.txt, sitemap or repository entry URL, by the URL's path (see module docstring)."""
    last = urlsplit(url).path.rsplit("/", 1)[-1].lower()
    if last == "robots.txt":
        return "robots"
    if last.endswith((".xml", ".gz", ".txt")) or "sitemap" in last:
        return "sitemap"
    return "entry"


def plural(n: int, noun: str) -> str:
    """`1 entry`, `2 entries`, `3 sitemaps`; words without a plural stay as they are."""
    if n == 1 or noun in ("filtered", "out of scope"):
        return f"{n} {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


def discover(
    start_urls: Sequence[str],
    fetcher: Fetcher,
    *,
    limits: Limits = DEFAULT_LIMITS,
    robots: RobotsCache | None = None,
    allowed_hosts: Collection[str] = (),
    include: Sequence[re.Pattern[str]] = (),
    exclude: Sequence[re.Pattern[str]] = (),
) -> Generator[SitemapEntry | Finding, None, None]:  # close() restores the fetcher's gate
    """Yield every landing page the start URLs lead to, once, with findings along the way."""
    cache = robots or RobotsCache(fetcher)
    installed = fetcher.gate is None
    if installed:
        fetcher.gate = cache.gate
    try:
        walk = _Walk(fetcher, cache, limits, _hosts(allowed_hosts), include, exclude)
        for url in start_urls:
            yield from walk.start(url)
    finally:
        if installed:
            fetcher.gate = None


class _Walk:
    """State of one discovery: sitemaps seen, URLs seen, counters."""

    def __init__(
        self,
        fetcher: Fetcher,
        robots: RobotsCache,
        limits: Limits,
        allowed_hosts: frozenset[str],
        include: Sequence[re.Pattern[str]],
        exclude: Sequence[re.Pattern[str]],
    ) -> None:
        self.fetcher = fetcher
        self.robots = robots
        self.limits = limits
        self.allowed_hosts = allowed_hosts
        self.include = include
        self.exclude = exclude
        self.seen = LocSet()
        self.sitemaps_read: set[str] = set()
        self.warned_too_many = False
        self.foreign_hosts: set[str] = set()  # other hosts whose robots.txt was consulted

    def start(self, url: str) -> Iterator[SitemapEntry | Finding]:
        kind = classify(url)
        if kind == "sitemap":
            yield from self.tree(url)
            return
        policy = self.robots.load(url) if kind == "robots" else self.robots.locate(url)
        yield from self.robots.findings()
        if policy.disallow_all:
            return  # robots/unreachable already says why
        if policy.sitemaps:
            for sitemap in policy.sitemaps:
                yield from self.tree(sitemap)
            return
        yield from self.guess(url)

    def guess(self, url: str) -> Iterator[SitemapEntry | Finding]:
        """No Sitemap line: try sitemap.xml at the entry URL, then at the host root."""
        parts = urlsplit(url)
        base = f"{parts.scheme}://{parts.netloc}"
        candidates = [f"{base}{parts.path.rstrip('/')}/sitemap.xml", f"{base}/sitemap.xml"]
        if classify(url) == "robots":
            candidates = candidates[1:]
        for candidate in dict.fromkeys(candidates):
            try:
                fetched = self.fetcher.get(candidate, accept=ACCEPT_XML, max_bytes=1, truncate=True)
            except FetchError:
                continue
            if fetched.status == 200:
                yield NOT_LISTED.at(url, f"robots.txt lists no Sitemap; using {candidate}")
                yield from self.tree(candidate)
                return
        yield from self.robots.findings()
        yield NO_SITEMAPS.at(url, f"no Sitemap line in robots.txt and no {' or '.join(candidates)}")

    def tree(self, root: str) -> Iterator[SitemapEntry | Finding]:
        """Read a sitemap and, if it is an index, everything under it, depth first."""
        stack: list[tuple[str, tuple[str, ...]]] = [(root, ())]
        while stack:
            url, chain = stack.pop()
            if url in self.sitemaps_read:
                if url in chain:
                    yield CYCLE.at(chain[-1], f"{chain[-1]} lists {url}, which leads back to it")
                continue
            if len(chain) > self.limits.max_sitemap_depth:
                yield TOO_DEEP.at(url, f"nested {len(chain)} indexes deep; not read")
                continue
            if len(self.sitemaps_read) >= self.limits.max_sitemaps:
                if not self.warned_too_many:
                    self.warned_too_many = True
                    yield TOO_MANY_SITEMAPS.at(url, f"more than {self.limits.max_sitemaps} files")
                continue
            self.sitemaps_read.add(url)
            children: list[str] = []
            yield from _SitemapFile(self, url, (*chain, url)).read(children)
            for child in reversed(children):
                stack.append((child, (*chain, url)))

    def out_of_scope(self, loc: str, chain: tuple[str, ...]) -> bool:
        """True when `loc` is on another host that neither lists the sitemap nor is allowed."""
        host = urlsplit(loc).netloc.lower()
        if host in self.allowed_hosts or host.rsplit(":", 1)[0] in self.allowed_hosts:
            return False
        self.foreign_hosts.add(host)
        if len(self.foreign_hosts) > MAX_FOREIGN_HOSTS:
            return True  # a sitemap naming hosts by the hundred gets no robots.txt fetch each
        listed = self.robots.sitemaps(loc)
        return not any(url in listed for url in chain)


class _SitemapFile:
    """Fetch and parse one sitemap file, yielding its entries as they are parsed."""

    def __init__(self, walk: _Walk, url: str, chain: tuple[str, ...]) -> None:
        self.walk = walk
        self.url = url
        self.chain = chain
        self.home: set[str] = {_prefix(url)}
        self.scope: dict[str, bool] = {}
        self.counts = {"entry": 0, "duplicate": 0, "filtered": 0, "out of scope": 0}
        self.pending: list[Finding] = []

    def read(self, children: list[str]) -> Iterator[SitemapEntry | Finding]:
        walk = self.walk
        try:
            fetched = walk.fetcher.get(
                self.url,
                accept=ACCEPT_XML,
                max_bytes=walk.limits.max_sitemap_bytes + FETCH_HEADROOM,
                truncate=True,
            )
        except FetchError as exc:
            yield from walk.robots.findings()
            kind = fetch_findings.BY_CODE.get(exc.code) or _OWN.get(exc.code, SITEMAP_FAILED)
            yield kind.at(self.url, f"sitemap not fetched: {exc.message}")
            return
        yield from walk.robots.findings()
        if fetched.status >= 300:
            yield SITEMAP_FAILED.at(self.url, f"sitemap answered HTTP {fetched.status}")
            return
        self.home.add(_prefix(fetched.final_url))
        if fetched.truncated:  # the body (compressed, if it was) passed the cap
            limit = walk.limits.max_sitemap_bytes
            yield TOO_LARGE.at(self.url, f"body passes {limit} bytes; read up to the cap")
        parser = SitemapParser(self.url, walk.limits)
        body = fetched.body
        for start in range(0, len(body), CHUNK):
            yield from self.items(parser.feed(body[start : start + CHUNK]), children)
            if parser.done:
                break
        closing = parser.close()
        if fetched.truncated:  # a body cut at the cap ends badly; TOO_LARGE already says why
            closing = [i for i in closing if getattr(i, "code", "") not in _CUT_SHORT]
        yield from self.items(closing, children)
        yield from walk.robots.findings()
        yield SITEMAP_READ.at(self.url, self.summary(parser, parser.gzipped))

    def summary(self, parser: SitemapParser, gzipped: bool) -> str:
        kind = parser.kind or "unreadable"
        parts = [f"{kind}{' (gzip)' if gzipped else ''}"]
        if parser.kind == "sitemapindex":
            parts.append(plural(parser.count, "sitemap"))
        else:
            parts += [plural(n, name) for name, n in self.counts.items() if n or name == "entry"]
        return ", ".join(parts)

    def items(
        self, items: list[SitemapEntry | ChildSitemap | Finding], children: list[str]
    ) -> Iterator[SitemapEntry | Finding]:
        walk = self.walk
        for item in items:
            if isinstance(item, SitemapEntry):
                if self.keep(item.loc):
                    yield item
                elif self.pending:
                    yield from self.pending
                    self.pending.clear()
            elif isinstance(item, ChildSitemap):
                if self.in_scope(item.loc):
                    children.append(item.loc)
                else:
                    yield OUT_OF_SCOPE.at(self.url, f"index lists {item.loc} on another host")
            else:
                yield item
        yield from walk.robots.findings()

    def keep(self, loc: str) -> bool:
        walk = self.walk
        if not wanted(loc, walk.include, walk.exclude):
            self.counts["filtered"] += 1
            return False
        if not self.in_scope(loc):
            self.counts["out of scope"] += 1
            if self.counts["out of scope"] <= _SCOPE_FINDINGS_PER_SITEMAP:
                self.pending.append(OUT_OF_SCOPE.at(self.url, f"lists {loc} on another host"))
            return False
        if not walk.seen.add(loc):
            self.counts["duplicate"] += 1
            return False
        self.counts["entry"] += 1
        return True

    def in_scope(self, loc: str) -> bool:
        prefix = _prefix(loc)
        if prefix in self.home:
            return True
        known = self.scope.get(prefix)
        if known is None:
            known = not self.walk.out_of_scope(loc, self.chain)
            self.scope[prefix] = known
        return known


def _prefix(url: str) -> str:
    """scheme://netloc of an http(s) URL, lower-cased (fast path of urlsplit)."""
    start = url.find("//") + 2
    end = url.find("/", start)
    return (url[:end] if end > 0 else url).lower()


def _hosts(allowed: Collection[str]) -> frozenset[str]:
    """Allowed hosts as host names and host:port, from names, origins or URLs."""
    out: set[str] = set()
    for item in allowed:
        parts = urlsplit(item if "//" in item else "//" + item)
        if parts.hostname:
            out.add(parts.hostname.lower())
            out.add(parts.netloc.lower())
    return frozenset(out)


def start_failure(
    pages_seen: int, codes: dict[str, int], first_error: str | None, previous_seen: int
) -> str | None:
    """Why a discovery that listed `pages_seen` pages did not reach the node, or None.

    A node that lists nothing is fine when its sitemaps were read and were empty
    the last time too; not when nothing could be read, or the pages vanished.
    """
    if pages_seen:
        return None
    because = f" ({first_error})" if first_error else ""
    if codes.get(UNREACHABLE.code):
        return first_error or "robots.txt could not be fetched"
    if not (codes.get(SITEMAP_READ.code) or codes.get(SITEGRAPH_READ.code)) and any(
        code.partition("/")[0] in (Stage.DISCOVER, Stage.FETCH, Stage.SITEMAP) for code in codes
    ):
        what = "sitegraph" if codes.keys() & _GRAPH_CODES else "sitemap"
        return f"no {what} could be read{because}"
    if previous_seen:
        return f"discovery listed no page, the previous run listed {previous_seen}"
    return None


def wanted(
    url: str, include: Sequence[re.Pattern[str]], exclude: Sequence[re.Pattern[str]]
) -> bool:
    """Whether a discovered URL passes the node's include and exclude patterns (a sitemap's
    page, a sitegraph's Dataset alike)."""
    if include and not any(p.search(url) for p in include):
        return False
    return not any(p.search(url) for p in exclude)
