"""A coordinating node harvests while the repository changes, and misses nothing.

DataONE's own `MemberNodeClient_2_0` plays the CN against the served API, the way
D1-SYNC's `ObjectListHarvestTask` does: the `count=0` probe, pages of 2 by `start`
until the probed total, then getSystemMetadata (and get, for a PID it has not
seen) for every listed PID, and the next harvest from the newest
dateSysMetadataModified it listed. Sync runs of the changing fixture site
(fixtures/sites/sync-versions, the scenario of tests/sync/test_versions.py: edit,
revert, 410 and restore, a move, a dropped `encoding`, a changed DOI, a Dataset
the second node of the store publishes too) happen between harvests and between
the pages of one harvest; a policy change (rightsHolder, replication) comes last.
Afterwards the CN's copy of every object's system metadata equals the store's (no
change missed), and its heads are what the site publishes now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import d1_client.mnclient_2_0
import pytest

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.store.db import Store
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.fixture_server import stop
from tests.support.member_node import archive, node_settings, put_dataset, serve_app
from tests.sync.test_sync import Site
from tests.sync.test_versions import (
    AFTER_RUN_ONE,
    JAN,
    MAR,
    NODE_A,
    NODE_B,
    PAGES,
    fourth_run_changes,
    heads,
    published,
    rule,
    second_run_changes,
    sitemap,
)

store_url = stores.store_url  # SQLite and PostgreSQL
MS = timedelta(milliseconds=1)


@dataclass
class CoordinatingNode:
    """What the CN holds of one member node: every object's system metadata and bytes."""

    client: Any
    last_harvested: datetime | None = None
    sysmeta: dict[str, Any] = field(default_factory=dict)
    data: dict[str, bytes] = field(default_factory=dict)
    listed: list[list[str]] = field(default_factory=list)  # PIDs listed, per harvest

    def harvest(
        self, *, to_date: datetime | None = None, between: Callable[[], None] | None = None
    ) -> list[str]:
        """One harvest; `between` runs after the first page (a sync in the middle)."""
        since = None if self.last_harvested is None else self.last_harvested + MS
        total = self.client.listObjects(fromDate=since, toDate=to_date, start=0, count=0).total
        infos: list[Any] = []
        while len(infos) < total:
            page = self.client.listObjects(
                fromDate=since, toDate=to_date, start=len(infos), count=2
            )
            if not page.objectInfo:
                break
            infos.extend(page.objectInfo)
            if between is not None and len(infos) <= 2:
                between()
        dates = [info.dateSysMetadataModified for info in infos]
        assert dates == sorted(dates)  # queued in ascending order, as the CN does
        pids = [info.identifier.value() for info in infos]
        for pid in pids:  # after the listing, as the CN's queue processes them
            self.sysmeta[pid] = self.client.getSystemMetadata(pid)
            if pid not in self.data:
                self.data[pid] = self.client.get(pid).content
        if dates:
            self.last_harvested = max(dates)
        self.listed.append(pids)
        return pids

    def heads(self) -> dict[str, str]:
        """seriesId -> head PID, as the CN sees them (chains checked both ways)."""
        out: dict[str, str] = {}
        for pid, meta in self.sysmeta.items():
            if meta.obsoletes is not None:
                assert self.sysmeta[meta.obsoletes.value()].obsoletedBy.value() == pid
            if meta.obsoletedBy is None:
                sid = meta.seriesId.value()
                assert sid not in out, f"the CN sees two heads for {sid}"
                out[sid] = pid
        return out


def node(site: Site, node_id: str, sitemap_path: str, **dataone: object) -> NodeSettings:
    return quick_node(
        site.url(sitemap_path),
        node_id,
        dataone={"sync_metadata_copy": True, **dataone},
        politeness={"requests_per_second": 500, "concurrency": 1},
        sync={"archive_after_missing_runs": 2},
        # versions, not requirements: most pages have no ISO copy (the dataone profile's)
        checks={"profile": "mnlite"},
    )


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    s = Site("sync-versions", tmp_path)
    yield s
    stop(s.servers)


def with_maps(live: dict[str, str], dead: set[str]) -> tuple[dict[str, str], set[str]]:
    """The series with each Dataset's resource map beside it (a copy's `#...` has none)."""
    maps = {f"{sid}#resourcemap": "" for sid in live if "#" not in sid}
    return live | maps, dead | {f"{sid}#resourcemap" for sid in dead if "#" not in sid}


