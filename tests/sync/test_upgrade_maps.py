"""Upgrading a live store: resource maps for the Datasets it already published.

A store written by the adapter before resource maps existed (simulated by running
the sync with the map step switched off: that is all the previous version lacked)
holds Datasets, a metadata copy and an archived Dataset. The first run of this
version publishes one map per live Dataset as new objects and touches nothing
else: no new version of an existing object, nothing archived, no record's system
metadata changed; a CN harvest through DataONE's own client from where it had
reached lists exactly the maps.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapter.config.settings import AdapterConfig
from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT
from adapter.store import newpages
from adapter.store.db import Store
from adapter.store.ledger import Applied
from adapter.sync import run as run_module
from adapter.sync import write as write_module
from tests.api.test_server_libclient import MS, client_for, harvest
from tests.support import stores
from tests.support.fixture_server import stop
from tests.support.member_node import serve_app
from tests.support.packages import assert_packages_true
from tests.sync.test_sync import NODE_ID, Site, node_for, run

pytestmark = pytest.mark.slow  # over 1 s (tests/support/timing.py)

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    s = Site("sync-change", tmp_path)
    yield s
    stop(s.servers)


def without_maps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The previous version: no map with a page's writes, none published for old Datasets."""
    monkeypatch.setattr(write_module, "refresh_packages", lambda conn, defaults, url: Applied())
    monkeypatch.setattr(  # pages new to the store, written together: without their maps too
        write_module,
        "write_new_pages",
        lambda conn, defaults, pages, maps: newpages.write_new_pages(conn, defaults, pages, False),
    )
    monkeypatch.setattr(run_module, "publish_missing_packages", lambda store, defaults: iter(()))


def test_the_first_run_after_the_upgrade_publishes_maps_and_touches_nothing_else(
    site: Site, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = node_for(site)
    config = AdapterConfig(store_url=store_url, nodes=(node,))
    without_maps(monkeypatch)
    assert run(config, node).new_objects == 7  # 6 Datasets and an ISO copy, no map
    site.edit(
        "sitemap.xml", "withdrawn</loc><lastmod>2024-01-01", "withdrawn</loc><lastmod>2024-02-01"
    )
    site.rule("/dataset/withdrawn", status=410, body="<html><body>Withdrawn</body></html>")
    assert run(config, node).archived == 1  # archived before the upgrade
    store = Store.open(store_url, create=False)
    before = store.list_objects(NODE_ID, count=1000)[1]
    events_before = store.outbox(NODE_ID)
    assert not any(r.format_id == RESOURCE_MAP_FORMAT for r in before)

    with serve_app(store, [node]) as served:
        client = client_for(served.base(node).removesuffix("/v2"))
        seen = harvest(client, None, datetime.now(UTC) + timedelta(seconds=1), page=3)
        assert len(seen) == 7
        reached = max(h.sysmeta.dateSysMetadataModified for h in seen)

        monkeypatch.undo()  # the upgraded adapter
        upgraded = run(config, node)
        assert (upgraded.new_objects, upgraded.new_versions, upgraded.archived) == (5, 0, 0)
        after = store.list_objects(NODE_ID, count=1000)[1]
        old = {r.pid for r in before}
        assert sorted((r for r in after if r.pid in old), key=lambda r: r.pid) == sorted(
            before, key=lambda r: r.pid
        )  # every field of every record as it was: serialVersion, dates, chains, archived
        maps = [r for r in after if r.pid not in old]
        assert {r.format_id for r in maps} == {RESOURCE_MAP_FORMAT}
        assert {r.series_id for r in maps} == {
            f"doi:10.5072/sync.{name}#resourcemap"
            for name in ("stable", "edited", "counter", "delisted", "iso")
        }  # the withdrawn Dataset, archived before the upgrade, gets none
        new_events = store.outbox(NODE_ID)[len(events_before) :]
        assert store.outbox(NODE_ID)[: len(events_before)] == events_before
        assert sorted((e.event, e.pid) for e in new_events) == sorted(
            ("create", r.pid) for r in maps
        )
        packages = assert_packages_true(store, NODE_ID, archived_have_maps=False)
        iso_copy = next(r.pid for r in before if r.series_id == "doi:10.5072/sync.iso#iso19139")
        assert packages["doi:10.5072/sync.iso"].documented == {iso_copy}

        # the CN's next harvest from where it had reached: the maps, and nothing else
        later = harvest(client, reached + MS, datetime.now(UTC) + timedelta(seconds=1))
        assert sorted(h.pid for h in later) == sorted(r.pid for r in maps)

    again = run(config, node)  # published once: the next run has nothing to add
    assert (again.new_objects, again.new_versions, again.archived) == (0, 0, 0)
    store.close()
