"""Process-wide counts of fetch retries and failures by host, for the operator's metrics.

The fetcher tells the tally what happened; `adapter.service.metrics` reads it
at scrape time. Counting here keeps Prometheus out of the HTTP layer, and one
tally per process (not per fetcher) covers every node a scheduler runs.
Hosts are the politeness key (`host:port`), so a label set grows with the
hosts a process talks to, which the node configuration bounds.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from adapter.http.addresses import host_key


@dataclass
class FetchTally:
    """Retries by (host, reason) and failed fetches by (host, finding code)."""

    retries: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def retried(self, url: str, reason: str) -> None:
        self._count(self.retries, url, reason)

    def failed(self, url: str, code: str) -> None:
        self._count(self.failures, url, code)

    def snapshot(self) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
        """Copies of (retries, failures), consistent with each other."""
        with self._lock:
            return dict(self.retries), dict(self.failures)

    def _count(self, counter: Counter[tuple[str, str]], url: str, label: str) -> None:
        host = safe_host(url)
        with self._lock:
            counter[(host, label)] += 1


def safe_host(url: str) -> str:
    """The host key, or "?" for a URL too broken to have one (`http://[::1`)."""
    try:
        return host_key(url)
    except ValueError:
        return "?"


TALLY = FetchTally()
