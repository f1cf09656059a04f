"""The one loop that drives every node's due pages in this process, and its page threads.

A thread per node run, waiting on its host's turn, was most of how the process grew with
the nodes (BENCHMARKS.md). One thread drives every `NodeDrain` and writes what finished;
the page threads (`adapter.pagethreads`) are shared, as many as pages are in flight (the
summed rate sets that).
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

from adapter.pagethreads import PageThreads
from adapter.store.frontier import FrontierRow
from adapter.sync.drain import NodeDrain, Page, Run, Submit
from adapter.sync.outcome import CheckedPage

log = logging.getLogger(__name__)

PAGE_THREADS = 256  # the most pages in flight at once, over every node of the loop
# beyond the largest node's concurrency, a further page thread starts only once pages have
# waited for one this long without a break: bursts of short pages (every node's turn come
# at once) reuse the threads there are
GROW_AFTER = 1.0
# ... or once they have waited this long with no page ending at all: every thread is held
# by a slow or hung host (its timeout may be long), and the pages waiting are others'. A
# node of concurrency 1 beside a hung one had its first page wait a whole GROW_AFTER
STALL_AFTER = 0.1
# a drain waiting for its host's turn is looked at again at least this often, so a stop
# is seen within it even behind a long pause (Retry-After)
LOOK_AT_LEAST = 1.0
# pages that finished while others of their node are in flight are written together once
# this many have gathered or the first has waited this long: a transaction (its BEGIN, the
# run's counts, the COMMIT) cost about as much as a page's own statements, and a writer
# that keeps up wrote groups of one or two (1,500 pages: 2.9 ms of CPU a page written
# alone, 2.2 in fours, 1.7 in sixteens)
GROUP = 8
GROUP_WAIT = 0.025


@dataclass(eq=False, slots=True)
class _Entry:
    drain: NodeDrain
    done: Future[int] = field(default_factory=Future)
    wake: float | None = 0.0  # monotonic time of the next look; None: when a page finishes
    finished: list[Future[CheckedPage]] = field(default_factory=list)
    since: float = 0.0  # monotonic time the oldest of `finished` was taken


class DrainLoop:
    """The thread that drives the drains added to it; it ends when none is left."""

    def __init__(self, threads: int = PAGE_THREADS) -> None:
        self._threads = threads
        self._events: queue.SimpleQueue[_Entry | tuple[_Entry, Future[CheckedPage]]]
        self._events = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, drain: NodeDrain) -> Future[int]:
        """Drive `drain` until it ends: the future of its pages done, set in the loop's
        thread once the drain is closed, or of the error that ended it (its callbacks must
        not wait for another drain)."""
        entry = _Entry(drain)
        with self._lock:
            self._events.put(entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="drains", daemon=True)
                self._thread.start()
        return entry.done

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None

    def _run(self) -> None:
        entries: list[_Entry] = []
        with PageThreads[FrontierRow, Any](
            self._threads, grow_after=GROW_AFTER, stall_after=STALL_AFTER
        ) as pool:

            def submit(entry: _Entry) -> Submit:
                def start(fn: Page, row: FrontierRow) -> Future[CheckedPage]:
                    page: Future[CheckedPage] = Future()
                    page.add_done_callback(lambda f: self._events.put((entry, f)))
                    pool.submit(fn, row).add_done_callback(lambda f: _settle(page, f))
                    return page

                return start

            try:
                while self._more(entries):
                    self._turn(entries, submit, pool)
            except BaseException as exc:  # never leave a run waiting for an end that won't come
                log.exception("the drain loop stopped")
                with self._lock:
                    self._thread = None
                while not self._events.empty():
                    event = self._events.get_nowait()
                    entries += [event] if isinstance(event, _Entry) else []
                for entry in entries:
                    _end(entry, exc)

    def _more(self, entries: list[_Entry]) -> bool:
        """False (and the loop marked ended) when no drain is left and none was added."""
        with self._lock:
            if entries or not self._events.empty():
                return True
            self._thread = None
            return False

    def _turn(
        self, entries: list[_Entry], submit: Callable[[_Entry], Submit], pool: PageThreads[Any, Any]
    ) -> None:
        """Wait for the next event, wake time or page thread to grow; then step every entry
        that is due."""
        now, grow = time.monotonic(), pool.grow()
        wakes = [e.wake - now for e in entries if e.wake is not None]
        wakes += [grow] if grow is not None else []
        try:
            events = [self._events.get(timeout=max(0.0, min(wakes)) if wakes else None)]
        except queue.Empty:
            events = []
        while not self._events.empty():
            events.append(self._events.get_nowait())
        for event in events:
            if isinstance(event, _Entry):
                entries.append(event)
                pool.floor = max(pool.floor, event.drain.size)
            elif event[0].drain.starts.take(event[1]):
                if not event[0].finished:
                    event[0].since = time.monotonic()
                event[0].finished.append(event[1])
        now = time.monotonic()
        for entry in [e for e in entries if e.finished or (e.wake is not None and e.wake <= now)]:
            if not _step(entry, submit(entry), now):
                entries.remove(entry)


def _settle(page: Future[CheckedPage], done: Future[Any]) -> None:
    """`page` done as `done` is: a checked page, or the future of its check in the pool
    (the page's thread went on to the next page meanwhile)."""
    if (error := done.exception()) is not None:
        page.set_exception(error)
    elif isinstance(result := done.result(), Future):
        result.add_done_callback(lambda inner: _settle(page, inner))
    else:
        page.set_result(result)


def _step(entry: _Entry, submit: Submit, now: float) -> bool:
    """Write what finished (once a group has gathered), start what may; False once the
    drain has ended (and was told)."""
    try:
        if entry.finished and _group_ready(entry, now):
            finished, entry.finished = entry.finished, []
            entry.drain.write(finished)
        timeout = entry.drain.start_ready(submit)
    except Exception as exc:  # the node's run fails; its pages in flight are not written
        _end(entry, exc)
        return False
    if entry.drain.ended:
        _end(entry, None)
        return False
    now = time.monotonic()
    wake = None if timeout is None else now + min(timeout, LOOK_AT_LEAST)
    if entry.finished:  # a group gathering: written by its deadline at the latest
        deadline = entry.since + GROUP_WAIT
        wake = deadline if wake is None else min(wake, deadline)
    entry.wake = wake
    return True


def _group_ready(entry: _Entry, now: float) -> bool:
    """Whether the finished pages are written now: a group has gathered, its first page
    waited long enough, or no page of the node is in flight to join them (the last ones,
    or a stop: then those in flight join them by the deadline, as they finish)."""
    return (
        len(entry.finished) >= GROUP
        or now - entry.since >= GROUP_WAIT
        or not entry.drain.starts.pending
    )


def _end(entry: _Entry, error: BaseException | None) -> None:
    """Close the drain (its leases, fetchers, claims a stop left over), then say so."""
    try:
        entry.drain.close()
    except Exception as exc:
        error = error or exc
    if error is None:
        entry.done.set_result(entry.drain.done)
    else:
        entry.done.set_exception(error)


LOOP = DrainLoop()  # this process's (its thread runs while it has drains)


def drive(run: Run) -> Future[int]:
    """The run's due pages, driven by this process's loop (see `DrainLoop.add`)."""
    return LOOP.add(NodeDrain(run))
