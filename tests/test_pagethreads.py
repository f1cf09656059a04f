"""The page threads: a new thread only when every one is busy, or calls kept waiting."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

import pytest

from adapter.pagethreads import PageThreads

WAIT = 30.0


def one_after_another(
    submit: Callable[[Callable[[int], int], int], Future[int]], count: int
) -> None:
    """Submit the next call the moment the previous result is out (as a node's loop does)."""
    for n in range(count):
        assert submit(lambda x: x * 2, n).result() == n * 2


def test_a_call_submitted_on_the_previous_result_reuses_its_thread() -> None:
    with PageThreads[int, int](4) as pool:
        one_after_another(pool.submit, 300)
        assert pool.started == 1


def test_busy_threads_grow_up_to_the_size_and_queued_calls_wait_for_them() -> None:
    gate = threading.Event()
    with PageThreads[int, int](3) as pool:
        futures = [pool.submit(lambda x: (gate.wait(10), x)[1], n) for n in range(7)]
        assert pool.started == 3
        gate.set()
        assert [f.result(10) for f in futures] == list(range(7))
        assert pool.started == 3
        one_after_another(pool.submit, 50)  # the backlog was paid back: threads are free
        assert pool.started == 3


def test_an_exception_reaches_the_caller_and_the_thread_goes_on() -> None:
    def fail(x: int) -> int:
        raise ValueError(f"bad {x}")

    with PageThreads[int, int](2) as pool:
        with pytest.raises(ValueError, match="bad 1"):
            pool.submit(fail, 1).result(10)
        assert pool.submit(lambda x: x + 1, 1).result(10) == 2
        assert pool.started == 1


def test_close_waits_for_calls_in_flight() -> None:
    done: list[int] = []
    gate = threading.Event()
    pool = PageThreads[int, None](2)

    def hold(x: int) -> None:
        gate.wait(10)
        done.append(x)

    pool.submit(hold, 5)
    threading.Timer(0.2, gate.set).start()
    pool.close()
    assert done == [5]


class Page:
    """A result that can be watched for being freed."""


def test_an_idle_thread_holds_nothing_of_its_last_call() -> None:
    """At 200 nodes side by side every node has an idle page thread: each must not keep
    its last page (argument, future, result) alive while it waits for the next."""
    import gc
    import weakref

    arg = Page()
    with PageThreads[Page, Page](1) as pool:
        future = pool.submit(lambda a: Page(), arg)
        result = weakref.ref(future.result(10))
        given = weakref.ref(arg)
        del future, arg
        for _ in range(500):  # the thread may still be leaving the call it just answered
            gc.collect()
            if result() is None and given() is None:
                break
            time.sleep(0.01)
        assert pool.started == 1  # the thread is alive and idle, waiting for a call
        assert result() is None and given() is None


def test_a_burst_of_short_calls_reuses_the_threads_there_are() -> None:
    with PageThreads[int, int](64, grow_after=10.0) as pool:
        futures = [pool.submit(lambda n: n + 1, n) for n in range(200)]
        assert [f.result(WAIT) for f in futures] == [n + 1 for n in range(200)]
        assert pool.grow() is None  # nothing waits
        assert pool.started == 1


def _served_beside_a_held_call(pool: PageThreads[int, int], bound: float) -> None:
    """A call held until released and one queued behind it: once the pool's wait (at most
    `bound`) has passed, a second thread serves the queued call while the first holds."""
    gate = threading.Event()
    held = pool.submit(lambda n: (gate.wait(WAIT), n)[1], 1)
    queued = pool.submit(lambda n: n, 2)
    wait = pool.grow()
    assert wait is not None and 0 < wait <= bound  # not yet: it has not waited long enough
    time.sleep(wait)
    assert pool.grow() is None  # a thread started for it: none waits now
    assert queued.result(WAIT) == 2 and not held.done()  # served while the first holds
    assert pool.started == 2
    gate.set()
    assert held.result(WAIT) == 1


def test_calls_that_keep_waiting_get_a_further_thread() -> None:
    with PageThreads[int, int](4, grow_after=0.05) as pool:
        _served_beside_a_held_call(pool, 0.05)


def test_calls_waiting_behind_threads_that_all_hold_get_one_sooner() -> None:
    """Every thread held (a hung host's fetch) and none ending: a waiting call, another
    host's, gets a thread after `stall_after`, not `grow_after` or the hang's timeout."""
    with PageThreads[int, int](4, grow_after=10.0, stall_after=0.05) as pool:
        _served_beside_a_held_call(pool, 0.05)  # the stall's, not grow_after's 10 s
