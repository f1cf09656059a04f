"""The sync: a linked document that fails is a finding about its link, not a page gone.

The buoy page embeds no Dataset and links its JSON-LD record with describedby; the record
synced once, then answers 404. The page answered 200 all along: it is not gone, its record
is not archived (the Dataset may still be in the record that could not be read), and the
stored report says which link failed, never fetch/gone. The cores page points to a link
set on an address the sync may not reach: harvested, with the failure under the link.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import frontier_rows
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.fixture_server import SiteServer, start_site, stop

NODE_ID = "urn:node:LINKED"


@pytest.fixture
def site() -> Iterator[SiteServer]:
    servers = start_site("sp-linked")
    # an address the node does not trust: the sync may not reach it
    servers[0].rewrites["https://refused.example"] = "http://127.0.0.2:9"
    yield servers[0]
    stop(servers)


def stored_reports(store: Store) -> dict[str, tuple[str | None, dict[str, Any]]]:
    """Each page's last status and stored report, by its last path segment."""
    out = {}
    for row in frontier_rows(store, NODE_ID):
        with store.read() as conn:
            text = conn.execute(
                select(t.frontier.c.last_report).where(t.frontier.c.id == row.id)
            ).scalar_one()
        out[row.url.rsplit("/", 1)[-1]] = (row.last_status, json.loads(text))
    return out


def test_a_linked_record_that_goes_404_is_not_the_page_gone(
    site: SiteServer, tmp_path: Path
) -> None:
    node = quick_node(
        site.url("/sitemap.xml"),
        NODE_ID,
        politeness={"requests_per_second": 200, "concurrency": 1},
        sync={"recheck_after_hours": 1e-6},  # every page checked again in the second run
    )
    url = stores.sqlite_url(tmp_path)
    config = AdapterConfig(store_url=url, nodes=(node,))
    first = run_node(config, node)
    assert first.status == "ok"
    store = Store.open(url, create=False)
    try:
        status, cores = stored_reports(store)["ocean-cores"]
        assert status == "harvested"
        [linkset] = [f for f in cores["findings"] if f["code"] == "signposting/linkset-unreachable"]
        assert linkset["where"] == "rel=linkset http://127.0.0.2:9/linkset/ocean-cores.json"
        assert stored_reports(store)["buoy"][0] == "harvested"

        site.extra_rules = {"/api/records/buoy.jsonld": {"status": 404}}
        second = run_node(config, node)
        assert (second.status, second.gone, second.archived) == ("ok", 0, 0)
        status, buoy = stored_reports(store)["buoy"]
        assert status == "not-harvestable"
        codes = [f["code"] for f in buoy["findings"]]
        assert not [c for c in codes if c.startswith("fetch/")]
        [failed] = [f for f in buoy["findings"] if f["code"] == "extract/linked-jsonld-unreachable"]
        assert failed["where"] == f"rel=describedby {site.url('/api/records/buoy.jsonld')}"
        assert "HTTP 404" in failed["message"]
        live = [r for r in store.list_objects(NODE_ID, count=100)[1] if not r.archived]
        assert any(r.source_url.endswith("/dataset/buoy") for r in live)
    finally:
        store.close()
