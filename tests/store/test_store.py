"""The store on both engines: schema and migrations, records and their version chain,
the outbox, runs, sync failures and the frontier. SQLite files in tmp_path and the
real PostgreSQL (a fresh schema per test)."""

from __future__ import annotations

import gc
import os
import threading
import warnings
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Connection, inspect, select, text, update

from adapter.dataone.records import Candidate, dataset_candidate, metadata_candidate
from adapter.errors import StoreError
from adapter.models import Link, SitemapEntry
from adapter.store import claims, migrations
from adapter.store import frontier as fr
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.ledger import (
    Applied,
    RecordDefaults,
    apply_candidates,
    archive_page,
    next_stamp,
)
from tests.support import stores
from tests.support.stores import sqlite_url

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
blank_store_url = stores.blank_store_url  # a store never opened, for creating one
NODE = "urn:node:TEST"
DEFAULTS = RecordDefaults(NODE, "MD5", "http://orcid.org/0000-0002-1825-0097", "CN=rh")


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store.open(store_url)
    yield s
    s.close()


def dataset(n: int, name: str = "v1", url: str | None = None) -> Candidate:
    doc = {"@type": "Dataset", "name": name, "identifier": f"doi:10.5072/d{n}"}
    return dataset_candidate(doc, f"10.5072/d{n}", url or f"https://r/{n}")


def write(store: Store, *cands: Candidate) -> Applied:
    with store.write() as conn:
        return apply_candidates(conn, DEFAULTS, list(cands))


# -- schema -------------------------------------------------------------------


def test_open_creates_the_schema_once_and_checks_it(blank_store_url: str) -> None:
    with pytest.raises(StoreError, match="adapter db upgrade"):
        Store.open(blank_store_url, create=False)
    s = Store.open(blank_store_url)
    assert s.version() == migrations.LATEST
    assert s.upgrade() == []  # nothing left to apply
    s.close()
    with closing(Store.open(blank_store_url, create=False)) as again:
        assert again.version() == migrations.LATEST


def test_migrations_run_only_the_missing_steps(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store.open(store_url).close()

    def add_note(conn: Connection) -> None:
        conn.execute(text("ALTER TABLE runs ADD COLUMN note TEXT"))

    monkeypatch.setattr(
        migrations,
        "MIGRATIONS",
        [*migrations.MIGRATIONS, (migrations.LATEST + 1, "runs.note", add_note)],
    )
    monkeypatch.setattr(migrations, "LATEST", migrations.LATEST + 1)
    with pytest.raises(StoreError, match="schema version"):
        Store.open(store_url, create=False)
    s = Store.open(store_url)
    assert s.version() == migrations.LATEST
    with s.read() as conn:
        assert "note" in {c["name"] for c in inspect(conn).get_columns("runs")}
    assert s.upgrade() == []
    s.close()


def test_a_store_newer_than_the_adapter_is_refused(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store.open(store_url).close()
    monkeypatch.setattr(migrations, "LATEST", 0)
    monkeypatch.setattr(migrations, "MIGRATIONS", [])
    gc.collect()  # earlier tests' garbage is not this test's
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(StoreError, match="newer than this adapter"):
            Store.open(store_url)
        gc.collect()  # a refused store's connections are closed, not left to the collector
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)], [
        str(w.message) for w in seen
    ]


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    s = Store.open(sqlite_url(tmp_path))
    with s.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


def _temp_files() -> list[str]:
    """SQLite's open temporary files (unlinked at once, so seen only as this process's fds)."""
    targets = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:  # closed since the listing
            continue
    return [t for t in targets if "etilqs_" in t]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd")
def test_a_write_keeps_its_statement_journal_in_memory(tmp_path: Path) -> None:
    """A statement that may fail halfway, in a transaction that changed pages before it,
    journals those pages to undo itself; past 64 KiB SQLite spilled that to a file."""
    s = Store.open(sqlite_url(tmp_path))
    others = set(_temp_files())  # another store's in this process, not this one's
    try:
        with s.write() as conn:
            conn.exec_driver_sql("CREATE TABLE spill (x TEXT UNIQUE)")
            big = "x" * 500
            for i in range(1000):
                conn.exec_driver_sql("INSERT INTO spill VALUES (?)", (f"{i}{big}",))
            conn.exec_driver_sql("UPDATE spill SET x = x || 'y'")  # a UNIQUE may abort it
            assert set(_temp_files()) - others == set()
    finally:
        s.close()


