"""The change log behind listObjects, on both engines: a CN paging by `start` while syncs
write never misses an object; every change is one entry at its dateSysMetadataModified;
a policy change updates every live record; an upgraded store keeps what it published."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import pytest
from sqlalchemy import select

from adapter.dataone.records import Candidate, dataset_candidate
from adapter.models import SyncRecord
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.ledger import Applied, RecordDefaults, apply_candidates, archive_page
from adapter.store.listing import Window
from adapter.store.policy import apply_policy
from tests.support import stores

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
NODE = "urn:node:LOG"
DEFAULTS = RecordDefaults(NODE, "MD5", "http://orcid.org/0000-0002-1825-0097", "CN=rh")
MS = timedelta(milliseconds=1)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store.open(store_url)
    yield s
    s.close()


def dataset(n: int, name: str = "v1") -> Candidate:
    doc = {"@type": "Dataset", "name": name, "identifier": f"doi:10.5072/d{n}"}
    return dataset_candidate(doc, f"10.5072/d{n}", f"https://r/{n}")


def write(store: Store, *cands: Candidate) -> Applied:
    with store.write() as conn:
        return apply_candidates(conn, DEFAULTS, list(cands))


def log(store: Store, node: str = NODE) -> list[tuple[datetime, str]]:
    lg = t.sysmeta_log
    with store.read() as conn:
        rows = conn.execute(
            select(lg.c.stamp, lg.c.pid).where(lg.c.node_id == node).order_by(lg.c.stamp, lg.c.pid)
        ).all()
    return [(t.utc(stamp), pid) for stamp, pid in rows]


def changes(
    store: Store, node_id: str = NODE, *, start: int = 0, count: int = 1000, **window: Any
) -> tuple[int, list[SyncRecord]]:
    """`Store.list_changes` for a window given by its filters."""
    return store.list_changes(Window(node_id, **window), start=start, count=count)


def pages(
    lister: object, *, from_date: datetime | None, page: int, between: object = None
) -> list[SyncRecord]:
    """A CN harvest: the count=0 probe, then pages by `start`; `between` runs after page 1."""
    total = lister(NODE, from_date=from_date, count=0)[0]  # type: ignore[operator]
    seen: list[SyncRecord] = []
    while len(seen) < total:
        got = lister(NODE, from_date=from_date, start=len(seen), count=page)[1]  # type: ignore[operator]
        if not got:
            break
        seen.extend(got)
        if between is not None and len(seen) == page:
            between()  # type: ignore[operator]
    return seen


def test_the_change_log_lists_every_object_when_a_sync_runs_between_pages(store: Store) -> None:
    """The same harvest over the change log: every object, and the changes come next time."""
    for n in range(5):
        write(store, dataset(n))
    new: list[str] = []

    def sync() -> None:
        new.extend(write(store, dataset(0, "v2")).versions)
        with store.write() as conn:
            new.extend(archive_page(conn, NODE, "https://r/3"))

    first = pages(partial(changes, store), from_date=None, page=2, between=sync)
    assert [r.pid for r in first[:5]] == [dataset(n).pid for n in range(5)]  # created order
    newest = max(r.date_modified for r in first)
    second = pages(partial(changes, store), from_date=newest + MS, page=2)
    listed = {(r.pid, r.date_modified) for r in first + second}
    every = store.list_objects(NODE)[1]
    assert len(every) == 6 and new[0] in {r.pid for r in every}
    assert {(r.pid, r.date_modified) for r in every} <= listed  # each latest change seen
    stamps = [r.date_modified for r in first + second]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


def test_an_object_is_listed_once_at_its_first_change_in_the_window(store: Store) -> None:
    write(store, dataset(1))
    write(store, dataset(2))
    write(store, dataset(1, "v2"))  # d1's first object changes again (obsoletedBy)
    total, listed = changes(store)
    assert total == 3
    assert [r.pid for r in listed] == [dataset(1).pid, dataset(2).pid, dataset(1, "v2").pid]
    head = store.get_record(NODE, dataset(1).pid)
    assert head is not None and listed[0].date_modified < head.date_modified
    later = changes(store, from_date=listed[2].date_modified)[1]
    # from the new version's creation on: it, then the old head's obsoletedBy
    assert [r.pid for r in later] == [dataset(1, "v2").pid, dataset(1).pid]
    assert later[1].date_modified == head.date_modified
    assert changes(store, to_date=listed[1].date_modified)[0] == 1  # toDate <
    assert changes(store, identifier="doi:10.5072/d1")[0] == 2
    assert changes(store, format_id="text/csv")[0] == 0
    assert changes(store, "urn:node:OTHER")[0] == 0


def test_every_change_is_one_log_entry_at_its_date(store: Store) -> None:
    write(store, dataset(1))
    write(store, dataset(1, "v2"))
    with store.write() as conn:
        archive_page(conn, NODE, "https://r/1")
    entries = log(store)
    stamps = [s for s, _ in entries]
    assert stamps == sorted(stamps) and len(set(stamps)) == 4  # strictly increasing
    # create d1, create v2 + obsoletedBy of d1 (one transaction), archive v2
    assert sorted(p for _, p in entries) == sorted(
        [dataset(1).pid, dataset(1).pid, dataset(1, "v2").pid, dataset(1, "v2").pid]
    )
    for rec in store.list_objects(NODE)[1]:  # the record's date is its newest entry
        assert rec.date_modified == max(s for s, p in entries if p == rec.pid)


def test_a_policy_change_updates_every_live_record_once(store: Store) -> None:
    write(store, dataset(1))
    write(store, dataset(2))
    write(store, dataset(2, "v2"))
    with store.write() as conn:
        archive_page(conn, NODE, "https://r/1")
    before = {r.pid: r for r in store.list_objects(NODE)[1]}
    first = json.dumps({"access": ["public"], "rights_holder": "CN=rh"})
    changed = json.dumps({"access": ["CN=me"], "rights_holder": "CN=new"})
    with store.write() as conn:
        assert apply_policy(conn, NODE, first, "CN=rh") == 0  # first seen: only remembered
    with store.write() as conn:
        assert apply_policy(conn, NODE, first, "CN=rh") == 0
    entries = len(log(store))
    with store.write() as conn:
        assert apply_policy(conn, NODE, changed, "CN=new") == 2  # d2 and its new version
    after = {r.pid: r for r in store.list_objects(NODE)[1]}
    assert set(after) == set(before)  # no new object
    live = {pid for pid, r in before.items() if not r.archived}
    assert len(live) == 2
    for pid, rec in after.items():
        old = before[pid]
        assert rec.submitter == old.submitter  # immutable in DataONE
        if pid in live:
            assert rec.serial_version == old.serial_version + 1
            assert rec.date_modified > max(r.date_modified for r in before.values())
            assert rec.rights_holder == "CN=new"
        else:
            assert rec == old
    newest = max(r.date_modified for r in before.values())
    assert {r.pid for r in changes(store, from_date=newest + MS)[1]} == live
    assert len(log(store)) == entries + 2
    with store.write() as conn:
        assert apply_policy(conn, NODE, changed, "CN=new") == 0  # once
    write(store, dataset(3))
    made = store.get_record(NODE, dataset(3).pid)
    assert made is not None and made.date_modified > max(r.date_modified for r in after.values())


def test_an_upgraded_store_lists_what_it_published_in_the_same_order(store_url: str) -> None:
    s = Store.open(store_url)
    for n in range(4):
        write(s, dataset(n))
    write(s, dataset(1, "v2"))
    with s.write() as conn:
        archive_page(conn, NODE, "https://r/2")
    before = s.list_objects(NODE)[1]  # by dateSysMetadataModified, as the old listing was
    with s.write() as conn:
        stores.drop_change_log(conn)
        stores.stamp_version(conn, stores.version_of("sysmeta_log") - 1)
    s.close()
    upgraded = stores.upgraded(store_url)
    assert stores.version_of("sysmeta_log") in upgraded
    s = Store.open(store_url, create=False)
    try:
        assert s.list_objects(NODE)[1] == before  # PIDs, dates, flags: nothing changed
        total, listed = changes(s)
        assert total == len(before) and listed == before  # one entry each, the same order
        assert not [r for r in listed if r.archived and r.pid != dataset(2).pid]
        assert [(r.date_modified, r.pid) for r in listed] == log(s)
        # the triggers work after the upgrade: a new version appends two entries
        write(s, dataset(0, "v2"))
        assert len(log(s)) == len(before) + 2
        newest = before[-1].date_modified
        assert {r.pid for r in changes(s, from_date=newest + MS)[1]} == {
            dataset(0).pid,
            dataset(0, "v2").pid,
        }
        assert s.upgrade() == []
    finally:
        s.close()


def test_concurrent_writers_append_in_commit_order(store_url: str) -> None:
    """Two writers at once (a lock on PostgreSQL, one writer on SQLite): every entry a reader
    sees is newer than every entry it saw before, so a CN's offsets never shift."""
    s = Store.open(store_url)
    for n in range(6):
        write(s, dataset(n))
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(first: int) -> None:
        try:
            for round_ in range(12):
                for n in range(first, 6, 2):
                    write(s, dataset(n, f"r{round_}"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            stop.set()

    threads = [threading.Thread(target=writer, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    seen: list[tuple[datetime, str]] = []
    while not stop.is_set() or any(th.is_alive() for th in threads):
        now = log(s)
        assert now[: len(seen)] == seen  # appended only
        seen = now
    for thread in threads:
        thread.join()
    assert not errors
    final = log(s)
    stamps = [stamp for stamp, _ in final]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    s.close()
