"""A thread pool that grows only as its calls need: the sync's page threads.

Kept apart from the drain loop (`adapter.sync.loop`) that is its one user, since nothing
in it is a page: calls of any kind, futures, and when a further thread is worth starting.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, TypeVar

A = TypeVar("A")
R = TypeVar("R")


class PageThreads(Generic[A, R]):
    """Up to `size` threads running `fn(arg)` for submitted args, each into its future.

    Unlike `ThreadPoolExecutor`, a thread counts itself idle before it publishes its result,
    so the page submitted on that result reuses it (a node at 1 request/s had two threads).
    Up to `floor` threads start as calls need them; with `grow_after`, a further one starts
    (`grow`) only while calls have waited that long without a break: many nodes' short
    calls share a few threads, slow hosts' calls still get as many as they hold. With
    `stall_after`, one starts sooner when calls wait and no call has ended for that long:
    every thread is held (a hung host's fetch), and the waiting calls, other hosts', would
    wait for its timeout or `grow_after`, whichever comes first.
    """

    def __init__(
        self,
        size: int,
        name: str = "page",
        grow_after: float | None = None,
        stall_after: float | None = None,
    ) -> None:
        self._size, self._name, self.grow_after = max(1, size), name, grow_after
        self.stall_after = stall_after
        self.floor = 1
        self._queue: queue.SimpleQueue[tuple[Future[R], Callable[[A], R], A] | None]
        self._queue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads free and not yet promised to a queued item
        self._backlog = 0  # queued items no thread is promised to yet
        self._backlog_since = 0.0  # monotonic time the backlog last went from none to some
        self._grown_at = 0.0
        self._freed_at = 0.0  # monotonic time a call last ended

    def __enter__(self) -> PageThreads[A, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def started(self) -> int:
        return len(self._threads)

    def submit(self, fn: Callable[[A], R], arg: A) -> Future[R]:
        future: Future[R] = Future()
        with self._lock:
            free = self.grow_after is None or len(self._threads) < self.floor
            if self._idle:
                self._idle -= 1
            elif len(self._threads) < self._size and free:
                self._start()
            else:
                if not self._backlog:
                    self._backlog_since = time.monotonic()
                self._backlog += 1
            self._queue.put((future, fn, arg))
        return future

    def grow(self) -> float | None:
        """Start a thread if calls have waited `grow_after` without a break; seconds until
        one may start (None: no call waits, or no thread may be added)."""
        with self._lock:
            if not self._backlog or len(self._threads) >= self._size:
                return None
            after, now = self.grow_after or 0.0, time.monotonic()
            due = self._backlog_since + after
            if self.stall_after is not None:
                due = min(due, max(self._backlog_since, self._freed_at) + self.stall_after)
            wait = max(due, self._grown_at + after / 20) - now
            if wait > 0:
                return wait
            self._backlog -= 1  # the new thread's
            self._grown_at = now
            self._start()
            return after / 20 if self._backlog else None

    def _start(self) -> None:
        """Under the lock."""
        name = f"{self._name}_{len(self._threads)}"
        self._threads.append(threading.Thread(target=self._work, name=name, daemon=True))
        self._threads[-1].start()

    def close(self) -> None:
        """Let the threads finish what they hold, then end them."""
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(None)
        for thread in threads:
            thread.join()

    def _work(self) -> None:
        while self._run_next():
            pass

    def _run_next(self) -> bool:
        """Run the next item; False at the end. Its own frame, so that nothing of the
        page (arg, future, result) stays referenced while the thread waits for the next:
        with the loop's written pages, 6 MB of 200 nodes."""
        item = self._queue.get()
        if item is None:
            return False
        future, fn, arg = item
        if not future.set_running_or_notify_cancel():
            self._free()
            return True
        try:
            result = fn(arg)
        except BaseException as exc:  # the caller sees it through the future
            self._free()
            future.set_exception(exc)
        else:
            self._free()  # before the result is out: a page submitted on it reuses us
            future.set_result(result)
        return True

    def _free(self) -> None:
        with self._lock:
            self._freed_at = time.monotonic()
            if self._backlog:
                self._backlog -= 1  # the next queued item is ours
            else:
                self._idle += 1