def test_bad_store_urls_are_store_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a store URL"):
        Store.open("not a url")
    with pytest.raises(StoreError, match="only sqlite"):
        Store.open("mysql://u@h/db")


# -- records --------------------------------------------------------------------


def test_a_changed_dataset_is_a_new_version_that_obsoletes_the_head(store: Store) -> None:
    v1, v2 = dataset(1, "v1"), dataset(1, "v2")
    assert write(store, v1).created == [v1.pid]
    assert write(store, v1).unchanged == [v1.series_id]
    before = store.get_record(NODE, v1.pid)
    assert write(store, v2).versions == [v2.pid]
    old = store.get_record(NODE, v1.pid)
    new = store.get_record(NODE, v2.pid, with_bytes=True)
    assert before is not None and old is not None and new is not None
    assert new.obsoletes == v1.pid and old.obsoleted_by == v2.pid
    assert new.object_bytes == v2.object_bytes
    assert old.series_id == new.series_id == "doi:10.5072/d1"
    # the old record's sysmeta changed: a later stamp and serial version; immutables kept
    assert old.date_modified > new.date_uploaded >= before.date_modified
    assert old.serial_version == before.serial_version + 1
    for name in (
        "size",
        "checksum",
        "checksum_algorithm",
        "submitter",
        "obsoletes",
        "date_uploaded",
        "node_id",
        "format_id",
    ):
        assert getattr(old, name) == getattr(before, name)
    assert store.resolve_sid(NODE, "doi:10.5072/d1") == v2.pid
    assert store.resolve_sid(NODE, "doi:10.5072/none") is None
    assert [e.event for e in store.outbox(NODE)] == ["create", "update"]


def test_the_same_doi_on_another_page_is_foreign_and_not_interleaved(store: Store) -> None:
    write(store, dataset(1, "v1", "https://r/a"))
    result = write(store, dataset(1, "other", "https://r/b"))
    assert result.foreign == [("doi:10.5072/d1", "https://r/a")]
    assert store.count_records(NODE) == 1


def test_content_going_back_to_an_older_version_is_a_new_head_with_a_new_pid(
    store: Store,
) -> None:
    """A -> B -> A: DataONE must serve A again, under a PID of its own (was: the revert
    was dropped and B stayed the head)."""
    a, b = dataset(1, "a"), dataset(1, "b")
    write(store, a)
    write(store, b)
    again = write(store, a)
    assert again.reverted == ["doi:10.5072/d1"]
    third = a.pid + ".2"
    assert again.versions == [third]
    assert store.count_records(NODE) == 3
    assert store.resolve_sid(NODE, "doi:10.5072/d1") == third
    head = store.get_record(NODE, third, with_bytes=True)
    assert head is not None and head.object_bytes == a.object_bytes
    first = store.get_record(NODE, a.pid)
    assert first is not None and head.obsoletes == b.pid and head.checksum == first.checksum
    assert write(store, a).unchanged == ["doi:10.5072/d1"]
    write(store, b)
    assert store.resolve_sid(NODE, "doi:10.5072/d1") == b.pid + ".2"


def test_a_page_restored_after_archiving_is_a_new_live_head(store: Store) -> None:
    a = dataset(1, "a")
    write(store, a)
    with store.write() as conn:
        assert archive_page(conn, NODE, "https://r/1") == [a.pid]
    back = write(store, a)  # the same bytes again
    assert back.restored == ["doi:10.5072/d1"]
    head = store.get_record(NODE, store.resolve_sid(NODE, "doi:10.5072/d1") or "")
    assert head is not None and not head.archived and head.obsoletes == a.pid
    old = store.get_record(NODE, a.pid)
    assert old is not None and old.archived and old.obsoleted_by == head.pid


def test_a_series_follows_its_doi_to_a_new_url_when_the_old_page_left(store: Store) -> None:
    old = dataset(1, "a", "https://r/a")
    write(store, old)
    assert write(store, dataset(1, "a", "https://r/b")).foreign
    with store.write() as conn:
        archive_page(conn, NODE, "https://r/a")  # the old URL answered 404
    moved = write(store, dataset(1, "a", "https://r/b"))
    assert moved.moved == [("doi:10.5072/d1", "https://r/a")]
    head = store.get_record(NODE, moved.versions[0])
    assert head is not None and not head.archived and head.source_url == "https://r/b"
    assert head.obsoletes == old.pid
    with store.write() as conn:  # the series left the old page: nothing of it to archive
        assert archive_page(conn, NODE, "https://r/a") == []


