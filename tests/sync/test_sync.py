"""A full sync over real HTTP of a fixture site whose pages change between runs.

The site (fixtures/sites/sync-change) is copied to tmp_path and edited between
runs: a page unchanged but with a moved lastmod (304 on the conditional GET),
an edited page (new version), a page whose view counter changes (a volatile
property: nothing written), a withdrawn page (410: archived), a page dropped
from the sitemap (archived after two complete runs), a new page, a page with no
DOI, a second page with an existing DOI, and a page with an ISO metadata copy.
Each synced Dataset also has a resource map, checked against its heads after each run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from adapter.api.sysmeta import sysmeta_xml
from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT
from adapter.models import SyncRecord
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import frontier_rows
from adapter.sync.outcome import RunSummary
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.d1schemas import pyxb_parse, validate_types
from tests.support.fixture_server import SITES, SiteServer, start_site, stop
from tests.support.packages import assert_packages_true

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
NODE_ID = "urn:node:SYNCTEST"


class Site:
    """A copy of a fixture site in tmp_path, served over HTTP, editable between runs."""

    def __init__(self, name: str, tmp: Path) -> None:
        self.root = tmp / "sites" / name
        shutil.copytree(SITES / name, self.root)
        self.servers = start_site(name, tmp / "sites")
        self.server: SiteServer = self.servers[0]

    def url(self, path: str) -> str:
        return self.server.url(path)

    def edit(self, path: str, old: str, new: str) -> None:
        file = self.root / path
        text = file.read_text("utf-8")
        assert old in text, f"{old!r} not in {path}"
        file.write_text(text.replace(old, new), "utf-8")

    def rule(self, path: str, **values: object) -> None:
        rules = json.loads((self.root / "_headers.json").read_text())
        rules[path] = {**rules.get(path, {}), **values}
        (self.root / "_headers.json").write_text(json.dumps(rules))

    def requests(self, path: str) -> list[dict[str, str]]:
        return [r.headers for r in self.server.log if r.path == path]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    s = Site("sync-change", tmp_path)
    yield s
    stop(s.servers)


def node_for(site: Site) -> NodeSettings:
    return quick_node(
        site.url("/sitemap.xml"),
        NODE_ID,
        dataone={"sync_metadata_copy": True},
        politeness={"requests_per_second": 200, "concurrency": 1},
        sync={"archive_after_missing_runs": 2, "volatile_properties": ["interactionStatistic"]},
        # these pages test versions, not requirements: most have no ISO metadata copy, which
        # the default dataone profile requires (tests/sync/test_profile_change.py tests it)
        checks={"profile": "mnlite"},
    )


def records_by_source(store: Store, maps: bool = False) -> dict[str, list[SyncRecord]]:
    """Records by the last segment of their source URL; resource maps only with `maps`."""
    out: dict[str, list[SyncRecord]] = {}
    for rec in store.list_objects(NODE_ID, count=1000)[1]:
        if (rec.format_id == RESOURCE_MAP_FORMAT) != maps:
            continue
        key = rec.source_url.rsplit("/", 1)[-1]
        out.setdefault(key, []).append(rec)
    return out


def run(config: AdapterConfig, node: NodeSettings) -> RunSummary:
    summary = run_node(config, node)
    assert summary.status == "ok", summary.as_dict()
    return summary


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_pages_that_change_between_runs(site: Site, store_url: str) -> None:
    node = node_for(site)
    config = AdapterConfig(store_url=store_url, nodes=(node,))

    # -- run 1: everything is new ---------------------------------------------------
    first = run(config, node)
    assert (first.pages_seen, first.due, first.fetched) == (8, 8, 8)
    # 6 Datasets, 1 ISO copy, and a resource map for each Dataset
    assert (first.new_objects, first.new_versions, first.archived) == (13, 0, 0)
    assert first.not_harvestable.get("sync/duplicate-doi") == 1
    assert first.pages_not_harvestable == 2  # no-doi and the mirror page
    store = Store.open(store_url, create=False)
    by_page = records_by_source(store)
    assert sorted(by_page) == [
        "counter",
        "delisted",
        "edited",
        "stable",
        "with-iso",
        "with-iso.xml",
        "withdrawn",
    ]
    assert by_page["stable"][0].series_id == "doi:10.5072/sync.stable"
    iso = by_page["with-iso.xml"][0]
    assert iso.format_id == "http://www.isotc211.org/2005/gmd"
    assert iso.series_id == "doi:10.5072/sync.iso#iso19139"
    assert iso.describes_pid == by_page["with-iso"][0].pid
    after_first = {r.pid: r for recs in by_page.values() for r in recs}
    packages = assert_packages_true(store, NODE_ID)
    assert packages["doi:10.5072/sync.iso"].documented == {iso.pid}
    mirror = next(r for r in frontier_rows(store, NODE_ID) if r.url.endswith("stable-mirror"))
    assert mirror.last_status == "not-harvestable"

    # -- run 2: edits on the site -----------------------------------------------------
    site.edit("sitemap.xml", "stable</loc><lastmod>2024-01-01", "stable</loc><lastmod>2024-02-01")
    site.edit("sitemap.xml", "edited</loc><lastmod>2024-01-01", "edited</loc><lastmod>2024-02-01")
    site.edit("dataset/edited.html", "version one", "version two")
    site.rule("/dataset/edited", etag='"edited-v2"')
    site.edit("sitemap.xml", "counter</loc><lastmod>2024-01-01", "counter</loc><lastmod>2024-02-01")
    site.edit("dataset/counter.html", '"userInteractionCount": 17', '"userInteractionCount": 18')
    site.edit(
        "sitemap.xml", "withdrawn</loc><lastmod>2024-01-01", "withdrawn</loc><lastmod>2024-02-01"
    )
    site.rule("/dataset/withdrawn", status=410, body="<html><body>Withdrawn</body></html>")
    site.edit(
        "sitemap.xml",
        "  <url><loc>https://repo.example/dataset/delisted</loc>"
        "<lastmod>2024-01-01</lastmod></url>\n",
        "",
    )
    site.edit(
        "sitemap.xml",
        "</urlset>",
        "  <url><loc>https://repo.example/dataset/fresh</loc>"
        "<lastmod>2024-02-01</lastmod></url>\n</urlset>",
    )
    second = run(config, node)
    assert second.pages_seen == 8  # delisted gone, fresh new
    assert (second.due, second.fetched, second.not_modified, second.unchanged) == (5, 5, 1, 1)
    # each Dataset change comes with its resource map's: fresh (new), edited (a version),
    # withdrawn (archived)
    assert (second.new_objects, second.new_versions, second.archived, second.gone) == (2, 2, 2, 1)
    assert site.requests("/dataset/stable")[-1].get("if-none-match") == '"stable-v1"'
    by_page = records_by_source(store)
    v1, v2 = sorted(by_page["edited"], key=lambda r: r.date_uploaded)
    old = after_first[v1.pid]
    assert v2.obsoletes == v1.pid and v1.obsoleted_by == v2.pid and v2.obsoleted_by is None
    assert v1.date_uploaded == old.date_uploaded and v1.size == old.size
    assert v1.checksum == old.checksum and v1.obsoletes is None
    assert v1.date_modified > old.date_modified and v1.serial_version == old.serial_version + 1
    assert len(by_page["counter"]) == 1  # the view counter made no version
    counter = store.get_record(NODE_ID, by_page["counter"][0].pid, with_bytes=True)
    assert counter is not None and counter.object_bytes is not None
    assert b'"userInteractionCount":17' in counter.object_bytes
    assert by_page["withdrawn"][0].archived
    assert not by_page["delisted"][0].archived  # missing once: not yet
    assert by_page["stable"][0] == after_first[by_page["stable"][0].pid]  # untouched
    assert by_page["fresh"][0].series_id == "doi:10.5072/sync.fresh"
    assert assert_packages_true(store, NODE_ID)["doi:10.5072/sync.edited"].aggregated == {v2.pid}
    edited_v1, edited_v2 = sorted(
        records_by_source(store, maps=True)["edited"], key=lambda r: r.date_uploaded
    )
    assert (
        edited_v2.obsoletes == edited_v1.pid
        and edited_v2.series_id == "doi:10.5072/sync.edited#resourcemap"
    )

    # -- run 3: nothing changed; the delisted page is missing a second time --------------
    third = run(config, node)
    assert (third.due, third.fetched, third.new_objects, third.archived) == (0, 0, 0, 2)
    by_page = records_by_source(store)
    assert by_page["delisted"][0].archived
    assert records_by_source(store, maps=True)["delisted"][0].archived
    assert_packages_true(store, NODE_ID)
    fourth = run(config, node)
    assert (fourth.fetched, fourth.archived, fourth.new_objects) == (0, 0, 0)

    # -- the whole store, as DataONE will see it ----------------------------------------------
    total, every = store.list_objects(NODE_ID, count=1000)
    # 9 objects of the site's, and 8 resource maps (7 Datasets, one edited)
    assert total == 17 and len({r.pid for r in every}) == 17
    stamps = [r.date_modified for r in every]
    assert len(set(stamps)) == len(stamps)  # strictly increasing per node
    assert not {r.series_id for r in every} & {r.pid for r in every}
    for rec in every:
        xml = sysmeta_xml(rec, node)
        validate_types(xml)
        assert pyxb_parse(xml).identifier.value() == rec.pid
    events = [(e.event, e.pid) for e in store.outbox(NODE_ID)]
    assert [e for e, _ in events].count("create") == 15
    assert ("update", v2.pid) in events and ("update", edited_v2.pid) in events
    archives = [p for e, p in events if e == "archive"]
    maps = records_by_source(store, maps=True)
    assert archives == [
        by_page["withdrawn"][0].pid,
        maps["withdrawn"][0].pid,
        by_page["delisted"][0].pid,
        maps["delisted"][0].pid,
    ]
    assert [r.status for r in store.runs(NODE_ID)] == ["ok"] * 4
    store.close()


def test_a_metadata_copy_that_fails_leaves_the_dataset_synced(site: Site, tmp_path: Path) -> None:
    node = quick_node(
        site.url("/sitemap.xml"),
        NODE_ID,
        dataone={"sync_metadata_copy": True},
        politeness={"requests_per_second": 200, "concurrency": 1},
        limits={"max_metadata_bytes": 64},  # the ISO file is larger
        checks={"profile": "mnlite"},  # as node_for: versions, not requirements
    )
    url = stores.sqlite_url(tmp_path, "cap.db")
    run(AdapterConfig(store_url=url, nodes=(node,)), node)
    store = Store.open(url, create=False)
    by_page = records_by_source(store)
    assert "with-iso" in by_page and "with-iso.xml" not in by_page
    row = next(r for r in frontier_rows(store, NODE_ID) if r.url.endswith("/with-iso"))
    with store.read() as conn:
        report = json.loads(
            conn.execute(
                select(t.frontier.c.last_report).where(t.frontier.c.id == row.id)
            ).scalar_one()
        )
    [failed] = [f for f in report["findings"] if f["code"] == "sync/metadata-copy-failed"]
    # about the link, named with its property: the landing page answered
    assert failed["url"] == site.url("/meta/with-iso.xml")
    assert failed["where"].startswith("$.encoding")
    assert "(encoding contentUrl)" in failed["message"] and "64" in failed["message"]
    store.close()


def test_pages_robots_txt_disallows_are_never_fetched(site: Site, tmp_path: Path) -> None:
    site.edit("robots.txt", "Allow: /", "Allow: /\nDisallow: /dataset/no-doi")
    node = node_for(site)
    url = stores.sqlite_url(tmp_path, "robots.db")
    config = AdapterConfig(store_url=url, nodes=(node,))
    first = run(config, node)
    second = run(config, node)
    assert site.requests("/dataset/no-doi") == []
    assert first.errors == second.errors == 0
    assert first.new_objects == 13  # 6 Datasets, their resource maps and 1 ISO copy


TWO_DATASETS = """<!DOCTYPE html><html><head><title>Two datasets</title>
<script type="application/ld+json">
{"@context": "https://schema.org/", "@graph": [
 {"@type": "Dataset", "@id": "https://repo.example/dataset/pair#a", "name": "Pair, part A",
  "description": "First of two Datasets on one page.", "url": "https://repo.example/dataset/pair",
  "identifier": "doi:10.5072/sync.pair.a", "dateModified": "2024-01-01"},
 {"@type": "Dataset", "@id": "https://repo.example/dataset/pair#b", "name": "Pair, part B",
  "description": "Second of two Datasets on one page.", "url": "https://repo.example/dataset/pair",
  "identifier": "doi:10.5072/sync.pair.b", "dateModified": "2024-01-01"}
]}
</script></head><body><h1>Two datasets</h1></body></html>
"""


def test_two_datasets_on_one_page_are_two_series_archived_together(
    site: Site, tmp_path: Path
) -> None:
    (site.root / "dataset" / "pair.html").write_text(TWO_DATASETS, "utf-8")
    site.rule("/dataset/pair", file="dataset/pair.html")
    site.edit(
        "sitemap.xml",
        "</urlset>",
        "  <url><loc>https://repo.example/dataset/pair</loc>"
        "<lastmod>2024-01-01</lastmod></url>\n</urlset>",
    )
    node = node_for(site)
    url = stores.sqlite_url(tmp_path, "pair.db")
    config = AdapterConfig(store_url=url, nodes=(node,))
    run(config, node)
    store = Store.open(url, create=False)
    pair = records_by_source(store)["pair"]
    assert sorted(r.series_id or "" for r in pair) == [
        "doi:10.5072/sync.pair.a",
        "doi:10.5072/sync.pair.b",
    ]
    site.edit("sitemap.xml", "pair</loc><lastmod>2024-01-01", "pair</loc><lastmod>2024-03-01")
    site.rule("/dataset/pair", status=404, body="<html><body>Not here</body></html>")
    assert run(config, node).archived == 4  # the two Datasets and their resource maps
    assert all(r.archived for r in records_by_source(store)["pair"])
    store.close()
