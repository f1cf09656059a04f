"""A clock on virtual time for retries, pacing and the fetch watchdog (`adapter.http.clock`).

`sleep` records what was asked and moves the time on at once, so a test of a
minute's Retry-After takes no time; `advance` moves it from outside (the
watchdog's deadline passes while a fetch is blocked on a real socket). Each
move wakes whoever waits on the clock in `wait`.
"""

from __future__ import annotations

import threading
import time


class FakeClock:
    def __init__(self, start: float = 1_000_000.0) -> None:  # far from the real clock
        self._now = start
        self._epoch = time.time() - start  # `time()` starts at the real wall time
        self._lock = threading.Lock()
        self._waiting: list[tuple[threading.Condition, float]] = []
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        with self._lock:
            return self._now

    def time(self) -> float:
        return self.monotonic() + self._epoch

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
        self.advance(max(0.0, seconds))

    def advance(self, seconds: float) -> None:
        """Move the time on and wake the waiters whose time has come."""
        with self._lock:
            self._now += seconds
            due = [cond for cond, until in self._waiting if until <= self._now]
        for cond in due:
            with cond:
                cond.notify_all()

    def wait_until(self, condition: threading.Condition, deadline: float) -> None:
        """Until the clock reaches `deadline`, or the condition is notified. The caller holds
        `condition`; the check and the registration under the clock's lock mean a move after
        the caller read the time cannot be missed."""
        with self._lock:
            if deadline <= self._now:
                return
            entry = (condition, deadline)
            self._waiting.append(entry)
        try:
            condition.wait()
        finally:
            with self._lock:
                self._waiting.remove(entry)
