"""Every request a rendered page makes, decided and served by the adapter, never the browser.

The browser is untrusted territory: the page's scripts are a stranger's code. Each
request is intercepted (Playwright's `route`) and answered here:

- the page itself: the response the adapter already fetched (no second GET);
- scripts, fetch() and XMLHttpRequest, by GET: fetched by the adapter's own `Fetcher`
  (its address policy, robots.txt gate, the node's pacer, caps and deadline), the answer
  handed to the browser with `route.fulfill`; a refusal is reported by URL;
- everything else (images, fonts, media, stylesheets, other methods, other schemes):
  aborted; frames and navigations away are answered 204 (the page stays where it is);
  the browser never touches the network. One to an address the policy refuses is
  reported like a script's request.

So the caps, the policy and the politeness are the very code of every other fetch, and
the browser needs no network of its own (it is launched with a proxy that goes nowhere).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Request, Route

from adapter.errors import FetchError
from adapter.http import findings as fetch_findings
from adapter.http.fetcher import Fetcher
from adapter.models import Fetched

# what a page's scripts need to write their metadata; the rest is never fetched
FETCHED_KINDS = frozenset({"script", "xhr", "fetch"})
REFUSED_CODES = frozenset({fetch_findings.UNSAFE_URL.code, fetch_findings.DISALLOWED.code})
# hop-by-hop or describing the wire, not the body the browser is handed
_DROPPED_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive",
     "set-cookie"}
)  # fmt: skip
_MAX_NOTED = 20  # refusals and failures kept per page, each a finding


class ScriptCache:
    """Script bundles already fetched, so the pages of one repository share its bundle.

    A portal's pages load the same bundle (`/static/js/main.4f9e2b.js`); a browser keeps
    it, and a harvester rendering 10,000 pages should not ask the repository 10,000
    times. Only scripts answered 200 without `no-store`, kept `TTL` seconds, up to
    `MAX_BYTES` in all (the oldest go first). Keyed by the fetcher's address policy as
    well as the URL: a node's trusted private origin is never served from the cache to
    another node's page. An entry holds its policy, so the policy's id is not reused (a
    node's run over, its policy freed, the next policy put at the same address) while the
    entry lives. Used from the browser's loop thread only.
    """

    TTL = 600.0
    MAX_ONE = 2 * 1024 * 1024
    MAX_BYTES = 32 * 1024 * 1024

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._kept: dict[tuple[int, str], tuple[float, Fetched, object]] = {}
        self._bytes = 0

    def get(self, policy: object, url: str) -> Fetched | None:
        kept = self._kept.get((id(policy), url))
        if kept is None or self._clock() - kept[0] > self.TTL:
            return None
        return kept[1]

    def put(self, policy: object, url: str, got: Fetched) -> None:
        control = got.headers.get("cache-control", "").lower()
        if got.status != 200 or "no-store" in control or len(got.body) > self.MAX_ONE:
            return
        key = (id(policy), url)
        if key in self._kept:
            self._bytes -= len(self._kept.pop(key)[1].body)
        self._kept[key] = (self._clock(), got, policy)
        self._bytes += len(got.body)
        while self._bytes > self.MAX_BYTES:
            oldest = next(iter(self._kept))
            self._bytes -= len(self._kept.pop(oldest)[1].body)


@dataclass(slots=True)
class Traffic:
    """One rendered page's requests: what is in flight, what was refused or failed."""

    page: Fetched  # the page's own response, served to the browser as is
    fetcher: Fetcher
    bytes_left: int
    requests_left: int
    clock: Callable[[], float]
    scripts: ScriptCache | None = None
    inflight: int = 0
    noting: int = 0  # frames and navigations away being answered and checked
    last: float = 0.0  # when the latest request ended (the clock's seconds)
    served_page: bool = False
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (url, why)
    failed: list[tuple[str, str]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def quiet_for(self) -> float:
        """Seconds since the last request ended; -1 while one is in flight."""
        return -1.0 if self.inflight else self.clock() - self.last

    def refuse(self, url: str, why: str) -> None:
        if len(self.blocked) < _MAX_NOTED and (url, why) not in self.blocked:
            self.blocked.append((url, why))

    def fail(self, url: str, why: str) -> None:
        if len(self.failed) < _MAX_NOTED:
            self.failed.append((url, why))


def headers_for_browser(fetched: Fetched) -> dict[str, str]:
    return {k: v for k, v in fetched.headers.items() if k not in _DROPPED_HEADERS}


async def handle(traffic: Traffic, run: Callable[..., Any], route: Route, request: Request) -> None:
    """Answer one request of the page (`run(fn)`: `fn` on a thread, awaited)."""
    # the page or its context may close meanwhile (budget spent, crash): nothing to answer
    with contextlib.suppress(PlaywrightError):
        await _answer(traffic, run, route, request)


async def _answer(
    traffic: Traffic, run: Callable[..., Any], route: Route, request: Request
) -> None:
    url = request.url
    main = request.frame.parent_frame is None if _has_frame(request) else False
    if request.is_navigation_request():
        if main and not traffic.served_page:
            traffic.served_page = True
            page = traffic.page
            await route.fulfill(
                status=page.status, headers=headers_for_browser(page), body=page.body
            )
        else:  # frames, and the page moving itself elsewhere: not what is being read. A 204
            # keeps the document where it is (an aborted navigation shows an error page)
            traffic.noting += 1
            try:
                await route.fulfill(status=204, body=b"")
                await _note_navigation(traffic, run, url)
            finally:
                traffic.noting -= 1
                traffic.changed.set()
        return
    if request.resource_type not in FETCHED_KINDS:
        await route.abort("blockedbyclient")  # images, fonts, media, stylesheets, beacons
        return
    why = _refusal(traffic, url, request.method)
    if why is not None:
        traffic.refuse(url, why)
        await route.abort("blockedbyclient")
        return
    scripts = traffic.scripts if request.resource_type == "script" else None
    policy = traffic.fetcher.policy
    got = scripts.get(policy, url) if scripts is not None else None
    if got is None:
        traffic.requests_left -= 1
        traffic.inflight += 1
        try:
            got = await _fetch(traffic, run, url, request.headers.get("accept", "*/*"))
        finally:
            traffic.inflight -= 1
            traffic.last = traffic.clock()
            traffic.changed.set()
        if got is None:
            await route.abort("failed")
            return
        if scripts is not None:
            scripts.put(policy, url, got)
    traffic.bytes_left -= len(got.body)
    if got.status >= 400:
        traffic.fail(url, f"HTTP {got.status}")
    await route.fulfill(status=got.status, headers=headers_for_browser(got), body=got.body)


async def _note_navigation(traffic: Traffic, run: Callable[..., Any], url: str) -> None:
    """A frame or navigation the adapter would not have fetched either is reported as a
    refused request (one to a public page, an embedded video, is only not followed)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("about", "blob"):
        return
    if scheme not in ("http", "https"):
        traffic.refuse(url, f"a frame or navigation to scheme {scheme or '(none)'}")
        return
    fetcher = traffic.fetcher
    why = await run(partial(fetcher.policy.refusal, url, fetcher.limits.max_url_length))
    if why:
        traffic.refuse(url, f"a frame or navigation: {why}")


def _has_frame(request: Request) -> bool:
    try:
        request.frame  # noqa: B018 - a service worker's request has none
    except PlaywrightError:
        return False
    return True


def _refusal(traffic: Traffic, url: str, method: str) -> str | None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        return f"scheme {scheme or '(none)'}: is not http or https"
    if method != "GET":
        return f"method {method}: a harvester only reads (GET)"
    if traffic.requests_left <= 0:
        return "past render_max_requests for the page"
    if traffic.bytes_left <= 0:
        return "past render_max_bytes for the page"
    return None


async def _fetch(
    traffic: Traffic, run: Callable[..., Any], url: str, accept: str
) -> Fetched | None:
    """The adapter's GET of `url` for the page, or None with the reason noted."""
    get = partial(traffic.fetcher.get, url, accept=accept, max_bytes=traffic.bytes_left)
    try:
        got: Fetched = await run(get)
    except FetchError as exc:
        if exc.code in REFUSED_CODES:
            traffic.refuse(url, exc.message)
        else:
            traffic.fail(url, f"{exc.code}: {exc.message}")
        return None
    return got
