"""adapter.signals: handlers get the signal number, and the old handlers come back."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
from typing import Any

import pytest

from adapter import signals
from adapter.signals import inbox, install, on_signals


def test_a_routed_signal_reaches_the_handler_and_the_old_handler_returns() -> None:
    before = signal.getsignal(signal.SIGUSR1)
    got: list[int] = []
    with on_signals(got.append, (signal.SIGUSR1,)):
        os.kill(os.getpid(), signal.SIGUSR1)
    assert got == [signal.SIGUSR1]
    assert signal.getsignal(signal.SIGUSR1) is before


def test_none_ignores_the_signal() -> None:
    previous = install(None, (signal.SIGUSR2,))
    try:
        os.kill(os.getpid(), signal.SIGUSR2)  # the default action would end the process
        assert signal.getsignal(signal.SIGUSR2) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGUSR2, previous[signal.SIGUSR2])


def test_outside_the_main_thread_nothing_is_installed() -> None:
    seen: list[object] = []

    def worker() -> None:
        with on_signals(lambda _s: None, (signal.SIGUSR1,)):
            seen.append(signal.getsignal(signal.SIGUSR1))

    before = signal.getsignal(signal.SIGUSR1)
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [before]


def _wait_with_handlers_inside(box: Any) -> None:
    """The main thread's wait for signals, with a handler's `put` run at every Python call
    made inside it, as a signal arriving just then would run it."""
    inside: list[bool] = []

    def handler_at_each_call(_frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and not inside:
            inside.append(True)
            box.put(signal.SIGTERM)
            inside.pop()

    sys.setprofile(handler_at_each_call)
    try:
        for _ in range(3):
            with contextlib.suppress(queue.Empty):
                box.get(timeout=0.05)
    finally:
        sys.setprofile(None)


@pytest.mark.parametrize(("box", "blocks"), [(inbox, False), (queue.Queue, True)])
def test_a_handler_never_blocks_inside_the_inbox_wait(box: Any, blocks: bool) -> None:
    """`adapter schedule` once ignored a SIGTERM for good: its handler put the signal in a
    `queue.Queue` while the main thread, inside that queue's `get`, held its lock. The inbox
    takes no lock a Python frame holds; a Queue is shown to block, so the probe reaches it."""
    waiter = threading.Thread(target=_wait_with_handlers_inside, args=(box(),), daemon=True)
    waiter.start()
    waiter.join(1.0 if blocks else 30.0)  # a blocked one never ends: it is a daemon
    assert waiter.is_alive() is blocks


# A signal that lands just before the main thread blocks interrupts no call of it, as one
# delivered to another thread does: its handler waits for the main thread's next bytecode.
WAITING_FOR_THE_STOP = """
import signal, sys, threading
from adapter import signals
stop = threading.Event()
signal.signal(signal.SIGUSR1, lambda *_: stop.set())  # only the handler stops the node
node = threading.Thread(target=stop.wait)  # a node thread waiting for the stop
node.start()
threading.Timer(0.2, signal.pthread_kill, (node.ident, signal.SIGUSR1)).start()
node.join() if sys.argv[1] == "plain" else signals.join(node)
print("stopped", flush=True)
"""


@pytest.mark.parametrize(("wait", "ends"), [("sliced", True), ("plain", False)])
def test_a_signal_that_interrupts_no_wait_still_stops_a_sliced_join(wait: str, ends: bool) -> None:
    """`adapter worker` once sat 60 s after SIGINT in `Thread.join()`: the signal came in
    just before the main thread blocked, so it interrupted nothing, and the handler that sets
    the stop its node threads wait for never ran. `signals.join` waits in slices; a plain
    join is shown to wait for good, so the probe reaches the case."""
    assert _stopped(WAITING_FOR_THE_STOP, wait, ends) is ends


def _stopped(probe: str, wait: str, ends: bool) -> bool:
    """Whether `probe` (run as `python -c probe wait`) printed "stopped": within 30 s where it
    should end, 3 s where it should not (then it is killed)."""
    proc = subprocess.Popen([sys.executable, "-c", probe, wait], stdout=subprocess.PIPE, text=True)
    try:
        out, _ = proc.communicate(timeout=30 if ends else 3)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return "stopped" in out


def test_a_sliced_result_returns_the_value_and_the_jobs_own_timeout() -> None:
    def slow() -> int:
        time.sleep(0.6)  # past two slices
        return 7

    with ThreadPoolExecutor(1) as pool:
        assert signals.result(pool.submit(slow)) == 7
        late = pool.submit(lambda: (_ for _ in ()).throw(TimeoutError("the job's own")))
        with pytest.raises(TimeoutError, match="the job's own"):
            signals.result(late)  # not taken for a slice that ran out


def test_a_sliced_get_waits_past_empty_slices() -> None:
    box: queue.SimpleQueue[int] = queue.SimpleQueue()
    threading.Timer(0.6, box.put, (5,)).start()
    assert signals.get(box) == 5


# granian's main loop and workers wait on an Event with no timeout, which we cannot slice; the
# stop signal here reaches another of the process's threads, so it interrupts no call of the
# main thread and its handler (which sets that Event) waits for the main thread's next bytecode.
WAITING_ON_AN_EVENT = """
import signal, sys, threading, time
from adapter import signals
stop = threading.Event()
signal.signal(signal.SIGUSR1, lambda *_: stop.set())  # as granian's handlers: set the Event
if sys.argv[1] == "nudged":
    signals.nudge_main()
def deliver_here():
    time.sleep(0.2)
    signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)  # to this thread, not main
threading.Thread(target=deliver_here, daemon=True).start()
stop.wait()
print("stopped", flush=True)
"""


@pytest.mark.parametrize(("wait", "ends"), [("nudged", True), ("plain", False)])
def test_a_nudged_main_thread_acts_on_a_signal_another_thread_took(wait: str, ends: bool) -> None:
    """`adapter serve --server granian` stopped late (a worker killed 40 s after SIGTERM) in
    about one suite run of ten: granian waits on an Event with no timeout in each process's
    main thread. `signals.nudge_main` interrupts that wait every SLICE, so a pending handler
    runs; without it the wait is shown to outlast the signal, so the probe reaches the case."""
    assert _stopped(WAITING_ON_AN_EVENT, wait, ends) is ends
