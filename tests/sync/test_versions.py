"""What DataONE sees stays true while the repository changes (issue 15, versions and identity).

A fixture site (fixtures/sites/sync-versions) changes between sync runs of two
nodes that share one store: a page edited and edited back (A -> B -> A), a page
withdrawn (410) and restored, a page moved to a new URL (the old one 404), a
page whose DOI a mirror page wanted while it was live and takes once it is gone,
a Dataset that drops its `encoding` (and later links a changed copy again), a
page whose DOI changes, a page that drops one of its two Datasets, and a page
the second node lists too. After each run
every series' head must be what the site publishes now: its bytes, its archived
flag, its obsoletes chain, one node per PID and per seriesId; and each Dataset's
resource map, read with DataONE's library, aggregates exactly its current heads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.dataone.records import canonical_bytes
from adapter.dataone.resourcemap import is_series as is_map_series
from adapter.findings import Finding, Severity
from adapter.models import DatasetReport, DatasetResult, Fetched, MediaObjectRef, SyncRecord
from adapter.pipeline import listed_series
from adapter.store.db import Store
from adapter.sync.outcome import RunSummary
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.fixture_server import stop
from tests.support.packages import assert_packages_true
from tests.sync.test_sync import Site

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
NODE_A, NODE_B = "urn:node:VERSIONS", "urn:node:VERSIONSB"
SCRIPT = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.S)


@dataclass
class Head:
    record: SyncRecord
    body: bytes
    chain: list[str]  # PIDs from the first version to the head


def node(site: Site, node_id: str, sitemap: str) -> NodeSettings:
    return quick_node(
        site.url(sitemap),
        node_id,
        dataone={"sync_metadata_copy": True},
        politeness={"requests_per_second": 500, "concurrency": 1},
        sync={"archive_after_missing_runs": 2},
        # versions, not requirements: most pages have no ISO copy (the dataone profile's)
        checks={"profile": "mnlite"},
    )


def heads(store: Store, node_id: str) -> dict[str, Head]:
    """Every series of the node: its head, the head's bytes and its chain (checked)."""
    records = {r.pid: r for r in store.list_objects(node_id, count=10_000)[1]}
    out: dict[str, Head] = {}
    for rec in records.values():
        if rec.obsoleted_by is not None:
            nxt = records[rec.obsoleted_by]
            assert nxt.obsoletes == rec.pid and nxt.series_id == rec.series_id
            continue
        chain = [rec.pid]
        while records[chain[0]].obsoletes is not None:
            prev = records[chain[0]].obsoletes
            assert prev is not None and records[prev].obsoleted_by == chain[0]
            chain.insert(0, prev)
        full = store.get_record(node_id, rec.pid, with_bytes=True)
        assert full is not None and full.object_bytes is not None and rec.series_id
        assert rec.series_id not in out, f"two heads for {rec.series_id}"
        out[rec.series_id] = Head(rec, full.object_bytes, chain)
    return out


def published(site: Site, page: str) -> bytes:
    """The Dataset JSON-LD the page serves now, as the object's bytes."""
    html = site.server.rewrite((site.root / "dataset" / f"{page}.html").read_text("utf-8"))
    found = SCRIPT.search(html)
    assert found is not None
    return canonical_bytes(json.loads(found.group(1)))


def sitemap(site: Site, name: str, pages: dict[str, str]) -> None:
    """Write a sitemap: page -> lastmod (a moved lastmod makes the page due)."""
    urls = "".join(
        f"  <url><loc>https://repo.example/dataset/{p}</loc><lastmod>{d}</lastmod></url>\n"
        for p, d in pages.items()
    )
    (site.root / name).write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
    )


def rule(site: Site, path: str, values: dict[str, object]) -> None:
    rules = json.loads((site.root / "_headers.json").read_text())
    rules[path] = values
    (site.root / "_headers.json").write_text(json.dumps(rules))


