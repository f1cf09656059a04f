"""A sync with `rendering.mode: auto`: JavaScript-built pages become records like any other.

Real HTTP on 127.0.0.1 (the `render-js` fixture site), a real SQLite store, Debian's
chromium headless shell; and a sync of static pages, in a process of its own, that never starts (or
even imports) the browser.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT
from adapter.render import browser
from adapter.render import findings as rf
from adapter.render.rendered import CHROMIUM
from adapter.store.db import Store
from adapter.store.frontier import list_pages
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.cli import run_in_process
from tests.support.fixture_server import SiteServer, start_site, stop

ROOT = Path(__file__).resolve().parents[2]
NODE_ID = "urn:node:RENDERTEST"
pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="no chromium-headless-shell installed"),
    pytest.mark.slow,
]
SERIES = {
    "doi:10.7288/v4/magic/16789": "/magic/16789",
    "doi:10.7284/908415": "/r2r/cruise/RR1904",
    "doi:10.21233/n34w2x": "/neotoma/site/4721",
    "doi:10.15784/601234": "/usap/dataset/601234",
    "doi:10.5065/d6zw1j3k": "/catalog/1",  # JSON-LD in the HTML: not rendered
}


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    running = start_site("render-js")
    yield running[0]
    stop(running)
    browser.close_service()  # the process's chromium (about 1 GB) not left to later tests


def node_for(url: str, mode: str = "auto") -> NodeSettings:
    return quick_node(
        url,
        NODE_ID,
        politeness={"requests_per_second": 100, "concurrency": 4},
        checks={"profile": "mnlite"},
        rendering={"mode": mode, "max_pages_at_once": 3},
        limits={"render_budget": 6.0},
    )


@pytest.mark.parametrize("processes", [1, 2], ids=["in-thread", "checking-pool"])
def test_js_pages_sync_into_records_with_rendering_auto(
    site: SiteServer, tmp_path: Path, processes: int
) -> None:
    """Rendered in the page threads, checked there or in the pool's child processes."""
    node = node_for(site.url("/sitemap.xml"))
    config = AdapterConfig(store_url=stores.sqlite_url(tmp_path), nodes=(node,))
    summary = run_node(config, node, processes=processes)
    assert summary.status == "ok", summary.as_dict()
    assert summary.fetched == 5
    assert summary.rendering == {rf.RENDERED.code: 4}  # the catalogue page needed none
    store = Store.open(config.store_url, create=False)
    records = [
        r for r in store.list_objects(NODE_ID, count=100)[1] if r.format_id != RESOURCE_MAP_FORMAT
    ]
    assert {r.series_id: r.source_url for r in records} == {
        sid: site.url(path) for sid, path in SERIES.items()
    }
    pages = {p.url: p for p in list_pages(store, node_id=NODE_ID)}
    for path in SERIES.values():
        report = pages[site.url(path)].report
        rendered = path != "/catalog/1"
        assert report["rendered"] is rendered, path
        assert (rf.RENDERED.code in json.dumps(report["findings"])) is rendered
    store.close()


def test_adapter_sync_render_url(site: SiteServer, tmp_path: Path) -> None:
    """The quick run: `adapter sync --render URL`, its summary counting the rendered pages."""
    store = stores.sqlite_url(tmp_path)
    args = ["sync", "--render", "--profile", "mnlite", "--store", store, "--json"]
    ran = run_in_process([*args, site.url("/sitemap.xml")], ROOT)
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout.strip().splitlines()[-1])
    assert summary["rendering"] == {rf.RENDERED.code: 4}
    assert summary["fetched"] == 5 and summary["errors"] == 0
    text = run_in_process([*args[:-1], site.url("/sitemap.xml")], ROOT)  # again: none due
    assert "pages seen 5, due 0" in text.stdout, text.stdout
    assert "rendering (pages)" not in text.stdout  # nothing rendered this time


def test_a_sync_of_static_pages_starts_no_browser(site: SiteServer, tmp_path: Path) -> None:
    """`rendering.mode: auto` on a node whose pages hold their JSON-LD: no Playwright at all."""
    code = f"""
import json, sys
from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig
from adapter.sync.run import run_node
node = quick_node({site.url("/sitemap-catalog.xml")!r}, {NODE_ID!r}, checks={{"profile": "mnlite"}},
                  rendering={{"mode": "auto"}})
config = AdapterConfig(store_url={stores.sqlite_url(tmp_path)!r}, nodes=(node,))
summary = run_node(config, node)
print(json.dumps({{"status": summary.status, "objects": summary.new_objects,
                  "playwright": "playwright" in sys.modules,
                  "browser": "adapter.render.browser" in sys.modules}}))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout.strip().splitlines()[-1])
    assert out == {"status": "ok", "objects": 2, "playwright": False, "browser": False}