def test_a_page_missing_from_the_sitemaps_lets_its_series_move(store: Store) -> None:
    fr.upsert_entries(store, NODE, 1, [entry(1)])
    write(store, dataset(1, "a", "https://r/1"))
    assert write(store, dataset(1, "a", "https://r/new")).foreign
    fr.upsert_entries(store, NODE, 2, [entry(2)])
    fr.count_missing(store, NODE, 2, threshold=5)  # https://r/1 missing once
    assert write(store, dataset(1, "a", "https://r/new")).moved


def test_two_nodes_never_share_a_pid_or_a_series_id(store: Store) -> None:
    other = RecordDefaults("urn:node:OTHER", "MD5", "s", "rh")
    a = dataset(1, "a")
    write(store, a)
    with store.write() as conn:
        got = apply_candidates(conn, other, [a])
    assert got.other_node == [("doi:10.5072/d1", NODE)] and not got.created
    twin = dataset_candidate({"@type": "Dataset", "name": "a"}, "10.5072/twin", "https://o/1")
    mine = dataset_candidate({"@type": "Dataset", "name": "a"}, "10.5072/mine", "https://r/9")
    write(store, mine)
    with store.write() as conn:
        created = apply_candidates(conn, other, [twin]).created
    assert created == [mine.pid + ".2"]  # the same bytes, another node: another PID
    assert store.count_records("urn:node:OTHER") == 1


def test_archive_unlisted_archives_only_what_the_page_no_longer_lists(store: Store) -> None:
    from adapter.store.ledger import archive_unlisted

    one, two = dataset(1, "a", "https://r/p"), dataset(2, "a", "https://r/p")
    write(store, one, two)
    with store.write() as conn:
        got = archive_unlisted(conn, NODE, "https://r/p", frozenset({one.series_id}))
    assert got == [(two.pid, two.series_id)]
    kept = store.get_record(NODE, one.pid)
    assert kept is not None and not kept.archived
    assert [e.event for e in store.outbox(NODE)][-1] == "archive"


def test_archive_marks_the_head_and_is_one_way(store: Store) -> None:
    v1, v2 = dataset(1, "v1"), dataset(1, "v2")
    write(store, v1)
    write(store, v2)
    with store.write() as conn:
        assert archive_page(conn, NODE, "https://r/1") == [v2.pid]
    with store.write() as conn:
        assert archive_page(conn, NODE, "https://r/1") == []
    head = store.get_record(NODE, v2.pid)
    assert head is not None and head.archived
    old = store.get_record(NODE, v1.pid)
    assert old is not None and not old.archived
    assert [e.event for e in store.outbox(NODE)] == ["create", "update", "archive"]
    assert store.count_records(NODE) == 2  # nothing deleted


def test_metadata_copy_points_at_its_dataset(store: Store) -> None:
    ds = dataset(1)
    meta = metadata_candidate(
        b"<gmd:MD_Metadata/>",
        "http://www.isotc211.org/2005/gmd",
        ds.series_id,
        "https://r/1",
        "https://r/1.xml",
    )
    write(store, ds, meta)
    rec = store.get_record(NODE, meta.pid)
    assert rec is not None and rec.describes_pid == ds.pid
    assert rec.series_id == "doi:10.5072/d1#iso19139" and rec.media_type == "text/xml"
    assert rec.source_url == "https://r/1.xml"


def test_stamps_increase_strictly_even_when_the_clock_goes_back(store: Store) -> None:
    future = datetime.now(UTC) + timedelta(hours=1)
    with store.write() as conn:
        next_stamp(conn, NODE)
        conn.execute(
            update(t.node_clock).where(t.node_clock.c.node_id == NODE).values(last_stamp=future)
        )
    with store.write() as conn:
        a = next_stamp(conn, NODE)
        b = next_stamp(conn, NODE)
    assert a == future + timedelta(milliseconds=1) and b == a + timedelta(milliseconds=1)
    with store.write() as conn:
        other = next_stamp(conn, "urn:node:OTHER")
    assert other < future  # per node


