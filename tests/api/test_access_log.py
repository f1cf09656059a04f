"""The access log's buffer and retention: bounded in memory and in the store, order kept."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

import adapter.api.accesslog
from adapter.api.accesslog import EventBuffer, StoreSink
from adapter.errors import StoreError
from adapter.store.accesslog import AccessEvent, LogQuery, LogRetention, insert_sizes
from adapter.store.db import Store
from tests.support import stores

T0 = datetime(2026, 1, 1, tzinfo=UTC)
store_url = stores.store_url  # the tests that take it run on SQLite and on PostgreSQL


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


def test_a_batch_never_holds_sqlite_s_write_lock_between_statements(tmp_path: Path) -> None:
    """No BEGIN: each INSERT and DELETE takes the file's one write lock by itself, and the
    cap's walk is a plain read, so a busy API never keeps the sync's writer queued."""
    store = Store.open(stores.sqlite_url(tmp_path))
    run: list[str] = []

    @sqlalchemy.event.listens_for(store.engine, "connect")
    def _trace(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.set_trace_callback(run.append)

    store.engine.dispose()  # the next connection is traced
    retention = LogRetention(keep_days=10, max_entries=100)
    store.append_access_events([event(f"p{i:03d}") for i in range(500)], retention, T0)
    assert not [s for s in run if s.split()[0].upper() in ("BEGIN", "COMMIT", "SAVEPOINT")]
    inserts = [s for s in run if s.startswith("INSERT")]
    assert len(inserts) == len(insert_sizes(500)) <= 8  # not one per entry
    assert any(s.startswith("SELECT") and "OFFSET" in s for s in run)  # the cap's walk
    total, kept = store.access_events("urn:node:A", LogQuery(), count=1000)
    assert total == 100 and [e.pid for e in kept] == [f"p{i:03d}" for i in range(400, 500)]
    store.close()


def test_a_large_batch_keeps_its_order_and_dates_on_both_engines(store_url: str) -> None:
    store = Store.open(store_url)
    moments = [T0 + timedelta(microseconds=7 * i) for i in range(700)]  # 256+256+128+...+4
    batch = [event(f"p{i:03d}", moment) for i, moment in enumerate(moments)]
    retention = LogRetention(keep_days=3650, max_entries=650)
    store.append_access_events(batch, retention, T0)
    total, kept = store.access_events("urn:node:A", LogQuery(), count=1000)
    assert total == 650
    assert [(e.pid, e.date_logged) for e in kept] == [(e.pid, e.date_logged) for e in batch[50:]]
    assert [e.entry_id for e in kept] == sorted(e.entry_id for e in kept)
    store.close()


@pytest.mark.parametrize("rows", [0, 1, 7, 255, 256, 500, 10_000])
def test_insert_sizes_cover_the_batch_with_few_distinct_statements(rows: int) -> None:
    sizes = insert_sizes(rows)
    assert sum(sizes) == rows
    assert set(sizes) <= {1 << bit for bit in range(9)}  # at most nine statements to compile
    assert len(sizes) <= rows // 256 + 8