def run_both(config: AdapterConfig) -> tuple[RunSummary, RunSummary]:
    a, b = (run_node(config, n) for n in config.nodes)
    assert a.status == b.status == "ok", (a.as_dict(), b.as_dict())
    return a, b


def assert_store_is_true(store: Store, site: Site, live: dict[str, str], dead: set[str]) -> None:
    """Heads of node A: `live` seriesId -> the page whose JSON-LD is its bytes; `dead` archived;
    a resource map per Dataset, of its current heads; node B holds nothing; no PID or
    seriesId is given out twice."""
    got = {sid: h for sid, h in heads(store, NODE_A).items() if not is_map_series(sid)}
    for sid, page in live.items():
        head = got[sid]
        assert not head.record.archived, f"{sid} archived"
        if page:
            assert head.body == published(site, page), sid
    for sid in dead:
        assert got[sid].record.archived, f"{sid} still live"
    assert set(got) == set(live) | dead
    assert_packages_true(store, NODE_A)
    assert store.count_records(NODE_B) == 0
    every = store.list_objects(NODE_A, count=10_000)[1]
    pids = [r.pid for r in every]
    assert len(pids) == len(set(pids)) and not set(pids) & set(got)


PAGES = ["flip", "back", "old-home", "held", "mirror", "iso", "renamed", "pair", "shared"]
JAN, FEB, MAR, APR, MAY = (f"2024-{m:02d}-01" for m in range(1, 6))

# series -> the page whose bytes its head must carry ("" for no page of its own), after run 1
AFTER_RUN_ONE = {
    "doi:10.5072/ver.flip": "flip",
    "doi:10.5072/ver.back": "back",
    "doi:10.5072/ver.move": "old-home",
    "doi:10.5072/ver.held": "held",
    "doi:10.5072/ver.iso": "iso",
    "doi:10.5072/ver.iso#iso19139": "",
    "doi:10.5072/ver.old": "renamed",
    "doi:10.5072/ver.pair.a": "",
    "doi:10.5072/ver.pair.b": "",
    "doi:10.5072/ver.shared": "shared",
}


def second_run_changes(site: Site, lastmod: dict[str, str]) -> None:
    """Run 2's site: edit, withdraw (410), move, drop `encoding`, change a DOI, drop one of
    two Datasets, a mirror of a live DOI; the sitemap says which pages changed."""
    site.edit("dataset/flip.html", "Flip, version A", "Flip, version B")
    rule(site, "/dataset/back", {"status": 410, "body": "<html><body>Withdrawn</body></html>"})
    rule(site, "/dataset/old-home", {"status": 404, "body": "<html><body>Moved</body></html>"})
    site.edit("dataset/iso.html", '"encoding"', '"subjectOfNothing"')
    site.edit("dataset/renamed.html", "10.5072/ver.old", "10.5072/ver.new")
    pair = (site.root / "dataset" / "pair.html").read_text("utf-8")
    cut = pair.index(
        ',\n    {\n      "@type": "Dataset",\n      "@id": "https://repo.example/dataset/pair#b"'
    )
    end = pair.index("]", cut)
    (site.root / "dataset" / "pair.html").write_text(pair[:cut] + "\n  " + pair[end:], "utf-8")
    for p in ("flip", "back", "old-home", "iso", "renamed", "pair", "mirror"):
        lastmod[p] = FEB
    del lastmod["old-home"]  # the sitemap lists the new URL instead
    lastmod["new-home"] = FEB
    sitemap(site, "sitemap.xml", lastmod)


