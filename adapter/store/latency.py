"""How long the store's write transactions take, per process, for the operator's metrics.

`Store.write` observes every transaction (connect, statements, commit);
`adapter.service.metrics` turns the tally into a Prometheus histogram at
scrape time. A slow store is the first thing to rule out when a sync slows
down, and without this an operator has only the run's total duration.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field

WRITE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class LatencySnapshot:
    """Cumulative counts per upper bound (the last is +Inf), their sum and total."""

    cumulative: list[tuple[float, int]]
    total_seconds: float
    count: int


@dataclass
class Latency:
    """A fixed-bucket histogram per store dialect, safe to observe from any thread."""

    bounds: tuple[float, ...] = WRITE_BUCKETS
    _counts: dict[str, list[int]] = field(default_factory=dict)
    _sums: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def observe(self, dialect: str, seconds: float) -> None:
        slot = bisect.bisect_left(self.bounds, seconds)
        with self._lock:
            counts = self._counts.setdefault(dialect, [0] * (len(self.bounds) + 1))
            counts[slot] += 1
            self._sums[dialect] = self._sums.get(dialect, 0.0) + seconds

    def snapshot(self) -> dict[str, LatencySnapshot]:
        with self._lock:
            copied = {d: (list(c), self._sums[d]) for d, c in self._counts.items()}
        out: dict[str, LatencySnapshot] = {}
        for dialect, (counts, total) in copied.items():
            running, cumulative = 0, []
            for bound, n in zip((*self.bounds, float("inf")), counts, strict=True):
                running += n
                cumulative.append((bound, running))
            out[dialect] = LatencySnapshot(cumulative, total, running)
        return out


WRITES = Latency()
