"""adapter.signals: handlers get the signal number, and the old handlers come back."""

from __future__ import annotations

import os
import signal
import threading

from adapter.signals import install, on_signals


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
