"""One page rendered in a fresh browser context: served by the adapter, watched, read back.

A context per page (its own cookies, storage and cache, nothing left from another
page or node); the wait ends by the rule of `adapter.render.script`; the page is read
back as its serialized DOM (`page.content()`), every JSON-LD block and `<link>` the
scripts added included. Every step is bounded: the page's budget, then a short grace
to read the DOM and close the context. A page whose scripts never yield (an endless
loop) cannot even be read: it is `hung`, and the browser is restarted after it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from functools import partial
from typing import Any

from playwright.async_api import Browser, Page
from playwright.async_api import Error as PlaywrightError

from adapter.http.fetcher import Fetcher
from adapter.models import Fetched
from adapter.render import route, script
from adapter.render.result import Ended, PageRender

GRACE = 2.0  # seconds to read the DOM, and to close the context, after the budget


async def render_page(
    browser: Browser, page: Fetched, fetcher: Fetcher, run: Callable[..., Any]
) -> PageRender:
    """Render `page` (already fetched) in a new context of `browser`; never raises."""
    loop = asyncio.get_running_loop()
    limits = fetcher.limits
    start = loop.time()
    traffic = route.Traffic(
        page, fetcher, limits.render_max_bytes, limits.render_max_requests, loop.time
    )
    result = PageRender(None, "failed", 0.0)
    context = None
    try:
        context = await asyncio.wait_for(
            browser.new_context(
                user_agent=fetcher.user_agent, service_workers="block", accept_downloads=False
            ),
            GRACE * 5,
        )
        await context.route("**/*", partial(route.handle, traffic, run))
        await context.add_init_script(script.init_script(limits.render_budget))
        tab = await context.new_page()
        result = await _watch(tab, page.final_url, traffic, start + limits.render_budget)
    except (PlaywrightError, TimeoutError) as exc:
        result.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        if context is not None:
            try:
                await asyncio.wait_for(context.close(), GRACE * 2)
            except (PlaywrightError, TimeoutError):
                result.context_stuck = True
    result.seconds = loop.time() - start
    result.blocked, result.failed = traffic.blocked, traffic.failed
    return result


async def _watch(tab: Page, url: str, traffic: route.Traffic, deadline: float) -> PageRender:
    loop = asyncio.get_running_loop()
    crashed = asyncio.Event()
    tab.on("crash", lambda _page: crashed.set())
    await tab.goto(url, wait_until="commit", timeout=_ms(deadline - loop.time()))
    ended = await _settle(tab, traffic, deadline, crashed)
    if ended == "crashed":
        return PageRender(None, ended, 0.0, error="the page's process crashed (out of memory?)")
    try:
        html = await asyncio.wait_for(tab.content(), GRACE)
    except (PlaywrightError, TimeoutError):
        return PageRender(None, "hung", 0.0, error="its scripts never yielded (an endless loop?)")
    return PageRender(html, ended, 0.0)


async def _settle(
    tab: Page, traffic: route.Traffic, deadline: float, crashed: asyncio.Event
) -> Ended:
    """Wait until a Dataset is in the DOM or the page and its requests are quiet."""
    loop = asyncio.get_running_loop()
    quiet_ms = int(script.QUIET * 1000)
    while True:
        left = deadline - loop.time()
        if left <= 0:
            return "budget"
        ready = asyncio.ensure_future(
            tab.wait_for_function(
                script.READY, arg=quiet_ms, polling=script.POLL_MS, timeout=_ms(left)
            )
        )
        crash = asyncio.ensure_future(crashed.wait())
        done, _ = await asyncio.wait(
            {ready, crash}, timeout=left + GRACE, return_when="FIRST_COMPLETED"
        )
        crash.cancel()
        if crash in done:
            ready.cancel()
            return "crashed"
        if ready not in done:
            ready.cancel()
            return "budget"
        try:
            state = await (await ready).json_value()
        except (PlaywrightError, TimeoutError):
            return "budget"  # timed out in the page (or the page hung: reading it will say)
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
