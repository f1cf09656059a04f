"""Resource maps in the ledger, on SQLite and PostgreSQL: one per live Dataset of a page,
a new version whenever the heads it aggregates change, archived and restored with its
Dataset, never a PID twice. What a map aggregates is read back with DataONE's library."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import d1_common.resource_map
import pytest
from sqlalchemy import inspect, text, update

from adapter.dataone.records import Candidate, metadata_candidate
from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT, Package, pid_for
from adapter.models import SyncRecord
from adapter.store import ledger, migrations
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.ledger import (
    Applied,
    RecordDefaults,
    apply_candidates,
    archive_page,
    archive_unlisted,
)
from adapter.store.packages import pages_without_packages, refresh_packages
from tests.store.test_store import DEFAULTS, NODE, dataset, write
from tests.support import stores
from tests.support.packages import read

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
PAGE = "https://r/1"
MAP_SID = "doi:10.5072/d1#resourcemap"
GMD = "http://www.isotc211.org/2005/gmd"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store.open(store_url)
    yield s
    s.close()


def iso(body: bytes) -> Candidate:
    return metadata_candidate(body, GMD, "doi:10.5072/d1", PAGE, PAGE + ".xml")


def refresh(store: Store, page: str = PAGE, defaults: RecordDefaults = DEFAULTS) -> Applied:
    with store.write() as conn:
        return refresh_packages(conn, defaults, page)


def map_head(store: Store, node: str = NODE) -> SyncRecord:
    pid = store.resolve_sid(node, MAP_SID)
    assert pid is not None
    rec = store.get_record(node, pid, with_bytes=True)
    assert rec is not None and rec.object_bytes is not None
    return rec


def aggregated(store: Store) -> frozenset[str]:
    body = map_head(store).object_bytes
    assert body is not None
    return read(body).aggregated


def test_a_map_of_the_dataset_and_its_copy_then_nothing_until_they_change(store: Store) -> None:
    ds, copy = dataset(1), iso(b"<gmd:MD_Metadata/>")
    write(store, ds, copy)
    made = refresh(store)
    head = map_head(store)
    assert made.created == [head.pid] and made.versions == []
    assert head.pid == pid_for(Package.of(ds.pid, [copy.pid]))
    assert (head.format_id, head.media_type) == (RESOURCE_MAP_FORMAT, "application/rdf+xml")
    assert head.series_id == MAP_SID and head.source_url == PAGE
    got = read(head.object_bytes or b"")
    assert got.pid == head.pid and got.aggregated == {ds.pid, copy.pid}
    assert got.metadata == {ds.pid} and got.documented == {copy.pid}
    events = store.outbox(NODE)
    assert (events[-1].event, events[-1].pid, events[-1].series_id) == ("create", head.pid, MAP_SID)
    before = store.list_objects(NODE)[1]
    assert refresh(store) == Applied()  # the same heads: nothing written, no stamp moved
    assert store.list_objects(NODE)[1] == before and len(store.outbox(NODE)) == len(events)


def test_the_members_decide_a_new_map_never_its_bytes(store: Store) -> None:
    """A map written by another builder (here DataONE's library, its own layout) that
    aggregates the current heads is kept: a re-sync makes no version because bytes differ."""
    ds, copy = dataset(1), iso(b"<gmd:MD_Metadata/>")
    write(store, ds, copy)
    [pid] = refresh(store).created
    theirs = d1_common.resource_map.ResourceMap(
        pid, ds.pid, [copy.pid], ore_software_id="another builder"
    ).serialize_to_transport()
    assert theirs != map_head(store).object_bytes and read(theirs) == read(
        map_head(store).object_bytes or b""
    )
    with store.write() as conn:
        r = t.records
        conn.execute(update(r).where(r.c.pid == pid).values(object_bytes=theirs))
    before = store.list_objects(NODE)[1]
    assert refresh(store) == Applied()
    assert store.list_objects(NODE)[1] == before and map_head(store).object_bytes == theirs


def test_a_page_of_several_datasets_gets_their_maps_together(store: Store) -> None:
    """One page, three Datasets (one with a copy): three maps written by one refresh, each of
    its own Dataset; then one Dataset changes and only its map gets a version."""
    page = [dataset(n, "v1", PAGE) for n in (1, 2, 3)]
    copy = iso(b"<gmd:MD_Metadata/>")  # the copy of doi:10.5072/d1
    write(store, *page, copy)
    made = refresh(store)
    assert len(made.created) == 3 and made.versions == []
    heads = {n: store.resolve_sid(NODE, f"doi:10.5072/d{n}#resourcemap") for n in (1, 2, 3)}
    assert set(made.created) == set(heads.values())
    for n, cand in zip((1, 2, 3), page, strict=True):
        rec = store.get_record(NODE, heads[n] or "", with_bytes=True)
        assert rec is not None and rec.object_bytes is not None
        members = {cand.pid, copy.pid} if n == 1 else {cand.pid}
        assert read(rec.object_bytes).aggregated == members
    stamps = [store.get_record(NODE, pid) for pid in made.created]
    assert len({r.date_modified for r in stamps if r is not None}) == 3  # one stamp each
    changed = dataset(2, "v2", PAGE)
    write(store, changed)
    again = refresh(store)
    assert again.created == [] and len(again.versions) == 1
    new = store.get_record(NODE, again.versions[0], with_bytes=True)
    assert new is not None and new.obsoletes == heads[2]
    assert read(new.object_bytes or b"").aggregated == {changed.pid}


def test_every_change_of_the_heads_is_a_new_map_and_no_pid_comes_back(store: Store) -> None:
    ds, copy = dataset(1, "v1"), iso(b"<gmd:MD_Metadata/>")
    write(store, ds, copy)
    first = refresh(store).created[0]
    ds2 = dataset(1, "v2")  # a new Dataset version: a new map of the new head
    write(store, ds2)
    [second] = refresh(store).versions
    assert aggregated(store) == {ds2.pid, copy.pid}
    old = store.get_record(NODE, first)
    assert old is not None and old.obsoleted_by == second and not old.archived
    assert map_head(store).obsoletes == first

    def listed(*sids: str) -> frozenset[str]:
        return frozenset({"doi:10.5072/d1", MAP_SID, *sids})

    with store.write() as conn:  # the Dataset no longer links its copy: archived
        assert archive_unlisted(conn, NODE, PAGE, listed()) == [(copy.pid, copy.series_id)]
    [third] = refresh(store).versions
    assert aggregated(store) == {ds2.pid}
    alone = Package.of(ds2.pid)
    assert third == pid_for(alone)
    write(store, copy)  # linked again, the same bytes: the copy gets a PID of its own
    copy_again = store.resolve_sid(NODE, copy.series_id)
    assert copy_again == copy.pid + ".2"
    refresh(store)
    assert aggregated(store) == {ds2.pid, copy_again}
    with store.write() as conn:  # and dropped once more: the set {ds2} comes back
        archive_unlisted(conn, NODE, PAGE, listed())
    [fifth] = refresh(store).versions
    assert fifth == pid_for(alone, 2)  # a PID of its own, as for any content that returns
    assert aggregated(store) == {ds2.pid}
    chain = store.series_records(NODE, MAP_SID)
    assert len(chain) == 5 and len({r.pid for r in chain}) == 5


def test_a_map_is_archived_with_its_page_and_restored_with_its_dataset(store: Store) -> None:
    ds = dataset(1)
    write(store, ds)
    first = refresh(store).created[0]
    with store.write() as conn:
        archived = archive_page(conn, NODE, PAGE)
    assert archived == [ds.pid, first]  # the Dataset and its map, nothing left live
    assert refresh(store) == Applied()  # no live Dataset: no map
    write(store, ds)  # the page is back: the Dataset's bytes under a new PID
    [restored] = refresh(store).versions
    head = map_head(store)
    assert head.pid == restored and head.obsoletes == first and not head.archived
    assert aggregated(store) == {ds.pid + ".2"}


def test_a_map_moves_with_its_dataset_to_a_new_page(store: Store) -> None:
    ds = dataset(1, "v1", PAGE)
    write(store, ds)
    first = refresh(store).created[0]
    with store.write() as conn:
        archive_page(conn, NODE, PAGE)  # the old URL went away
    moved = dataset(1, "v1", "https://r/new-home")
    assert write(store, moved).versions  # the series followed its DOI
    [second] = refresh(store, "https://r/new-home").versions
    head = map_head(store)
    assert head.pid == second and head.obsoletes == first
    assert head.source_url == "https://r/new-home"
    assert refresh(store) == Applied()  # the old page owns nothing live


def test_another_nodes_dataset_or_map_series_is_never_written(store: Store) -> None:
    write(store, dataset(1))
    refresh(store)
    other = RecordDefaults("urn:node:OTHER", "MD5", "s", "rh")
    with store.write() as conn:
        assert apply_candidates(conn, other, [dataset(1, "mine")]).other_node
    assert refresh(store, defaults=other) == Applied()
    assert store.count_records("urn:node:OTHER") == 0
    # a map's seriesId another node holds (made up here): the Dataset stays, without a map
    with store.write() as conn:
        taken = ledger.claim_identifier(conn, "urn:node:OTHER", "doi:10.5072/d2#resourcemap", "sid")
        assert taken is None  # claimed: it is the other node's now
    write(store, dataset(2, "x", "https://r/2"))
    assert refresh(store, "https://r/2") == Applied()
    assert store.resolve_sid(NODE, "doi:10.5072/d2#resourcemap") is None


def test_the_pages_whose_live_datasets_have_no_map(store: Store) -> None:
    write(store, dataset(1, "a", "https://r/a"), iso(b"<x/>"))
    write(store, dataset(2, "b", "https://r/b"))
    write(store, dataset(3, "c", "https://r/c"))
    with store.write() as conn:
        archive_page(conn, NODE, "https://r/c")  # archived before the upgrade: no map due
        assert pages_without_packages(conn, NODE) == ["https://r/a", "https://r/b"]
        assert pages_without_packages(conn, NODE, limit=1) == ["https://r/a"]  # in batches,
        assert pages_without_packages(conn, NODE, "https://r/a") == ["https://r/b"]  # onwards
        assert pages_without_packages(conn, "urn:node:OTHER") == []
    refresh(store, "https://r/a")
    with store.write() as conn:
        assert pages_without_packages(conn, NODE) == ["https://r/b"]


def test_the_index_of_a_pages_series_comes_with_an_upgrade(store_url: str) -> None:
    """A page's series are read by source URL on each page write and for each page that
    needs maps: an indexed read, also in a store upgraded from before the index."""
    [step] = [n for n, what, _ in migrations.MIGRATIONS if what.startswith("ix_series_source")]
    s = Store.open(store_url)
    write(s, dataset(1))
    with s.write() as conn:  # as the previous version left it
        conn.execute(text("DROP INDEX ix_series_source"))
        conn.execute(t.schema_version.delete())
        conn.execute(
            t.schema_version.insert().values(
                version=step - 1, description="before", applied_at=datetime.now(UTC)
            )
        )
    before = s.list_objects(NODE)[1]
    s.close()
    assert stores.upgraded(store_url) == list(range(step, migrations.LATEST + 1))
    s = Store.open(store_url, create=False)
    with s.read() as conn:
        assert "ix_series_source" in {i["name"] for i in inspect(conn).get_indexes("series")}
    assert s.list_objects(NODE)[1] == before
    s.close()
