"""Per-host pacing (rate, Crawl-delay, concurrency) and health (retries, backoff, pauses).

A `Pacer` is consulted by the fetcher before every request. This one holds
within one process; the scale-out workers put a store-backed pacer in front
of it so the rate to a host holds however many processes run. Its clock is
injected (`adapter.http.clock`), so its waits can be tested on virtual time.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Protocol

from adapter.http import connections
from adapter.http.clock import SYSTEM_CLOCK, Clock


class Pacer(Protocol):
    """What the fetcher, robots.txt and a node's loop ask of a host's pace."""

    def slot(self, host: str) -> AbstractContextManager[None]:
        """Block until a request to `host` may start; hold a concurrency slot."""
        ...

    def turn(self, host: str) -> Turn:
        """What this pacer knows of `host`'s turns (other processes' starts are not known)."""
        ...

    def sent(self, host: str, when: float) -> None:
        """The request let go by `slot` was written at `when` (monotonic): a request that
        left late moves the next start on."""
        ...

    def hold(self, host: str, seconds: float) -> None:
        """The host asked for a pause (Retry-After): no request starts before it ends."""
        ...

    def set_crawl_delay(self, host: str, seconds: float) -> bool:
        """robots.txt's Crawl-delay for `host`: widens its interval, never narrows it.
        False when this pacer keeps no pace (so the delay is not reported as honoured)."""
        ...

    def close(self) -> None:
        """Let go of what the pacer holds (a store-backed pacer's connection)."""
        ...


@dataclass(frozen=True, slots=True)
class Turn:
    """A host's turns as one pacer knows them, in monotonic seconds."""

    last: float  # its latest request start (-inf: none yet)
    next: float  # the earliest the next may start
    waiting: int  # callers inside `slot` not let go yet (their turn or a free slot to come)
    interval: float  # between starts (rate or Crawl-delay)


NO_TURN = Turn(float("-inf"), 0.0, 0, 0.0)


class Waiting:
    """Per host, how many callers wait inside a pacer's `slot`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}

    def __call__(self, host: str) -> int:
        return self._count.get(host, 0)

    @contextmanager
    def inside(self, host: str) -> Iterator[None]:
        """Counted from entry until the block ends (before the caller's request goes)."""
        with self._lock:
            self._count[host] = self._count.get(host, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._count[host] -= 1


class HostPacer:
    """Minimum interval between request starts per host, plus a concurrency cap."""

    def __init__(
        self, requests_per_second: float = 2.0, concurrency: int = 2, clock: Clock | None = None
    ) -> None:
        """`clock`: by default the process watchdog's, which the fetcher reads when it tells
        `sent` a request's time: the two must agree."""
        if requests_per_second <= 0 or concurrency < 1:
            raise ValueError("requests_per_second must be > 0 and concurrency >= 1")
        self._clock = connections.WATCHDOG.clock if clock is None else clock
        self._interval = 1.0 / requests_per_second
        self._concurrency = concurrency
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}
        self._delay: dict[str, float] = {}
        self._sems: dict[str, threading.BoundedSemaphore] = {}
        self._last: dict[str, float] = {}
        self._waiting = Waiting()

    def set_crawl_delay(self, host: str, seconds: float) -> bool:
        """robots.txt Crawl-delay: widens the interval for that host, never narrows it.

        The next start, set at the old pace, moves on by the difference.
        """
        with self._lock:
            before = self.interval(host)
            self._delay[host] = max(0.0, seconds)
            if host in self._next:
                self._next[host] += max(0.0, self.interval(host) - before)
        return True

    def close(self) -> None:
        pass  # holds nothing outside the process

    def interval(self, host: str) -> float:
        return max(self._interval, self._delay.get(host, 0.0))

    def turn(self, host: str) -> Turn:
        with self._lock:
            last = self._last.get(host, float("-inf"))
            return Turn(last, self._next.get(host, 0.0), self._waiting(host), self.interval(host))

    def sent(self, host: str, when: float) -> None:
        """A request to `host` left at `when` (monotonic): the next waits an interval after it."""
        with self._lock:
            self._next[host] = max(self._next.get(host, 0.0), when + self.interval(host))

    def hold(self, host: str, seconds: float) -> None:
        """The host asked for a pause (Retry-After): no request starts before it ends."""
        with self._lock:
            self._next[host] = max(self._next.get(host, 0.0), self._clock.monotonic() + seconds)

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        with self._lock:
            sem = self._sems.setdefault(host, threading.BoundedSemaphore(self._concurrency))
        with ExitStack() as held:
            with self._waiting.inside(host):
                held.enter_context(sem)
                self._wait_turn(host)
            yield

    def _wait_turn(self, host: str) -> None:
        while True:
            with self._lock:
                now = self._clock.monotonic()
                due = self._next.get(host, 0.0)
                if now >= due:
                    self._next[host] = now + self.interval(host)
                    self._last[host] = now
                    return
                wait = due - now
            self._clock.sleep(wait)


class NoPacer:
    """For `check-dataset`: one person, a handful of requests (a retry still waits its
    Retry-After, in `adapter.http.retry`)."""

    def turn(self, host: str) -> Turn:
        return NO_TURN

    def sent(self, host: str, when: float) -> None:
        pass

    def hold(self, host: str, seconds: float) -> None:
        pass

    def set_crawl_delay(self, host: str, seconds: float) -> bool:
        return False

    def close(self) -> None:
        pass

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        yield


class HostHealth:
    """Consecutive failures per host; a host that keeps failing is paused for the run.

    A paused host costs nothing more: its URLs fail at once with a finding,
    while other hosts go on.
    """

    def __init__(self, failures_before_pause: int) -> None:
        self._threshold = failures_before_pause
        self._failures: dict[str, int] = {}
        self._paused: dict[str, str] = {}
        self._lock = threading.Lock()

    def succeeded(self, host: str) -> None:
        with self._lock:
            self._failures.pop(host, None)

    def failed(self, host: str, reason: str) -> None:
        with self._lock:
            count = self._failures.get(host, 0) + 1
            self._failures[host] = count
        if count >= self._threshold:
            why = f"{count} failed fetches in a row (host_failures_before_pause)"
            self.pause(host, f"{why}, last: {reason}")

    def pause(self, host: str, reason: str) -> None:
        with self._lock:
            self._paused.setdefault(host, reason)

    def paused(self, host: str) -> str | None:
        with self._lock:
            return self._paused.get(host)

    def paused_hosts(self) -> dict[str, str]:
        with self._lock:
            return dict(self._paused)


def backoff_delay(base: float, attempt: int) -> float:
    """Exponential backoff with jitter: base * 2^attempt * [0.5, 1.5)."""
    delay: float = base * (2**attempt)
    return delay * (0.5 + random.random())  # jitter, not crypto


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds asked by a Retry-After header: delta-seconds or an HTTP-date; None if unusable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (SYSTEM_CLOCK.time() if now is None else now))