def fourth_run_changes(site: Site, lastmod: dict[str, str]) -> None:
    """Run 4's site: the Dataset links a changed metadata copy again; a Dataset moves to
    another live page (the page that had it publishes another DOI now)."""
    site.edit("dataset/iso.html", '"subjectOfNothing"', '"encoding"')
    site.edit("meta/iso.xml", "<gco:Date>2024-01-01</gco:Date>", "<gco:Date>2024-04-01</gco:Date>")
    site.edit("dataset/renamed.html", "10.5072/ver.new", "10.5072/ver.newer")
    adopter = (site.root / "dataset" / "renamed.html").read_text("utf-8")
    adopter = adopter.replace("10.5072/ver.newer", "10.5072/ver.new").replace(
        "dataset/renamed", "dataset/adopter"
    )
    (site.root / "dataset" / "adopter.html").write_text(adopter, "utf-8")
    rule(site, "/dataset/adopter", {"file": "dataset/adopter.html"})
    lastmod["iso"] = lastmod["renamed"] = lastmod["adopter"] = APR
    sitemap(site, "sitemap.xml", lastmod)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    s = Site("sync-versions", tmp_path)
    yield s
    stop(s.servers)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_the_store_stays_true_while_the_site_changes(site: Site, store_url: str) -> None:
    config = AdapterConfig(
        store_url=store_url,
        nodes=(node(site, NODE_A, "/sitemap.xml"), node(site, NODE_B, "/sitemap-b.xml")),
    )
    lastmod = dict.fromkeys(PAGES, JAN)
    del lastmod["mirror"]  # listed from run 2 on, when `held` owns the series
    sitemap(site, "sitemap.xml", lastmod)

    # -- run 1: everything new; node B's listing of `shared` is refused ----------------------
    a, b = run_both(config)
    assert a.series_findings == {}
    assert b.series_findings == {"sync/doi-of-other-node": 1} and b.new_objects == 0
    store = Store.open(store_url, create=False)
    live = dict(AFTER_RUN_ONE)
    assert_store_is_true(store, site, live, set())
    first = heads(store, NODE_A)

    # -- run 2: edit, withdraw, move, a mirror, drop encoding, new DOI, one Dataset less ----
    second_run_changes(site, lastmod)
    a, b = run_both(config)
    assert a.series_findings == {
        "sync/series-moved": 1,
        "sync/series-archived": 3,
        "sync/duplicate-doi": 1,  # the mirror, while `held` is live
    }
    live |= {
        "doi:10.5072/ver.flip": "flip",
        "doi:10.5072/ver.move": "new-home",  # the series followed its DOI
        "doi:10.5072/ver.new": "renamed",
    }
    dead = {
        "doi:10.5072/ver.back",
        "doi:10.5072/ver.iso#iso19139",  # the copy the Dataset no longer links
        "doi:10.5072/ver.old",  # the DOI changed
        "doi:10.5072/ver.pair.b",  # gone from a page that is still up
    }
    for sid in dead:
        live.pop(sid, None)
    assert_store_is_true(store, site, live, dead)
    second = heads(store, NODE_A)
    move = second["doi:10.5072/ver.move"]
    assert move.chain == [*first["doi:10.5072/ver.move"].chain, move.record.pid]
    assert second["doi:10.5072/ver.move"].record.source_url.endswith("/dataset/new-home")
    assert second["doi:10.5072/ver.back"].record.pid == first["doi:10.5072/ver.back"].record.pid

    # -- run 3: the edit reverted (A -> B -> A), the withdrawn page restored, the holder gone
    site.edit("dataset/flip.html", "Flip, version B", "Flip, version A")
    rule(site, "/dataset/back", {"file": "dataset/back.html"})
    rule(site, "/dataset/held", {"status": 410, "body": "<html><body>Withdrawn</body></html>"})
    lastmod["flip"] = lastmod["back"] = lastmod["held"] = MAR  # not the mirror's
    sitemap(site, "sitemap.xml", lastmod)
    a, b = run_both(config)
    # each Dataset's resource map goes with it: a version each, the gone holder's archived
    assert (a.new_versions, a.new_objects, a.archived) == (6, 0, 2)
    assert a.series_findings == {"sync/series-moved": 1}  # the mirror took the series
    dead.discard("doi:10.5072/ver.back")
    live["doi:10.5072/ver.back"] = "back"
    live["doi:10.5072/ver.held"] = "mirror"
    assert_store_is_true(store, site, live, dead)
    third = heads(store, NODE_A)
    flip = third["doi:10.5072/ver.flip"]
    a_pid = first["doi:10.5072/ver.flip"].record.pid
    assert flip.record.pid == a_pid + ".2" and len(flip.chain) == 3 and flip.chain[0] == a_pid
    back = third["doi:10.5072/ver.back"]  # same bytes as the archived head, a PID of its own
    assert back.chain == [first["doi:10.5072/ver.back"].record.pid, back.record.pid]
    assert back.body == first["doi:10.5072/ver.back"].body

    # -- run 4: the Dataset links a changed metadata copy again; a Dataset moves to another
    # live page (the page that had it publishes another DOI now), in either order -----------
    fourth_run_changes(site, lastmod)
    a, b = run_both(config)
    # versions: the Dataset and its copy, the moved Dataset, and their two resource maps;
    # new: ver.newer and its map; archived: the moved Dataset's head and its map, by the page
    # that no longer lists it (before or after the move)
    assert (a.new_objects, a.new_versions, a.archived) == (2, 5, 2)
    assert a.series_findings.get("sync/series-moved") == 1
    assert a.series_findings.get("sync/series-archived") == 1
    dead.discard("doi:10.5072/ver.iso#iso19139")
    live["doi:10.5072/ver.iso#iso19139"] = ""
    live["doi:10.5072/ver.new"] = "adopter"
    live["doi:10.5072/ver.newer"] = "renamed"
    assert_store_is_true(store, site, live, dead)
    fourth = heads(store, NODE_A)
    copy = fourth["doi:10.5072/ver.iso#iso19139"]
    assert copy.body == (site.root / "meta" / "iso.xml").read_bytes()
    assert copy.record.describes_pid == fourth["doi:10.5072/ver.iso"].record.pid
    assert copy.chain == [first["doi:10.5072/ver.iso#iso19139"].record.pid, copy.record.pid]

    # -- run 5: nothing changed: nothing written --------------------------------------------
    for p in lastmod:
        lastmod[p] = MAY
    sitemap(site, "sitemap.xml", lastmod)
    a, b = run_both(config)
    assert (a.new_objects, a.new_versions, a.archived) == (0, 0, 0)
    assert a.series_findings == {}  # the mirror owns the series now: nothing refused
    assert_store_is_true(store, site, live, dead)
    assert {s: h.record.pid for s, h in heads(store, NODE_A).items()} == {
        s: h.record.pid for s, h in fourth.items()
    }
    store.close()


