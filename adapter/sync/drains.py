"""One loop for the pages of every node this process syncs side by side.

A node's run spent its whole drain in a thread of its own, waiting for its
host's next turn, for a page or for the page's check, and each page in flight
took another thread. Two threads a node, each about 20 KB of stacks, with
the frames, locks and futures around them: at 200 nodes, most of how the
syncing process grew with the number of nodes (BENCHMARKS.md). Here one
thread drives every node's `NodeDrain`:
- it starts each node's pages when their turn comes, in one pool of page
  threads shared by all (as many as pages are in flight at once: the summed
  rate sets that, not the number of nodes);
- it writes what finished.
A node's run hands its drain over after discovery and is called back when
the drain ends (`adapter.sync.run.start_run`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.http.fetcher import Fetcher
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow
from adapter.sync.outcome import CheckedPage, PageOutcome
from adapter.sync.pagethreads import PageThreads
from adapter.sync.worker import NodeDrain, Page, WorkOptions, held_drain

log = logging.getLogger(__name__)

PAGE_THREADS = 256  # the most pages in flight at once, over every node of the loop
# a further page thread starts only once pages have waited for one this long without a
# break: bursts of short pages (every node's turn come at once) reuse the threads there are
GROW_AFTER = 1.0
# a drain waiting for its host's turn is looked at again at least this often, so a stop
# is seen within it even behind a long pause (Retry-After)
LOOK_AT_LEAST = 1.0

OnEnd = Callable[[BaseException | None], None]


@dataclass(eq=False, slots=True)
class _Entry:
    drain: NodeDrain
    on_end: OnEnd
    wake: float | None = 0.0  # monotonic time of the next look; None: when a page finishes
    finished: list[Future[CheckedPage]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Finished:
    entry: _Entry
    future: Future[CheckedPage]


class DrainLoop:
    """The thread that drives the drains added to it; it ends when none is left."""

    def __init__(self, threads: int = PAGE_THREADS) -> None:
        self._threads = threads
        self._events: queue.SimpleQueue[_Entry | _Finished] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, drain: NodeDrain, on_end: OnEnd) -> None:
        """Drive `drain` until it ends; then `on_end(None)`, or `on_end(error)` if it raised.
        `on_end` runs in the loop's thread: it must not wait for another drain."""
        with self._lock:
            self._events.put(_Entry(drain, on_end))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="drains", daemon=True)
                self._thread.start()

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None

    def _run(self) -> None:
        entries: list[_Entry] = []
        with PageThreads[FrontierRow, Any](self._threads, grow_after=GROW_AFTER) as pool:

            def submit(entry: _Entry) -> Callable[..., Future[CheckedPage]]:
                def start(fn: Page, row: FrontierRow) -> Future[CheckedPage]:
                    page: Future[CheckedPage] = Future()
                    page.add_done_callback(lambda f: self._events.put(_Finished(entry, f)))
                    pool.submit(fn, row).add_done_callback(lambda f: _settle(page, f))
                    return page

                return start

            try:
                while self._more(entries):
                    self._turn(entries, submit, pool.grow())
            except BaseException as exc:  # never leave a run waiting for an end that won't come
                log.exception("the drain loop stopped")
                with self._lock:
                    self._thread = None
                for entry in entries + self._pending_adds():
                    _end(entry, exc)

    def _more(self, entries: list[_Entry]) -> bool:
        """False (and the loop marked ended) when no drain is left and none was added."""
        if entries:
            return True
        with self._lock:
            if self._events.empty():
                self._thread = None
                return False
        return True

    def _turn(
        self,
        entries: list[_Entry],
        submit: Callable[[_Entry], Callable[..., Future[CheckedPage]]],
        grow: float | None,
    ) -> None:
        """Wait for the next event, wake time or page thread to grow (`grow` seconds from
        now); then step every entry that is due."""
        now = time.monotonic()
        wakes = [e.wake - now for e in entries if e.wake is not None]
        wakes += [grow] if grow is not None else []
        timeout = max(0.0, min(wakes)) if wakes else None
        try:
            events = [self._events.get(timeout=timeout)]
        except queue.Empty:
            events = []
        while not self._events.empty():
            events.append(self._events.get_nowait())
        for event in events:
            if isinstance(event, _Entry):
                entries.append(event)
            elif event.entry.drain.starts.take(event.future):
                event.entry.finished.append(event.future)
        now = time.monotonic()
        due = [e for e in entries if e.finished or (e.wake is not None and e.wake <= now)]
        for entry in due:
            if not _step(entry, submit(entry)):
                entries.remove(entry)

    def _pending_adds(self) -> list[_Entry]:
        added = []
        while not self._events.empty():
            event = self._events.get_nowait()
            if isinstance(event, _Entry):
                added.append(event)
        return added


def _settle(page: Future[CheckedPage], done: Future[Any]) -> None:
    """`page` done as `done` is: a checked page, or the future of its check in the pool
    (the page's thread went on to the next page meanwhile)."""
    error = done.exception()
    if error is not None:
        page.set_exception(error)
    elif isinstance(result := done.result(), Future):
        result.add_done_callback(lambda inner: _settle(page, inner))
    else:
        page.set_result(result)


def _step(entry: _Entry, submit: Callable[..., Future[CheckedPage]]) -> bool:
    """Write what finished, start what may; False once the drain has ended (and was told)."""
    finished, entry.finished = entry.finished, []
    try:
        entry.drain.write(finished)
        timeout = entry.drain.start_ready(submit)
    except Exception as exc:  # the node's run fails; its pages in flight are not written
        _end(entry, exc)
        return False
    if entry.drain.ended:
        _end(entry, None)
        return False
    entry.wake = None if timeout is None else time.monotonic() + min(timeout, LOOK_AT_LEAST)
    return True


def _end(entry: _Entry, error: BaseException | None) -> None:
    try:
        entry.on_end(error)
    except Exception:
        log.exception("%s: ending the node's run failed", entry.drain.node.id)


_LOOP = DrainLoop()  # this process's (its thread runs while it has drains)


def drain_side_by_side(
    store: Store,
    node: NodeSettings,
    base: Fetcher,
    owner: str,
    stop: threading.Event,
    options: WorkOptions,
    on_outcome: Callable[[PageOutcome], None],
    on_end: OnEnd,
    loop: DrainLoop | None = None,
) -> None:
    """`worker.process_here` in the loop: the node's due pages, then `on_end` (in the loop's
    thread) with their leases dropped, fetchers closed and claims left over released."""
    drain, held = held_drain(store, node, base, owner, stop, options, on_outcome, hand_off=True)

    def ended(error: BaseException | None) -> None:
        try:
            held.close()
        except Exception as exc:
            error = error or exc
        on_end(error)

    (loop or _LOOP).add(drain, ended)
