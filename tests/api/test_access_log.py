"""The access log's buffer and retention: bounded in memory and in the store, order kept."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import adapter.api.accesslog
from adapter.api.accesslog import EventBuffer, StoreSink
from adapter.errors import StoreError
from adapter.store.accesslog import AccessEvent, LogQuery, LogRetention
from adapter.store.db import Store
from tests.support import stores

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def event(pid: str, moment: datetime = T0, node_id: str = "urn:node:A") -> AccessEvent:
    return AccessEvent(node_id, pid, "read", "public", "127.0.0.1", "test", moment)


def test_retention_drops_old_entries_and_the_oldest_beyond_the_cap(tmp_path: Path) -> None:
    store = Store.open(stores.sqlite_url(tmp_path))
    retention = LogRetention(keep_days=10, max_entries=5)
    old = [event(f"old{i}", T0 - timedelta(days=11)) for i in range(3)]
    store.append_access_events(old, retention, T0 - timedelta(days=11))
    assert store.access_events("urn:node:A", LogQuery())[0] == 3
    store.append_access_events([event(f"p{i}") for i in range(7)], retention, T0)
    other = [event("elsewhere", node_id="urn:node:B")]
    store.append_access_events(other, retention, T0)
    total, kept = store.access_events("urn:node:A", LogQuery(), count=100)
    assert total == 5
    assert [e.pid for e in kept] == [f"p{i}" for i in range(2, 7)]  # old ones gone, then oldest
    assert store.access_events("urn:node:B", LogQuery())[0] == 1  # another node's cap
    store.close()


def test_buffer_writes_in_order_from_many_threads(tmp_path: Path) -> None:
    store = Store.open(stores.sqlite_url(tmp_path))
    buffer = EventBuffer(StoreSink(store), flush_seconds=0.01)
    buffer.start()

    now = datetime.now(UTC)  # inside the sink's retention

    def reads(worker: int) -> None:
        for i in range(50):
            buffer.record(event(f"w{worker}-{i:02d}", now + timedelta(seconds=i)))

    threads = [threading.Thread(target=reads, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    buffer.close()
    total, kept = store.access_events("urn:node:A", LogQuery(), count=1000)
    assert total == 200 and buffer.dropped == 0
    for worker in range(4):
        mine = [e.pid for e in kept if e.pid.startswith(f"w{worker}-")]
        assert mine == [f"w{worker}-{i:02d}" for i in range(50)]
    store.close()


def test_buffer_is_bounded_when_the_store_cannot_take_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[AccessEvent] = []
    failing = True

    def sink(events: Sequence[AccessEvent]) -> None:
        if failing:
            raise StoreError("store is down")
        written.extend(events)

    monkeypatch.setattr(adapter.api.accesslog, "MAX_PENDING", 10)
    buffer = EventBuffer(sink)
    for i in range(15):
        buffer.record(event(f"p{i}"))
    assert buffer.dropped == 5  # beyond MAX_PENDING while nothing was written
    buffer.flush()  # the store fails: the batch is dropped, not kept for ever
    assert buffer.dropped == 15
    failing = False
    buffer.record(event("after"))
    buffer.flush()
    assert [e.pid for e in written] == ["after"]


def test_the_sink_applies_the_entry_cap_once_per_interval(tmp_path: Path) -> None:
    """The age limit goes with every batch, the entry cap with the first and then per interval."""
    store = Store.open(stores.sqlite_url(tmp_path))
    now = [0.0]
    sink = StoreSink(
        store, LogRetention(keep_days=10, max_entries=5), cap_seconds=60, clock=lambda: now[0]
    )
    listed = datetime.now(UTC)
    sink([event(f"a{i}", listed) for i in range(7)])
    assert store.access_events("urn:node:A", LogQuery())[0] == 5  # the first batch caps
    sink([event(f"b{i}", listed) for i in range(3)])
    sink([event("old", listed - timedelta(days=11))])  # past the age limit: gone at once
    assert store.access_events("urn:node:A", LogQuery())[0] == 8  # the cap waits
    now[0] = 60.0
    sink([event("c", listed)])
    total, kept = store.access_events("urn:node:A", LogQuery(), count=100)
    assert total == 5 and [e.pid for e in kept] == ["a6", "b0", "b1", "b2", "c"]  # the newest
    store.close()
