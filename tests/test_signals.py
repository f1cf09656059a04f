"""adapter.signals: handlers get the signal number, and the old handlers come back."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
from types import FrameType
from typing import Any

import pytest

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