def _report(*codes: str, datasets: list[DatasetResult] | None = None) -> DatasetReport:
    fetched = Fetched("https://r/p", "https://r/p", 200, {}, b"")
    findings = [Finding(c, Severity.ERROR, c) for c in codes]
    return DatasetReport(
        "https://r/p", status=200, fetched=fetched, findings=findings, datasets=datasets or []
    )


def test_a_page_lists_its_series_only_when_it_was_read_whole() -> None:
    gmd = "http://www.isotc211.org/2005/gmd"
    failing = DatasetResult(
        "https://r/p#a",
        "10.5072/a",
        encoding=[MediaObjectRef("https://r/a.xml", (gmd,))],
        findings=[Finding("dataone/x", Severity.ERROR, "fails a check")],
    )
    got = listed_series(_report(datasets=[failing]), [])
    # kept, not harvestable, under every scheme it may be filed under (the DOI's, and the
    # mnlite-at-id scheme's: its @id), with its metadata copy and resource map
    assert got == frozenset(
        {"doi:10.5072/a", "doi:10.5072/a#iso19139", "doi:10.5072/a#resourcemap"}
        | {"https://r/p#a", "https://r/p#a#iso19139", "https://r/p#a#resourcemap"}
    )
    assert listed_series(_report("extract/no-jsonld"), []) == frozenset()  # nothing published
    for unread in ("fetch/too-large", "extract/body-too-large", "normalize/invalid-jsonld"):
        assert listed_series(_report(unread), []) is None, unread
    gone = _report()
    gone.status = 404
    assert listed_series(gone, []) is None
