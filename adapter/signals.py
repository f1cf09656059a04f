"""Signal handlers, installed one way: the scheduler, the sync, the servers and the children.

Python calls a handler with (signum, frame) and only in the main thread; every
caller here wants "call this with the signal number", so `install` adapts
that, and `on_signals` restores the previous handlers when its block ends (a
command run in a test must not leave its handler behind).
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

Handler = Callable[[int], object]
_Previous = dict[int, Any]


def install(handler: Handler | None, signums: Iterable[int] = STOP_SIGNALS) -> _Previous:
    """Route `signums` to `handler(signum)` (None: ignore them); the handlers they had."""

    def call(signum: int, _frame: FrameType | None) -> None:
        assert handler is not None
        handler(signum)

    target = signal.SIG_IGN if handler is None else call
    return {signum: signal.signal(signum, target) for signum in signums}


@contextmanager
def on_signals(handler: Handler | None, signums: Iterable[int] = STOP_SIGNALS) -> Iterator[None]:
    """`install` for the block's duration; outside the main thread (where Python forbids
    handlers) the block runs with the handlers as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = install(handler, signums)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def inbox() -> queue.SimpleQueue[int]:
    """Where a handler leaves the signal for the main thread to act on. A SimpleQueue, not a
    Queue or an Event: a handler runs in the main thread between two of its bytecodes, so
    one that interrupts the main thread's own `Queue.get` or `Event.wait` while it holds
    their (non-reentrant) lock blocks on that lock forever; SimpleQueue's `put` takes none
    a Python frame holds."""
    return queue.SimpleQueue()


# How long a wait blocks in one go where a signal must end it: CPython runs a handler only
# between two bytecodes of the main thread, or when the signal interrupts the call it is
# blocked in. A signal that lands after the thread's last check and before it blocks (in a
# lock's wait) interrupts nothing, and a wait with no timeout then outlasts it for good:
# `adapter worker`, waiting in `Thread.join()` for node threads that wait for the stop only
# the handler sets, sat 60 s after SIGINT in one full test run of ~25 (and once after
# SIGTERM). Cut into slices, such a wait runs the handler within one.
SLICE = 0.25


def join(thread: threading.Thread) -> None:
    """`thread.join()` in slices: a stop signal is handled within one (SLICE)."""
    while thread.is_alive():
        thread.join(SLICE)


def result(future: Future[T]) -> T:
    """`future.result()` in slices; the job's own TimeoutError still propagates."""
    while True:
        try:
            return future.result(SLICE)
        except TimeoutError:
            if future.done():
                return future.result()


def get(box: queue.SimpleQueue[T]) -> T:
    """`box.get()` in slices."""
    while True:
        try:
            return box.get(timeout=SLICE)
        except queue.Empty:
            continue


# The signal `nudge_main` sends; its handler does nothing (the call it interrupts goes on).
NUDGE = signal.SIGUSR2


_NUDGING: dict[int, threading.Thread] = {}  # process id -> its nudging thread (a fork has none)


def nudge_main(every: float = SLICE) -> threading.Thread:
    """Interrupt the main thread's blocking call every `every` seconds, for waits that are not
    ours to slice: granian's main loop and each of its workers wait on an Event with no
    timeout, and a stop signal that lands just before that wait blocks, or reaches one of
    the process's other threads, interrupts nothing, so its handler never runs. Interrupted,
    the main thread runs any handler such a signal left pending, and its wait goes on. Call
    it from the main thread (installing NUDGE's handler fails elsewhere); once a process is
    enough, later calls return its thread. The nudging thread is a daemon."""
    running = _NUDGING.get(os.getpid())
    if running is not None:
        return running
    signal.signal(NUDGE, lambda *_: None)
    main = threading.get_ident()

    def nudge() -> None:
        while True:
            time.sleep(every)
            try:
                signal.pthread_kill(main, NUDGE)
            except OSError:  # the main thread is gone (ProcessLookupError): the process ends
                return

    thread = threading.Thread(target=nudge, name="nudge-main", daemon=True)
    thread.start()
    _NUDGING[os.getpid()] = thread
    return thread