def assert_cn_is_true(
    cn: CoordinatingNode, store: Store, site: Site, live: dict[str, str], dead: set[str]
) -> None:
    """The CN's view: every object with the store's current system metadata, heads with
    the bytes the site publishes now, archived where the site no longer publishes them.
    Each Dataset's resource map is live and archived with it."""
    live, dead = with_maps(live, dead)
    records = store.list_objects(NODE_A, count=10_000)[1]
    assert set(cn.sysmeta) == {r.pid for r in records}
    for rec in records:  # no change missed: the CN read each object after its last change
        meta = cn.sysmeta[rec.pid]
        assert int(meta.serialVersion) == rec.serial_version, rec.pid
        assert meta.dateSysMetadataModified == rec.date_modified, rec.pid
        assert bool(meta.archived) == rec.archived, rec.pid
        assert (meta.obsoletedBy.value() if meta.obsoletedBy else None) == rec.obsoleted_by
        assert (meta.obsoletes.value() if meta.obsoletes else None) == rec.obsoletes
        assert meta.rightsHolder.value() == rec.rights_holder
    seen = cn.heads()
    assert set(seen) == set(live) | dead
    assert seen == {sid: head.record.pid for sid, head in heads(store, NODE_A).items()}
    for sid, page in live.items():
        assert not cn.sysmeta[seen[sid]].archived, f"{sid} archived"
        if page:
            assert cn.data[seen[sid]] == published(site, page), sid
    for sid in dead:
        assert cn.sysmeta[seen[sid]].archived, f"{sid} still live"


