"""One check asked for over the web: the same report as `adapter check-dataset`, under guard.

A URL typed into the form is a stranger's: it gets the address policy of an
unnamed origin (public addresses only), except the origins the operator named
in the configuration, which are trusted as on the command line. The caps are
the CLI's; on top, the whole check has a deadline: every fetch's own timeout
is cut to it, and no fetch starts after it (the report then says which fetch
was not made and why). Pasted or uploaded content is checked without fetching
the page: it becomes the page's response, at the address given (or a
placeholder), so links it names are still read and may be fetched.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from adapter.dataone.profiles import DEFAULT_PROFILE, PROFILES
from adapter.errors import FetchError
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import ACCEPT_ANY, Fetcher
from adapter.http.findings import TIMEOUT
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import DatasetReport, Fetched
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.signposting.resolve import FAILED, Resolution, find_landing_page, resolver_url

DEFAULT_DEADLINE = 30.0  # seconds for a whole check, every fetch included
INTERACTIVE_RETRY = 0.25  # someone is waiting in the browser, as at the terminal
# where pasted content is said to live when no address is given: never resolvable
PASTED_URL = "https://pasted.invalid/"


class BadInput(ValueError):
    """The form's input cannot be checked; the message says what to type instead."""


class DeadlineFetcher(Fetcher):
    """A fetcher that starts no fetch after `deadline` (a `time.monotonic()` value)."""

    def __init__(
        self, limits: Limits, policy: AddressPolicy, deadline: float, seconds: float
    ) -> None:
        super().__init__(
            replace(limits, total_timeout=min(limits.total_timeout, seconds)),
            policy=policy,
            retry_base_delay=INTERACTIVE_RETRY,
        )
        self.deadline = deadline
        self.seconds = seconds

    def get(self, url: str, **kwargs: object) -> Fetched:
        self._in_time(url)
        return super().get(url, **kwargs)  # type: ignore[arg-type]

    def head(self, url: str, *, accept: str = ACCEPT_ANY) -> Fetched:
        self._in_time(url)
        return super().head(url, accept=accept)

    def _in_time(self, url: str) -> None:
        if time.monotonic() >= self.deadline:
            raise FetchError(
                TIMEOUT.code,
                url,
                f"not fetched: the web check's deadline of {self.seconds:g} s had passed",
            )


@dataclass(frozen=True, slots=True)
class Checker:
    """What every web check shares: the operator's trusted origins, the caps, the deadline."""

    trusted_origins: tuple[str, ...] = ()
    limits: Limits = DEFAULT_LIMITS
    deadline: float = DEFAULT_DEADLINE

    def _fetcher(self, extra_trusted: Iterable[str] = ()) -> DeadlineFetcher:
        policy = AddressPolicy([*self.trusted_origins, *extra_trusted])
        return DeadlineFetcher(self.limits, policy, time.monotonic() + self.deadline, self.deadline)

    def check_url(self, text: str, profile: str = DEFAULT_PROFILE) -> DatasetReport:
        """A landing page URL, a DOI, or the URL of a file or record that leads to one."""
        text = text.strip()
        start = resolver_url(text) or text
        require_http_url(start, self.limits.max_url_length)
        options = CheckOptions(limits=self.limits, profile=require_profile(profile))
        with self._fetcher() as fetcher:
            resolution = find_landing_page(text, fetcher, self.limits)
            report = check_landing_page(
                resolution.landing_url,
                fetcher,
                options,
                prefetched=resolution.error or resolution.fetched,
            )
        note_resolution(report, text, resolution)
        return report

    def check_content(
        self, body: bytes, address: str = "", filename: str = "", profile: str = DEFAULT_PROFILE
    ) -> DatasetReport:
        """Pasted or uploaded HTML or JSON-LD, checked as if `address` had answered it."""
        if not body.strip():
            raise BadInput("the pasted text or the uploaded file is empty")
        if len(body) > self.limits.max_page_bytes:
            raise BadInput(
                f"the content has {len(body)} bytes, more than max_page_bytes "
                f"({self.limits.max_page_bytes})"
            )
        url = address.strip() or PASTED_URL
        require_http_url(url, self.limits.max_url_length)
        page = Fetched(
            url=url,
            final_url=url,
            status=200,
            headers={"content-type": f"{content_type(body, filename)}; charset=utf-8"},
            body=body,
        )
        options = CheckOptions(limits=self.limits, profile=require_profile(profile))
        with self._fetcher() as fetcher:
            return check_landing_page(url, fetcher, options, prefetched=page)


def require_profile(name: str) -> str:
    """The requirement profile asked for (the default when none is)."""
    name = name.strip() or DEFAULT_PROFILE
    if name not in PROFILES:
        raise BadInput(f"{name!r} is not a requirement profile: use one of {', '.join(PROFILES)}")
    return name


def content_type(body: bytes, filename: str = "") -> str:
    """JSON-LD when the name says so or the text starts as JSON does; else HTML."""
    name = filename.lower()
    if name.endswith((".jsonld", ".json")):
        return "application/ld+json"
    if name.endswith((".html", ".htm", ".xhtml")):
        return "text/html"
    head = body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return "application/ld+json" if head in (b"{", b"[") else "text/html"


def require_http_url(url: str, max_length: int) -> None:
    if len(url) > max_length:
        raise BadInput(f"the URL is longer than {max_length} characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        raise BadInput(f"{url!r} is not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadInput(
            f"{url!r} is not an http(s) URL or a DOI: give a landing page's address "
            "(https://...) or a DOI (10.x/y, doi:10.x/y)"
        )


def note_resolution(report: DatasetReport, url: str, resolution: Resolution) -> None:
    """The report names the URL given and the path that led from it to the landing page.

    As `adapter check-dataset` does, so the web and the CLI give the same report.
    """
    moved = resolution.landing_url != url
    report.findings[:0] = [f for f in resolution.findings if moved or f.code != FAILED.code]
    if moved:
        report.url = url
        report.path[:0] = resolution.path[:-1]