def test_list_objects_filters_and_pages_stably(store: Store) -> None:
    for n in range(7):
        write(store, dataset(n))
    write(store, dataset(3, "v2"))
    total, page = store.list_objects(NODE)
    assert total == 8
    keys = [(r.date_modified, r.pid) for r in page]
    assert keys == sorted(keys) and len(set(keys)) == 8
    assert all(r.object_bytes is None for r in page)
    pages = [store.list_objects(NODE, start=s, count=3)[1] for s in (0, 3, 6)]
    assert [r.pid for p in pages for r in p] == [r.pid for r in page]
    middle = page[3].date_modified
    assert store.list_objects(NODE, from_date=middle)[0] == 5  # >=
    assert store.list_objects(NODE, to_date=middle)[0] == 3  # <
    naive = middle.replace(tzinfo=None)  # naive means UTC
    assert store.list_objects(NODE, from_date=naive)[0] == 5
    assert store.list_objects(NODE, identifier="doi:10.5072/d3")[0] == 2
    assert store.list_objects(NODE, identifier=page[0].pid)[0] == 1
    assert store.list_objects(NODE, format_id="science-on-schema.org/Dataset;ld+json")[0] == 8
    assert store.list_objects(NODE, format_id="text/csv")[0] == 0
    assert store.list_objects("urn:node:OTHER")[0] == 0
    assert store.list_objects(NODE, count=0) == (8, [])


def test_concurrent_page_writes_do_not_collide(store: Store) -> None:
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for n in range(5):
                write(store, dataset(k * 100 + n))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    _, recs = store.list_objects(NODE)
    stamps = [r.date_modified for r in recs]
    assert len(recs) == 20 and len(set(stamps)) == 20  # strictly increasing per node


# -- failures, runs, outbox -----------------------------------------------------------------


def test_sync_failures_are_kept(store: Store) -> None:
    xml = '<error name="SynchronizationFailed" errorCode="500" detailCode="5000"/>'
    store.log_sync_failure(NODE, "sha256:ab", xml)
    store.log_sync_failure(NODE, None, xml)
    got = store.sync_failures(NODE)
    assert [(f.pid, f.xml) for f in got] == [(None, xml), ("sha256:ab", xml)]
    assert store.sync_failures("urn:node:OTHER") == []


def test_run_history(store: Store) -> None:
    first = store.start_run(NODE)
    store.finish_run(first, "ok", {"pages_seen": 3})
    second = store.start_run(NODE)
    runs = store.runs(NODE)
    assert [r.id for r in runs] == [second, first]
    assert runs[0].status == "running" and runs[0].finished_at is None
    assert runs[1].summary == {"pages_seen": 3} and runs[1].finished_at is not None
    assert store.runs("urn:node:OTHER") == []
    assert len(store.runs(limit=1)) == 1


def test_outbox_is_ordered_and_acked(store: Store) -> None:
    for n in range(3):
        write(store, dataset(n))
    events = store.outbox(NODE)
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert store.ack(NODE, up_to_seq=events[0].seq) == 1
    assert [e.seq for e in store.outbox(NODE)] == [e.seq for e in events[1:]]
    assert len(store.outbox(NODE, pending_only=False)) == 3
    assert store.ack(NODE) == 2
    assert store.outbox(NODE) == []


# -- frontier ------------------------------------------------------------------------------------


def entry(n: int, lastmod: datetime | None = None) -> SitemapEntry:
    link = Link(f"https://doi.org/10.5072/d{n}", "cite-as", f"https://r/{n}", "signmap")
    return SitemapEntry(f"https://r/{n}", "https://r/sitemap.xml", lastmod, (link,))


def finish_all(store: Store, owner: str) -> None:
    rows = claims.claim_due(store, NODE, owner, batch=100, lease=timedelta(minutes=5))
    with store.write() as conn:
        for row in rows:
            assert fr.finish_page(conn, row, owner, fr.PageUpdate("harvested", 200, etag='"e"'))


def test_frontier_marks_new_moved_and_stale_pages_due(store: Store) -> None:
    day = datetime(2024, 1, 1, tzinfo=UTC)
    assert fr.upsert_entries(store, NODE, 1, [entry(1, day), entry(2, day), entry(1, day)]) == 2
    rows = fr.frontier_rows(store, NODE)
    assert rows[0].links[0].rel == "cite-as" and rows[0].lastmod == day
    finish_all(store, "w1")
    fr.upsert_entries(store, NODE, 2, [entry(1, day), entry(2, day + timedelta(days=1))])
    due = claims.claim_due(store, NODE, "w1", batch=10, lease=timedelta(minutes=5))
    assert [r.url for r in due] == ["https://r/2"]
    assert due[0].etag == '"e"'
    claims.release_claims(store, NODE, "w1")
    assert fr.mark_stale_due(store, NODE, timedelta(hours=1)) == 0
    assert fr.mark_stale_due(store, NODE, timedelta(seconds=0)) == 1  # page 1 now stale too


