"""A sitegraph node over real HTTP (fixtures/sites/sitegraph), on SQLite and PostgreSQL.

The graph is one JSON-LD document of 18 Datasets (Ocean InfoHub style). Each Dataset
becomes a record of its own without its URL being fetched; the graph is fetched once per
run with a conditional GET: a 304 writes nothing; a changed Dataset gets a new version,
a removed one is archived and the rest are untouched. A broken graph, and one past a
cap, are findings that archive nothing. A catalogue page of references feeds ordinary
landing pages.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT
from adapter.discovery.sitegraph import (
    SITEGRAPH_OVER_LIMIT,
    SITEGRAPH_READ,
    SITEGRAPH_UNREADABLE,
)
from adapter.models import SyncRecord
from adapter.store.db import Store
from adapter.store.frontier import frontier_rows
from adapter.sync.drain import WorkOptions
from adapter.sync.outcome import RunSummary
from adapter.sync.run import run_node
from adapter.sync.worker import work
from tests.support import stores
from tests.support.fixture_server import stop
from tests.sync.test_sync import Site

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
NODE_ID = "urn:node:OIHGRAPH"
GRAPH = "/graph.jsonld"
DATASETS = 18  # distinct Datasets in the fixture graph (a duplicate and an unnamed one aside)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    s = Site("sitegraph", tmp_path)
    yield s
    stop(s.servers)


def node_for(site: Site, *paths: str, **limits: int) -> NodeSettings:
    return quick_node(
        site.url(paths[0] if paths else GRAPH),
        NODE_ID,
        start={"sitegraph_urls": [site.url(p) for p in paths or (GRAPH,)]},
        politeness={"requests_per_second": 200, "concurrency": 1},
        checks={"profile": "mnlite"},
        limits=limits,
    )


def run(store_url: str, node: NodeSettings, status: str = "ok") -> RunSummary:
    summary = run_node(AdapterConfig(store_url=store_url, nodes=(node,)), node)
    assert summary.status == status, summary.as_dict()
    return summary


def heads(store_url: str) -> dict[str, SyncRecord]:
    """The live Dataset records (heads, not archived) by series id."""
    with closing(Store.open(store_url, create=False)) as store:
        records = store.list_objects(NODE_ID, count=1000)[1]
    return {
        r.series_id: r
        for r in records
        if r.obsoleted_by is None
        and not r.archived
        and r.format_id != RESOURCE_MAP_FORMAT
        and r.series_id
    }


def graph_requests(site: Site) -> list[dict[str, str]]:
    return [r.headers for r in site.server.log if r.path == GRAPH and r.method == "GET"]


def edit_graph(site: Site, change: object, etag: str) -> None:
    """Rewrite the graph with `change(graph list)` applied, served under a new ETag."""
    path = site.root / "graph.jsonld"
    doc = json.loads(path.read_text("utf-8"))
    change(doc["@graph"])  # type: ignore[operator]
    path.write_text(json.dumps(doc, indent=1), "utf-8")
    site.rule(GRAPH, etag=etag)


def by_id(graph: list[dict[str, object]], slug: str) -> dict[str, object]:
    return next(n for n in graph if str(n.get("@id", "")).endswith(f"/dataset/{slug}"))


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_each_dataset_of_the_graph_is_a_record_kept_true_across_runs(
    site: Site, store_url: str
) -> None:
    node = node_for(site)

    # -- run 1: every Dataset is new; none of their URLs is fetched ------------------
    first = run(store_url, node)
    assert first.pages_seen == DATASETS and first.due == DATASETS
    assert first.discovery_findings[SITEGRAPH_READ.code] == 1
    live = heads(store_url)
    assert len(live) == DATASETS - 1  # the Dataset without an identifier is not harvestable
    assert first.pages_not_harvestable == 1
    sources = {r.source_url for r in live.values()}
    assert site.url("/dataset/ctd") in sources and site.url("/dataset/turtles") not in sources
    assert len(graph_requests(site)) == 1
    assert not [r for r in site.server.log if r.path.startswith("/dataset/")]
    with closing(Store.open(store_url, create=False)) as store:
        rows = frontier_rows(store, NODE_ID)
    assert len(rows) == DATASETS and all(r.sitemap == site.url(GRAPH) for r in rows)

    # -- run 2: the graph answers 304; nothing is due, nothing written ----------------
    second = run(store_url, node)
    asked = graph_requests(site)[-1]
    assert asked.get("if-none-match") == '"oih-graph-v1"'
    assert second.pages_seen == DATASETS
    assert (second.due, second.fetched, second.new_objects, second.archived) == (0, 0, 0, 0)
    assert heads(store_url) == live

    # -- run 3: one Dataset edited, one removed ---------------------------------------
    def change(graph: list[dict[str, object]]) -> None:
        by_id(graph, "ctd")["description"] = "CTD profiles, reprocessed with the 2024 calibration."
        graph.remove(by_id(graph, "litter"))

    edit_graph(site, change, '"oih-graph-v2"')
    third = run(store_url, node)
    assert third.due == 1 and third.fetched == 1  # only the edited Dataset is checked
    now = heads(store_url)
    ctd, litter = "doi:10.5072/oih.1002", "doi:10.5072/oih.1010"
    assert now[ctd].obsoletes == live[ctd].pid
    assert litter not in now  # archived: its head is no longer live
    with closing(Store.open(store_url, create=False)) as store:
        gone = store.get_record(NODE_ID, live[litter].pid)
    assert gone is not None and gone.archived
    untouched = {sid: r.pid for sid, r in live.items() if sid not in (ctd, litter)}
    assert {sid: now[sid].pid for sid in untouched} == untouched
    assert third.archived >= 1 and third.new_versions >= 1

    # -- run 4: the Dataset comes back, as it was --------------------------------------
    edit_graph(site, lambda g: g.append(json.loads(_litter(site))), '"oih-graph-v3"')
    fourth = run(store_url, node)
    assert litter in heads(store_url) and fourth.fetched == 1


def _litter(site: Site) -> str:
    """The removed Dataset as the fixture publishes it, origin rewritten."""
    original = json.loads(
        (Path(__file__).resolve().parents[2] / "fixtures/sites/sitegraph/graph.jsonld").read_text()
    )
    return site.server.rewrite(json.dumps(by_id(original["@graph"], "litter")))


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_broken_or_oversized_graph_archives_nothing(site: Site, store_url: str) -> None:
    node = node_for(site)
    run(store_url, node)
    live = heads(store_url)

    # a broken graph: a finding, the run cannot start, nothing archived
    (site.root / "graph.jsonld").write_bytes((site.root / "broken.jsonld").read_bytes())
    site.rule(GRAPH, etag='"broken"')
    broken = run(store_url, node, status="failed")
    assert broken.discovery_findings.get(SITEGRAPH_UNREADABLE.code) == 1
    assert broken.message is not None and "no sitegraph could be read" in broken.message
    assert broken.archived == 0 and heads(store_url) == live

    # a maintenance page served with 200 in its place: JSON-LD, but no Dataset in it
    (site.root / "graph.jsonld").write_text(
        "<!DOCTYPE html><html><head><title>Down for maintenance</title>"
        '<script type="application/ld+json">{"@context": "https://schema.org", '
        '"@type": "Organization", "name": "Ocean Data Centre"}</script></head>'
        "<body><h1>Back soon</h1></body></html>"
    )
    site.rule(GRAPH, etag='"maintenance"', content_type="text/html; charset=utf-8")
    down = run(store_url, node, status="failed")
    assert down.discovery_findings.get(SITEGRAPH_UNREADABLE.code) == 1
    assert down.archived == 0 and heads(store_url) == live
    site.rule(GRAPH, content_type="application/ld+json")

    # a huge graph, past max_sitegraph_bytes: said with the URL and the cap
    huge = {
        "@context": {"@vocab": "https://schema.org/"},
        "@graph": [
            {
                "@id": f"https://repo.example/gen/{i}",
                "@type": "Dataset",
                "name": f"Generated dataset {i}",
                "description": "x" * 400,
                "identifier": f"doi:10.5072/gen.{i}",
            }
            for i in range(3000)
        ],
    }
    (site.root / "graph.jsonld").write_text(json.dumps(huge))
    site.rule(GRAPH, etag='"huge"')
    capped = node_for(site, max_sitegraph_bytes=1_000_000)
    over = run(store_url, capped, status="failed")
    assert over.discovery_findings.get(SITEGRAPH_OVER_LIMIT.code) == 1
    assert over.archived == 0 and heads(store_url) == live

    # more Datasets than max_sitegraph_datasets: the first are read, none archived
    few = node_for(site, max_sitegraph_datasets=5)
    partial = run(store_url, few)
    assert partial.discovery_findings.get(SITEGRAPH_OVER_LIMIT.code) == 1
    assert partial.archived == 0
    assert set(live) <= set(heads(store_url))  # the first run's all still live
    assert len(heads(store_url)) == len(live) + 5


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_catalogue_feeds_landing_pages_and_its_own_datasets(site: Site, store_url: str) -> None:
    node = node_for(site, "/catalog.html", "/catalog.jsonld")
    summary = run(store_url, node)
    assert summary.discovery_findings[SITEGRAPH_READ.code] == 2
    fetched = sorted({r.path for r in site.server.log if r.path.startswith("/dataset/ref-")})
    assert fetched == [f"/dataset/ref-{n}" for n in (1, 2, 3, 4)]  # references: fetched pages
    assert not [r for r in site.server.log if r.path.startswith("/obs/")]  # embedded: not
    sources = sorted(r.source_url.rsplit("/", 1)[-1] for r in heads(store_url).values())
    assert sources == [
        "catalog.jsonld#urn:coast:dataset:rain-12",
        "current-meter-3",
        "ref-1",
        "ref-2",
        "ref-3",
        "ref-4",
        "wave-buoy-7",
    ]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_worker_and_the_checking_pool_check_the_datasets_from_the_store(
    site: Site, tmp_path: Path
) -> None:
    """The document travels with the claim: an `adapter worker` (no discovery of its own)
    and the checking pool's child processes check each Dataset without fetching it."""
    node = node_for(site)
    url = stores.sqlite_url(tmp_path, "worker.db")
    config = AdapterConfig(store_url=url, nodes=(node,))
    queued = run_node(config, node, enqueue_only=True)
    assert queued.due == DATASETS and not heads(url)
    with closing(Store.open(url, create=False)) as store:
        done = work(store, [node], threading.Event(), WorkOptions(until_idle=True))[NODE_ID]
    assert done.new_objects >= DATASETS - 1 and len(heads(url)) == DATASETS - 1

    pooled_url = stores.sqlite_url(tmp_path, "pooled.db")
    pooled = run_node(AdapterConfig(store_url=pooled_url, nodes=(node,)), node, processes=2)
    assert pooled.status == "ok" and pooled.errors == 0
    assert {s: r.pid for s, r in heads(pooled_url).items()} == {
        s: r.pid for s, r in heads(url).items()
    }
    assert not [r for r in site.server.log if r.path.startswith("/dataset/")]
