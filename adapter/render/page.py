"""One page rendered in a tab of the pool: served by the adapter, watched, read back.

A `Slot` is a browser context with one tab, kept for the pages of one host (and user
agent): the next page of the same repository is a navigation in the same tab, in the
same renderer process, which costs a fraction of a new context and process (measured
in BENCHMARKS.md, "Rendering"). What a page leaves behind (cookies, storage) stays with
its own site; a slot is never handed to another host, and is thrown away after
`RECYCLE` pages, or when its page crashed or hung.

The wait ends by the rule of `adapter.render.script` (one call into the page that
resolves when the rule holds); the page is read back as its serialized DOM
(`page.content()`), every JSON-LD block and `<link>` the scripts added included. Every
step is bounded: the page's budget, then a short grace to read the DOM. A page whose
scripts never yield (an endless loop) cannot even be read: it is `hung`.
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
    ended = await _settle(slot, traffic, deadline)
    if ended == "crashed":
        return PageRender(None, ended, 0.0, error="the page's process crashed (out of memory?)")
    try:
        html = await asyncio.wait_for(slot.tab.content(), GRACE)
    except (PlaywrightError, TimeoutError):
        return PageRender(None, "hung", 0.0, error="its scripts never yielded (an endless loop?)")
    return PageRender(html, ended, 0.0)


async def _settle(slot: Slot, traffic: route.Traffic, deadline: float) -> Ended:
    """Wait until a Dataset is in the DOM or the page and its requests are quiet."""
    loop = asyncio.get_running_loop()
    quiet_ms = int(script.QUIET * 1000)
    while True:
        left = deadline - loop.time()
        if left <= 0:
            return "budget"
        ready = asyncio.ensure_future(slot.tab.evaluate(script.WAIT, quiet_ms))
        crash = asyncio.ensure_future(slot.crashed.wait())
        done, _ = await asyncio.wait({ready, crash}, timeout=left, return_when="FIRST_COMPLETED")
        crash.cancel()
        if crash in done:
            ready.cancel()
            return "crashed"
        if ready not in done:
            ready.cancel()
            return "budget"  # or hung: reading the page will say
        try:
            state = ready.result()
        except PlaywrightError:  # its document was replaced meanwhile (document.open, a
            await asyncio.sleep(script.TICK_MS / 1000)  # navigation aborted): ask the new one
            continue
        if state == "dataset":
            return "dataset"
        quiet = traffic.quiet_for()
        if quiet >= script.QUIET:
            return "quiet"
        # the page is idle but the adapter is still serving (or just served) it a request
        traffic.changed.clear()
        wait = max(0.0, script.QUIET - quiet) if quiet >= 0 else left
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(traffic.changed.wait(), min(wait, max(left, 0.0)))


def _ms(seconds: float) -> float:
    return max(1.0, seconds * 1000)