def test_claims_exclude_each_other_until_the_lease_ends(store: Store) -> None:
    fr.upsert_entries(store, NODE, 1, [entry(n) for n in range(5)])
    a = claims.claim_due(store, NODE, "a", batch=3, lease=timedelta(minutes=5))
    b = claims.claim_due(store, NODE, "b", batch=3, lease=timedelta(minutes=5))
    assert len(a) == 3 and len(b) == 2 and not {r.id for r in a} & {r.id for r in b}
    assert claims.claim_due(store, NODE, "c", batch=3, lease=timedelta(minutes=5)) == []
    with store.write() as conn:  # a page finished by someone else's claim is not written
        assert not fr.finish_page(conn, a[0], "b", fr.PageUpdate("harvested"))
    claims.release_claims(store, NODE, "a")
    assert len(claims.claim_due(store, NODE, "c", batch=5, lease=timedelta(seconds=-1))) == 3
    expired = claims.claim_due(store, NODE, "e", batch=5, lease=timedelta(minutes=5))
    assert len(expired) == 3  # c's leases had run out
    assert claims.release_stale_claims(store, NODE) == 0


def test_claims_of_a_dead_local_process_are_released(store: Store) -> None:
    import subprocess
    import sys

    fr.upsert_entries(store, NODE, 1, [entry(1)])
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = claims.owner_id().split(":")[0] + f":{proc.stdout.strip()}:9"
    assert claims.claim_due(store, NODE, dead, batch=5, lease=timedelta(hours=1))
    assert claims.claim_due(store, NODE, "other", batch=5, lease=timedelta(hours=1)) == []
    assert claims.release_stale_claims(store, NODE) == 1
    assert len(claims.claim_due(store, NODE, "other", batch=5, lease=timedelta(hours=1))) == 1


def test_missing_pages_are_counted_per_complete_run(store: Store) -> None:
    fr.upsert_entries(store, NODE, 1, [entry(1), entry(2)])
    assert fr.count_missing(store, NODE, 1, threshold=2) == []
    fr.upsert_entries(store, NODE, 2, [entry(1)])
    assert fr.count_missing(store, NODE, 2, threshold=2) == []
    fr.upsert_entries(store, NODE, 3, [entry(1)])
    gone = fr.count_missing(store, NODE, 3, threshold=2)
    assert [r.url for r in gone] == ["https://r/2"]
    with store.write() as conn:
        fr.mark_removed(conn, gone[0].id)
    fr.upsert_entries(store, NODE, 4, [entry(1)])
    assert fr.count_missing(store, NODE, 4, threshold=2) == []  # removed pages are done
    finish_all(store, "w")
    fr.upsert_entries(store, NODE, 5, [entry(1), entry(2)])  # it came back: look again
    due = claims.claim_due(store, NODE, "w", batch=10, lease=timedelta(minutes=1))
    assert [r.url for r in due] == ["https://r/2"] and due[0].missing_runs == 0


def test_a_store_of_the_previous_version_keeps_what_it_published(store_url: str) -> None:
    """Version 2 (before the identifier registry): its PIDs and series stay as they were,
    nothing is archived, and a later write never reuses one of them."""
    s = Store.open(store_url)
    a, b = dataset(1, "a"), dataset(1, "b")
    write(s, a)
    write(s, b)
    before = s.list_objects(NODE)[1]
    with s.write() as conn:  # as the previous version left it: no registry, and a PID
        conn.execute(text("DROP TABLE identifiers"))  # two nodes shared (the old bug)
        conn.execute(text("DROP TABLE access_log"))  # version 3's, after version 2
        stores.drop_change_log(conn)  # a later version's
        shared = conn.execute(select(t.records).where(t.records.c.pid == a.pid)).mappings().one()
        copy = {k: v for k, v in shared.items() if k != "id"} | {"node_id": "urn:node:OLD"}
        conn.execute(t.records.insert().values(copy))
        conn.execute(t.schema_version.delete())
        conn.execute(
            t.schema_version.insert().values(
                version=2, description="v2", applied_at=datetime.now(UTC)
            )
        )
    s.close()
    assert stores.upgraded(store_url) == list(range(3, migrations.LATEST + 1))
    s = Store.open(store_url, create=False)
    assert s.list_objects(NODE)[1] == before
    assert s.get_record("urn:node:OLD", a.pid) is not None
    assert [e.event for e in s.outbox(NODE)] == ["create", "update"]
    again = write(s, a)  # the revert: a new PID, not the one published first
    assert again.versions == [a.pid + ".2"]
    with s.write() as conn:
        other = RecordDefaults("urn:node:OTHER", "MD5", "s", "rh")
        assert apply_candidates(conn, other, [dataset(1, "a")]).other_node
    s.close()


