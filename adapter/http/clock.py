"""The time source and the sleeps of retries, pacing and the fetch watchdog.

Injected, so that what those wait for can be tested on virtual time: a test
hands in a clock whose `sleep` moves its time on at once, and a minute of
Retry-After costs it nothing. The real one is `SYSTEM_CLOCK`.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (deadlines, pacing)."""
        ...

    def time(self) -> float:
        """Seconds since the epoch (an HTTP-date in Retry-After is wall time)."""
        ...

    def sleep(self, seconds: float) -> None: ...

    def wait_until(self, condition: threading.Condition, deadline: float) -> None:
        """`condition.wait()` until `deadline` (on `monotonic`) at most; the caller holds
        `condition` and looks again at what it waits for (a wake-up may come early)."""
        ...


class SystemClock:
    """The machine's clocks."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def wait_until(self, condition: threading.Condition, deadline: float) -> None:
        condition.wait(max(0.0, deadline - time.monotonic()))


SYSTEM_CLOCK: Clock = SystemClock()