def test_five_objects_pages_of_two_and_a_sync_between_pages(store_url: str) -> None:
    """The reported loss: 5 objects, pages of 2, a new version and an archive between the
    first and second page. Every object is listed, and the next harvest (from the newest
    date listed) brings the changes; the CN's copy of each object is current."""
    store = Store.open(store_url)
    node = node_settings()
    for i in range(5):
        put_dataset(store, node, f"10.5555/ds{i}", f"Dataset {i}")
    first = {r.pid for r in store.list_objects(node.id)[1]}

    def sync() -> None:
        put_dataset(store, node, "10.5555/ds0", "Dataset 0, revised")
        archive(store, node, "https://repo.example/dataset/10.5555/ds2")

    with serve_app(store, [node]) as served:
        client = d1_client.mnclient_2_0.MemberNodeClient_2_0(served.base(node).removesuffix("/v2"))
        cn = CoordinatingNode(client)
        assert first <= set(cn.harvest(between=sync))
        cn.harvest()
    records = store.list_objects(node.id)[1]
    assert len(records) == 6 and set(cn.sysmeta) == {r.pid for r in records}
    for rec in records:
        meta = cn.sysmeta[rec.pid]
        assert int(meta.serialVersion) == rec.serial_version
        assert meta.dateSysMetadataModified == rec.date_modified
    store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_cn_harvesting_while_the_site_changes_misses_nothing(site: Site, store_url: str) -> None:
    b = node(site, NODE_B, "/sitemap-b.xml")
    config = AdapterConfig(store_url=store_url, nodes=(node(site, NODE_A, "/sitemap.xml"), b))

    def run() -> None:
        for settings in config.nodes:
            summary = run_node(config, settings)
            assert summary.status == "ok", summary.as_dict()

    lastmod = dict.fromkeys(PAGES, JAN)
    del lastmod["mirror"]
    sitemap(site, "sitemap.xml", lastmod)
    run()  # run 1: everything new; node B's copy of `shared` is refused
    store = Store.open(store_url, create=False)
    live = dict(AFTER_RUN_ONE)
    dead: set[str] = set()
    with serve_app(store, list(config.nodes)) as served:
        cn = CoordinatingNode(
            d1_client.mnclient_2_0.MemberNodeClient_2_0(
                f"{served.origin}/{config.nodes[0].short_name}", timeout_sec=30
            )
        )
        other = d1_client.mnclient_2_0.MemberNodeClient_2_0(
            f"{served.origin}/{b.short_name}", timeout_sec=30
        )
        assert len(cn.harvest()) == len(with_maps(live, dead)[0])  # one object per series
        assert_cn_is_true(cn, store, site, live, dead)

        # run 2 between the first and second page: edit, withdraw (410), move, drop
        # `encoding`, change a DOI, drop one of two Datasets, a mirror of a live DOI
        second_run_changes(site, lastmod)
        known = set(cn.sysmeta)
        cn.last_harvested = None  # a full re-harvest (a new CN, or a node reset on the CN)
        full = cn.harvest(between=run)  # run 2 between its first and second page
        assert known <= set(full) and len(set(full)) == len(full)
        for sid in (
            "doi:10.5072/ver.back",
            "doi:10.5072/ver.iso#iso19139",
            "doi:10.5072/ver.old",
            "doi:10.5072/ver.pair.b",
        ):
            live.pop(sid)
            dead.add(sid)
        live |= {"doi:10.5072/ver.move": "new-home", "doi:10.5072/ver.new": "renamed"}
        cn.harvest(to_date=datetime.now(UTC) + timedelta(seconds=1))
        assert_cn_is_true(cn, store, site, live, dead)

        # run 3 between pages of a harvest that has pages: revert, restore, a holder gone
        site.edit("dataset/flip.html", "Flip, version B", "Flip, version A")
        rule(site, "/dataset/back", {"file": "dataset/back.html"})
        rule(site, "/dataset/held", {"status": 410, "body": "<html><body>Withdrawn</body></html>"})
        lastmod["flip"] = lastmod["back"] = lastmod["held"] = MAR
        sitemap(site, "sitemap.xml", lastmod)
        known = set(cn.sysmeta)
        cn.last_harvested = None
        full = cn.harvest(between=run)
        assert known <= set(full) and len(set(full)) == len(full)
        dead.discard("doi:10.5072/ver.back")
        live["doi:10.5072/ver.back"] = "back"
        live["doi:10.5072/ver.held"] = "mirror"
        cn.harvest()
        assert_cn_is_true(cn, store, site, live, dead)

        # run 4 in the middle of a harvest again: a changed copy linked again, a DOI moved
        fourth_run_changes(site, lastmod)
        cn.last_harvested = None
        cn.harvest(to_date=datetime.now(UTC) + timedelta(minutes=5), between=run)
        dead.discard("doi:10.5072/ver.iso#iso19139")
        live |= {
            "doi:10.5072/ver.iso#iso19139": "",
            "doi:10.5072/ver.new": "adopter",
            "doi:10.5072/ver.newer": "renamed",
        }
        cn.harvest()
        assert_cn_is_true(cn, store, site, live, dead)
        assert other.listObjects(start=0, count=0).total == 0  # node B published nothing

    # a policy change: the next run updates every live record, and the CN sees each
    before = {r.pid: r for r in store.list_objects(NODE_A, count=10_000)[1]}
    changed = node(
        site,
        NODE_A,
        "/sitemap.xml",
        rights_holder="CN=new-holder,DC=dataone,DC=org",
        replication={"allowed": True, "number_replicas": 2},
    )
    config = AdapterConfig(store_url=store_url, nodes=(changed, b))
    summary = run_node(config, changed)
    live_count = sum(not r.archived for r in before.values())
    assert (summary.policy_updates, summary.new_objects, summary.new_versions) == (live_count, 0, 0)
    with serve_app(store, list(config.nodes)) as served:
        cn.client = d1_client.mnclient_2_0.MemberNodeClient_2_0(
            f"{served.origin}/{changed.short_name}", timeout_sec=30
        )
        updated = cn.harvest()
    # every live record; an object changed twice in the previous window may come again
    # at its later change (the CN read it after that change already: see docs)
    assert {pid for pid, r in before.items() if not r.archived} <= set(updated)
    assert len(set(updated)) == len(updated)
    assert_cn_is_true(cn, store, site, live, dead)
    for pid, rec in before.items():
        meta = cn.sysmeta[pid]
        if rec.archived:
            assert int(meta.serialVersion) == rec.serial_version
        else:
            assert int(meta.serialVersion) == rec.serial_version + 1
            assert meta.rightsHolder.value() == "CN=new-holder,DC=dataone,DC=org"
            assert meta.replicationPolicy.replicationAllowed
        assert meta.submitter.value() == rec.submitter
    store.close()