def test_a_version_1_store_is_upgraded_in_place(store_url: str) -> None:
    s = Store.open(store_url)
    with s.write() as conn:  # make it look like a store written by schema version 1
        conn.execute(text("ALTER TABLE runs DROP COLUMN owner"))
        conn.execute(t.schema_version.delete())
        conn.execute(
            t.schema_version.insert().values(
                version=1, description="v1", applied_at=datetime.now(UTC)
            )
        )
    s.close()
    with pytest.raises(StoreError, match="schema version 1"):
        Store.open(store_url, create=False)
    assert stores.upgraded(store_url) == list(range(2, migrations.LATEST + 1))
    again = Store.open(store_url, create=False)
    with again.read() as conn:
        assert "owner" in {c["name"] for c in inspect(conn).get_columns("runs")}
    assert again.start_run(NODE, "host:1") > 0
    again.close()


def test_version_10_adds_the_notify_lists_indexes_by_node(store_url: str) -> None:
    """/ops/notify?node=X pages a node's notifications newest first from an index."""
    s = Store.open(store_url)
    with s.write() as conn:  # as version 9 left it
        for name in ("ix_notify_inbox_node", "ix_notify_outbox_node"):
            conn.execute(text(f"DROP INDEX {name}"))
        conn.execute(t.schema_version.delete())
        conn.execute(
            t.schema_version.insert().values(
                version=9, description="v9", applied_at=datetime.now(UTC)
            )
        )
    s.close()
    assert stores.upgraded(store_url) == [10] == [migrations.LATEST]
    s = Store.open(store_url, create=False)
    with s.read() as conn:
        for table in ("notify_inbox", "notify_outbox"):
            indexes = {i["name"]: i["column_names"] for i in inspect(conn).get_indexes(table)}
            assert indexes[f"ix_{table}_node"] == ["node_id", "id"]
        if conn.dialect.name == "sqlite":  # the page's rows found by the index, not sorted
            plan = conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT * FROM notify_outbox WHERE node_id = 'n' "
                "ORDER BY id DESC LIMIT 100 OFFSET 99900"
            ).all()
            steps = " ".join(str(row[-1]) for row in plan)
            assert "ix_notify_outbox_node" in steps and "TEMP B-TREE" not in steps, steps
    s.close()


def test_obsoleted_by_and_archived_change_only_one_way(store: Store) -> None:
    from adapter.store.ledger import _bump

    v1 = dataset(1)
    write(store, v1)
    pid = v1.pid
    with store.write() as conn:
        assert _bump(conn, NODE, pid, obsoleted_by="sha256:" + "a" * 64)
        assert not _bump(conn, NODE, pid, obsoleted_by="sha256:" + "b" * 64)  # already set
        assert _bump(conn, NODE, pid, archived=True)
        assert not _bump(conn, NODE, pid, archived=True)
        assert not _bump(conn, NODE, pid)
    rec = store.get_record(NODE, pid)
    assert rec is not None and rec.obsoleted_by == "sha256:" + "a" * 64 and rec.archived
    assert rec.serial_version == 3  # created at 1, two real changes


def test_two_workers_creating_one_series_at_once_make_one_owner(store_url: str) -> None:
    """PostgreSQL, two transactions: the second waits on the seriesId's registry row and,
    once the first commits, sees another page of its node (sync/duplicate-doi), not
    another node."""
    if not store_url.startswith("postgresql"):
        pytest.skip("SQLite has one writer: the two pages cannot overlap")
    store = Store.open(store_url)
    first, second = dataset(1, "a", "https://r/a"), dataset(1, "b", "https://r/b")
    got: list[object] = []
    with store.write() as conn:
        apply_candidates(conn, DEFAULTS, [first])
        worker = threading.Thread(target=lambda: got.append(write(store, second)))
        worker.start()
        with psycopg.connect(store_url.split("?")[0], autocommit=True) as admin:
            while not admin.execute(
                "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE 'INSERT INTO identifiers%%'"
            ).fetchone():
                worker.join(0.01)
                assert worker.is_alive(), got
    worker.join()
    assert got[0].foreign == [("doi:10.5072/d1", "https://r/a")]  # type: ignore[attr-defined]
    assert got[0].other_node == []  # type: ignore[attr-defined]
    assert store.count_records(NODE) == 1
    store.close()
