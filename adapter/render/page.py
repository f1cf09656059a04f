"""One page rendered in a tab of the pool: served by the adapter, watched, read back.

A `Slot` is a browser context with one tab, kept for the pages of one host (and user
agent): the next page of the same repository is a navigation in the same tab, in the
same renderer process, which costs a fraction of a new context and process (measured
in BENCHMARKS.md, "Rendering"). What a page leaves behind (cookies, storage) stays with
its own site; a slot is never handed to another host, and is thrown away after
`RECYCLE` pages, or when its page crashed or hung.

The wait ends by the rule of `adapter.render.script` (one call into the page that
resolves when the rule holds, with the serialized DOM then), every JSON-LD block and
`<link>` the scripts added included. A page whose wait did not end (its budget ran
out) is read by `page.content()`. Every step is bounded: the page's budget, then a
short grace to read the DOM. A page whose scripts never yield (an endless loop) cannot
even be read: it is `hung`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page, Request, Route
from playwright.async_api import Error as PlaywrightError

from adapter.http.fetcher import Fetcher
from adapter.models import Fetched
from adapter.render import route, script
from adapter.render.result import Ended, PageRender

# seconds to read the DOM, open or close a context, after the budget: a page process
# starved of CPU on a loaded machine takes a second or two to answer at all
GRACE = 5.0
RECYCLE = 50  # pages a slot renders before it is replaced by a fresh context


@dataclass(slots=True)
class Slot:
    """A context and its one tab, for the pages of `key` (host and user agent)."""

    key: tuple[str, str]
    context: BrowserContext
    tab: Page
    traffic: route.Traffic | None = None  # the page being rendered
    uses: int = 0
    crashed: asyncio.Event = field(default_factory=asyncio.Event)


async def open_slot(
    browser: Browser, key: tuple[str, str], budget: float, run: Callable[..., Any]
) -> Slot:
    """A fresh context (its own cookies, storage, cache) with the watch script and the
    adapter answering every request; `run(fn)`: `fn` on a thread, awaited."""
    context = await asyncio.wait_for(
        browser.new_context(user_agent=key[1], service_workers="block", accept_downloads=False),
        GRACE * 5,
    )
    try:
        await context.add_init_script(script.init_script(budget))
        tab = await context.new_page()
    except BaseException:
        await close_slot_context(context)
        raise
    slot = Slot(key, context, tab)
    await context.route("**/*", partial(_handle, slot, run))
    tab.on("crash", lambda _page: slot.crashed.set())
    return slot


async def _handle(slot: Slot, run: Callable[..., Any], rte: Route, request: Request) -> None:
    traffic = slot.traffic
    if traffic is None:  # between pages: nothing may leave
        with contextlib.suppress(PlaywrightError):
            await rte.abort("blockedbyclient")
        return
    await route.handle(traffic, run, rte, request)


async def close_slot_context(context: BrowserContext) -> bool:
    """Close a context; False when it would not close in time (restart the browser)."""
    try:
        await asyncio.wait_for(context.close(), GRACE * 2)
    except (PlaywrightError, TimeoutError):
        return False
    return True


async def render_page(
    slot: Slot, page: Fetched, fetcher: Fetcher, scripts: route.ScriptCache | None = None
) -> PageRender:
    """Render `page` (already fetched) in `slot`'s tab; never raises."""
    loop = asyncio.get_running_loop()
    limits = fetcher.limits
    start = loop.time()
    traffic = route.Traffic(
        page, fetcher, limits.render_max_bytes, limits.render_max_requests, loop.time, scripts
    )
    slot.traffic, slot.uses = traffic, slot.uses + 1
    slot.crashed.clear()
    try:
        result = await _watch(slot, page.final_url, traffic, start + limits.render_budget)
        await _noted(traffic, loop.time() + GRACE)
    except (PlaywrightError, TimeoutError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        result = PageRender(None, "failed", 0.0, error=f"{type(exc).__name__}: {first}")
    finally:
        slot.traffic = None
    result.seconds = loop.time() - start
    result.blocked, result.failed = traffic.blocked, traffic.failed
    return result


async def _watch(slot: Slot, url: str, traffic: route.Traffic, deadline: float) -> PageRender:
    loop = asyncio.get_running_loop()
    await slot.tab.goto(url, wait_until="commit", timeout=_ms(deadline - loop.time()))
    ended, html = await _settle(slot, traffic, deadline)
    if ended == "crashed":
        return PageRender(None, ended, 0.0, error="the page's process crashed (out of memory?)")
    if html is not None:
        return PageRender(html, ended, 0.0)
    try:
        html = await asyncio.wait_for(slot.tab.content(), GRACE)
    except (PlaywrightError, TimeoutError):
        return PageRender(None, "hung", 0.0, error="its scripts never yielded (an endless loop?)")
    return PageRender(html, ended, 0.0)


async def _settle(slot: Slot, traffic: route.Traffic, deadline: float) -> tuple[Ended, str | None]:
    """Wait until a Dataset is in the DOM or the page and its requests are quiet: how it
    ended, and the DOM then (None when the page could not say: read it again)."""
    loop = asyncio.get_running_loop()
    quiet_ms = int(script.QUIET * 1000)
    while True:
        left = deadline - loop.time()
        if left <= 0:
            return "budget", None
        ready = asyncio.ensure_future(slot.tab.evaluate(script.WAIT, quiet_ms))
        crash = asyncio.ensure_future(slot.crashed.wait())
        done, _ = await asyncio.wait({ready, crash}, timeout=left, return_when="FIRST_COMPLETED")
        crash.cancel()
        if crash in done:
            ready.cancel()
            return "crashed", None
        if ready not in done:
            ready.cancel()
            return "budget", None  # or hung: reading the page will say
        try:
            state, html = _told(ready.result())
        except PlaywrightError:  # its document was replaced meanwhile (document.open, a
            await asyncio.sleep(script.TICK_MS / 1000)  # navigation aborted): ask the new one
            continue
        if state == "dataset":
            return "dataset", html
        quiet = traffic.quiet_for()
        if quiet >= script.QUIET:
            return "quiet", html
        # the page is idle but the adapter is still serving (or just served) it a request
        traffic.changed.clear()
        wait = max(0.0, script.QUIET - quiet) if quiet >= 0 else left
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(traffic.changed.wait(), min(wait, max(left, 0.0)))


async def _noted(traffic: route.Traffic, deadline: float) -> None:
    """Until the frames and navigations away the adapter is answering for the page are
    checked, so a refused one is reported with the page (the page is read already; a
    script's fetch still in flight is not waited for)."""
    loop = asyncio.get_running_loop()
    while traffic.noting and loop.time() < deadline:
        traffic.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(traffic.changed.wait(), deadline - loop.time())


def _told(answer: Any) -> tuple[Any, str | None]:
    """(how, the DOM) from the page's answer to `script.WAIT`; no DOM unless it is text."""
    if isinstance(answer, list) and len(answer) == 2:
        return answer[0], answer[1] if isinstance(answer[1], str) else None
    return answer, None


def _ms(seconds: float) -> float:
    return max(1.0, seconds * 1000)
