"""Buffered access logging for getLogRecords: `get` hands an event over and moves on.

Events wait in memory and a background thread writes them to the store in
batches (every `FLUSH_SECONDS`, or sooner once `FLUSH_AT` are waiting), so a
read costs a lock and an append, never a write transaction. At most
`MAX_PENDING` events wait: if the store cannot take them (down, locked) the
newest are dropped and counted, never held without bound. getLogRecords
flushes first, so a caller sees its own reads. What the store keeps is
bounded by the retention (`access_log:` in the configuration; `RETENTION` by
default): 90 days and 1,000,000 entries per node. The age limit is applied with
every batch; the entry cap once every `CAP_SECONDS` per process (it walks the
node's newest million entries: at 7,000 reads a second, checked with every
batch of 500 it cost about a third of a core), so a node may hold up to a
minute of reads beyond the cap.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from adapter.config.settings import AccessLogSettings
from adapter.errors import StoreError
from adapter.store.accesslog import AccessEvent, LogRetention

log = logging.getLogger(__name__)

FLUSH_SECONDS = 2.0
FLUSH_AT = 500
MAX_PENDING = 10_000
CAP_SECONDS = 60.0  # how often the sink applies the entry cap (see the module docstring)
RETENTION = LogRetention(keep_days=90, max_entries=1_000_000)


def retention_from(settings: AccessLogSettings) -> LogRetention:
    """The configured retention (`access_log:`)."""
    return LogRetention(keep_days=settings.keep_days, max_entries=settings.max_entries)


Sink = Callable[[Sequence[AccessEvent]], None]


class EventBuffer:
    """Collects access events from request threads; one thread writes them in order."""

    def __init__(self, sink: Sink, *, flush_seconds: float = FLUSH_SECONDS) -> None:
        self._sink = sink
        self._flush_seconds = flush_seconds
        self._pending: list[AccessEvent] = []
        self._lock = threading.Lock()  # guards _pending
        self._writing = threading.Lock()  # one batch at a time, so entries keep their order
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.dropped = 0

    def record(self, event: AccessEvent) -> None:
        with self._lock:
            if len(self._pending) >= MAX_PENDING:
                self.dropped += 1
                return
            self._pending.append(event)
            full = len(self._pending) >= FLUSH_AT
        if full:
            self._wake.set()

    def flush(self) -> None:
        """Write what is waiting; a store error is logged and the batch dropped."""
        with self._writing:
            with self._lock:
                batch, self._pending = self._pending, []
            if not batch:
                return
            try:
                self._sink(batch)
            except StoreError as exc:
                self.dropped += len(batch)
                log.error("%d access log entries could not be stored: %s", len(batch), exc)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="access-log", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the writer and write what is left."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.flush()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._flush_seconds)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # the writer must outlive one bad batch
                log.exception("access log writer failed")


class StoreSink:
    """Writes batches to a store with the retention applied (the entry cap every `cap_seconds`)."""

    def __init__(
        self,
        store: AccessLogStore,
        retention: LogRetention = RETENTION,
        *,
        cap_seconds: float = CAP_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._retention = retention
        self._cap_seconds = cap_seconds
        self._clock = clock
        self._capped_at: float | None = None  # the first batch applies the cap

    def __call__(self, events: Sequence[AccessEvent]) -> None:
        moment = self._clock()
        cap = self._capped_at is None or moment - self._capped_at >= self._cap_seconds
        self._store.append_access_events(events, self._retention, datetime.now(UTC), cap=cap)
        if cap:
            self._capped_at = moment


class AccessLogStore(Protocol):
    """What the sink needs of a store (adapter.store.db.Store provides it)."""

    def append_access_events(
        self,
        events: Sequence[AccessEvent],
        retention: LogRetention,
        now: datetime,
        *,
        cap: bool = True,
    ) -> None: ...
