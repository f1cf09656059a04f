"""The process's one browser: a headless chromium driven from a thread of its own.

Why a thread: Playwright's sync API is bound to the thread that started it, and the
sync engine calls from many page threads (`adapter.sync.loop`) and nodes at once. So
one daemon thread runs an asyncio loop with Playwright's async API; any thread hands
it a page (`asyncio.run_coroutine_threadsafe`, a thread-safe queue) and waits for the
rendered page. The loop never blocks: the adapter's fetches for the pages' requests
run on a small thread pool and are awaited.

One browser per process, started when the first page needs it (a sync of static pages
starts none), at most `size` pages at once (the largest `rendering.max_pages_at_once`
asked so far), each in a slot (`adapter.render.page.Slot`): a context and its tab kept
for the next page of the same host, since a navigation in a live tab costs a fraction
of a new context and renderer process; slots of other hosts are closed to make room.
A page that crashed or hung loses its slot; a browser that died, or a context that
would not close, gets the browser restarted before the next page; the page is
reported, the run goes on.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from adapter.http.addresses import host_key
from adapter.http.fetcher import Fetcher
from adapter.models import Fetched
from adapter.render.page import GRACE, RECYCLE, Slot, close_slot_context, open_slot, render_page
from adapter.render.result import PageRender
from adapter.render.route import ScriptCache

log = logging.getLogger(__name__)

# what works in containers and CI; no GPU, no QUIC, nothing of Google's services
FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--mute-audio",
    # every request is answered by the adapter (adapter.render.route); anything that slipped
    # past the interception (a WebSocket, a prefetch) meets a proxy and a resolver that go
    # nowhere
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
FETCH_THREADS = 16  # the adapter's fetches for the pages' scripts, at once
LAUNCH_TIMEOUT = 30.0  # seconds for chromium to start
STUCK_AFTER = 30.0  # seconds past a page's budget before its caller stops waiting


@dataclass(slots=True)
class _Job:
    page: Fetched
    fetcher: Fetcher
    future: Future[PageRender] = field(default_factory=Future)
    started: float | None = None  # monotonic, when it got its context


class BrowserService:
    """One chromium for the process; `render` from any thread. See the module docstring."""

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.launches = 0  # browsers started (tests: a static sync starts none)
        self.size = 0  # pages at once
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._fetches: ThreadPoolExecutor | None = None
        # only touched in the loop's thread
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._restart = False
        self._busy = 0
        self._free: asyncio.Condition | None = None
        self._launching: asyncio.Lock | None = None
        self._woken: asyncio.Future[None] | None = None
        self._scripts: ScriptCache | None = None  # bundles shared by a host's pages
        self._idle: list[Slot] = []  # contexts kept for their host's next page, oldest first

    # -- any thread ------------------------------------------------------------------

    def render(self, page: Fetched, fetcher: Fetcher, at_once: int) -> PageRender:
        """Render `page` (already fetched); blocks the calling thread, never raises."""
        loop = self._started(at_once)
        job = _Job(page, fetcher)
        asyncio.run_coroutine_threadsafe(self._serve(job), loop)
        stuck_after = fetcher.limits.render_budget + 4 * GRACE + STUCK_AFTER
        while True:
            try:
                return job.future.result(timeout=1.0)
            except FutureTimeout:
                if job.started is not None and time.monotonic() - job.started > stuck_after:
                    self._restart = True  # read in the loop before the next page
                    return PageRender(None, "hung", time.monotonic() - job.started,
                                      error="the browser stopped answering")  # fmt: skip

    def close(self) -> None:
        """Stop the browser and the thread (at exit, or a test's end)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout=GRACE * 5)
        except Exception:  # a browser that will not stop: the process's end takes it
            log.warning("the browser did not stop in time")
        loop.call_soon_threadsafe(loop.stop)
        thread.join(GRACE * 5)
        if self._fetches is not None:
            self._fetches.shutdown(wait=False, cancel_futures=True)

    def _started(self, at_once: int) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._fetches = ThreadPoolExecutor(FETCH_THREADS, thread_name_prefix="render-fetch")
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(
                    target=self._run_loop, args=(loop, ready), name="render-browser", daemon=True
                )
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            grow = at_once - self.size
            if grow > 0:
                self.size = at_once
                self._loop.call_soon_threadsafe(self._wake)
            return self._loop

    def _run_loop(self, loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        self._free = asyncio.Condition()
        self._launching = asyncio.Lock()
        loop.call_soon(ready.set)
        loop.run_forever()
        loop.close()

    # -- the loop's thread -----------------------------------------------------------

    def _wake(self) -> None:
        self._woken = asyncio.ensure_future(self._notify())  # kept: a task is weakly held

    async def _notify(self) -> None:
        assert self._free is not None
        async with self._free:
            self._free.notify_all()

    async def _serve(self, job: _Job) -> None:
        assert self._free is not None
        try:
            async with self._free:
                await self._free.wait_for(lambda: self._busy < self.size)
                self._busy += 1
            try:
                job.started = time.monotonic()
                job.future.set_result(await self._one(job))
            finally:
                async with self._free:
                    self._busy -= 1
                    self._free.notify()
        except Exception as exc:  # a bug of ours: the page is reported, the loop goes on
            log.exception("rendering %s failed", job.page.final_url)
            if not job.future.done():
                job.future.set_result(PageRender(None, "failed", 0.0, error=repr(exc)))

    async def _one(self, job: _Job) -> PageRender:
        limits = job.fetcher.limits
        try:
            browser = await self._browser_ready(limits.render_heap_mb)
            slot = await self._slot(browser, job)
        except (PlaywrightError, TimeoutError, OSError) as exc:
            self._restart = True
            return PageRender(None, "failed", 0.0, error=f"the browser did not start: {exc}")
        if self._scripts is None:
            self._scripts = ScriptCache(asyncio.get_running_loop().time)
        result = await render_page(slot, job.page, job.fetcher, self._scripts)
        broken = result.ended in ("crashed", "hung", "failed")
        if broken or slot.uses >= RECYCLE or not browser.is_connected():
            if not await close_slot_context(slot.context) and broken:
                self._restart = True  # a context that will not close: its process is stuck
            if not browser.is_connected():
                self._restart = True
        else:
            self._idle.append(slot)
        return result

    async def _slot(self, browser: Browser, job: _Job) -> Slot:
        """An idle slot of the page's host, else a new one (the oldest idle slot of another
        host closed when the pool is full)."""
        key = (host_key(job.page.final_url), job.fetcher.user_agent)
        for slot in self._idle:
            if slot.key == key:
                self._idle.remove(slot)
                return slot
        while self._idle and self._busy + len(self._idle) > self.size:
            await close_slot_context(self._idle.pop(0).context)
        loop = asyncio.get_running_loop()

        def run(fn: Any) -> Any:
            return loop.run_in_executor(self._fetches, fn)

        return await open_slot(browser, key, job.fetcher.limits.render_budget, run)

    async def _browser_ready(self, heap_mb: int) -> Browser:
        """The browser, launched (heap: the first page's render_heap_mb) or restarted."""
        assert self._launching is not None
        async with self._launching:
            if self._restart or (self._browser is not None and not self._browser.is_connected()):
                log.warning("restarting the browser")
                await self._stop()
            self._restart = False
            if self._browser is None:
                self._browser = await asyncio.wait_for(self._launch(heap_mb), LAUNCH_TIMEOUT)
            return self._browser

    async def _launch(self, heap_mb: int) -> Browser:
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        heap = max(16, min(heap_mb, 4096))
        browser = await self._playwright.chromium.launch(
            executable_path=self.executable,
            headless=True,
            args=[*FLAGS, f"--js-flags=--max-old-space-size={heap}"],
            timeout=LAUNCH_TIMEOUT * 1000,
        )
        self.launches += 1
        return browser

    async def _stop(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        self._idle.clear()  # their contexts go with the browser
        if browser is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(browser.close(), GRACE * 2)
        if playwright is not None:  # its driver ends, and takes a browser that would not close
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(playwright.stop(), GRACE * 2)


_SERVICE: list[BrowserService] = []
_SERVICE_LOCK = threading.Lock()


def service(executable: str) -> BrowserService:
    """The process's browser service (its browser starts with the first page it renders;
    `executable`: the first caller's, one browser serves every node)."""
    with _SERVICE_LOCK:
        if not _SERVICE:
            _SERVICE.append(BrowserService(executable))
            atexit.register(_SERVICE[0].close)
        return _SERVICE[0]


def close_service() -> None:
    """Stop the process's browser service, if one started; the next page starts a new one."""
    with _SERVICE_LOCK:
        running = _SERVICE[:]
        _SERVICE.clear()
    for one in running:
        one.close()
