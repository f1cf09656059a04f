"""Per-host pacing: requests per second, Crawl-delay and concurrency, across threads.

A `Pacer` is consulted by the fetcher before every request. This one holds
within one process; the scale-out workers put a store-backed pacer in front
of it so the rate to a host holds however many processes run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol


class Pacer(Protocol):
    def slot(self, host: str) -> AbstractContextManager[None]:
        """Block until a request to `host` may start; hold a concurrency slot."""
        ...


class HostPacer:
    """Minimum interval between request starts per host, plus a concurrency cap."""

    def __init__(self, requests_per_second: float = 2.0, concurrency: int = 2) -> None:
        if requests_per_second <= 0 or concurrency < 1:
            raise ValueError("requests_per_second must be > 0 and concurrency >= 1")
        self._interval = 1.0 / requests_per_second
        self._concurrency = concurrency
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}
        self._delay: dict[str, float] = {}
        self._sems: dict[str, threading.BoundedSemaphore] = {}

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        """robots.txt Crawl-delay: widens the interval for that host, never narrows it."""
        with self._lock:
            self._delay[host] = max(0.0, seconds)

    def interval(self, host: str) -> float:
        return max(self._interval, self._delay.get(host, 0.0))

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        with self._lock:
            sem = self._sems.setdefault(host, threading.BoundedSemaphore(self._concurrency))
        with sem:
            while True:
                with self._lock:
                    now = time.monotonic()
                    due = self._next.get(host, 0.0)
                    if now >= due:
                        self._next[host] = now + self.interval(host)
                        break
                    wait = due - now
                time.sleep(wait)
            yield


class NoPacer:
    """For `check-dataset`: one person, a handful of requests."""

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        yield
