"""The threads one node's pages run in: a new thread only when every thread is busy.

`ThreadPoolExecutor` starts a thread on `submit` unless one has said it is
idle, and a thread says so only after its future's result is out. The node's
loop wakes on that result and submits the next page at once, so it often
found no idle thread and started another: over a run, a node at one request a
second that needs one thread ended with two. Here a thread counts itself idle
before it publishes the result, so a page submitted on that result reuses it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from types import TracebackType
from typing import Generic, TypeVar

A = TypeVar("A")
R = TypeVar("R")

_Item = tuple[Future[R], Callable[[A], R], A]


class PageThreads(Generic[A, R]):
    """Up to `size` threads running `fn(arg)` for submitted args, each into its future.

    With `grow_after`, a call that finds every thread busy waits for one to free,
    and further threads start (`grow`, one a twentieth of that apart) only while
    calls have been waiting for that long without a break. The pages of
    hundreds of nodes come in bursts of short calls, every node's turn come at
    once, which a few threads serve in turn: a thread each would be hundreds,
    as many as the nodes. Calls that wait on slow hosts keep the backlog from
    ever emptying, so they still get as many threads as they hold.
    """

    def __init__(self, size: int, name: str = "page", grow_after: float | None = None) -> None:
        self._size = max(1, size)
        self._name = name
        self.grow_after = grow_after
        self._queue: queue.SimpleQueue[_Item[R, A] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads free and not yet promised to a queued item
        self._backlog = 0  # queued items no thread is promised to yet
        self._backlog_since = 0.0  # monotonic time the backlog last went from none to some
        self._grown_at = 0.0

    def __enter__(self) -> PageThreads[A, R]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def started(self) -> int:
        """Threads started so far."""
        return len(self._threads)

    def submit(self, fn: Callable[[A], R], arg: A) -> Future[R]:
        future: Future[R] = Future()
        with self._lock:
            if self._idle:
                self._idle -= 1
            elif len(self._threads) < self._size and (self.grow_after is None or not self._threads):
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
            after = self.grow_after or 0.0
            now = time.monotonic()
            wait = max(self._backlog_since + after, self._grown_at + after / 20) - now
            if wait > 0:
                return wait
            self._backlog -= 1  # the new thread's
            self._grown_at = now
            self._start()
            return after / 20 if self._backlog else None

    def _start(self) -> None:
        """Under the lock."""
        thread = threading.Thread(
            target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True
        )
        self._threads.append(thread)
        thread.start()

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
        with the node loop's written pages (`worker.NodeDrain.write`), 6 MB of 200 nodes."""
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
            if self._backlog:
                self._backlog -= 1  # the next queued item is ours
            else:
                self._idle += 1
