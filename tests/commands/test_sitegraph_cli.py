"""`adapter discover` and `adapter check-dataset` on a sitegraph (fixtures/sites/sitegraph)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapter.cli import cli
from adapter.discovery.sitegraph import (
    SITEGRAPH_DUPLICATE,
    SITEGRAPH_READ,
    SITEGRAPH_UNREADABLE,
)
from tests.support.fixture_server import SiteServer

Serve = Callable[[str], SiteServer]
DATASETS = 18  # distinct Datasets in graph.jsonld
MNLITE = ["--profile", "mnlite"]


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_discover_lists_the_datasets_of_a_graph(serve_site: Serve) -> None:
    server = serve_site("sitegraph")
    code, out = invoke("discover", "--rate", "100", "--json", server.url("/graph.jsonld"))
    assert code == 0
    got = lines(out)
    entries = [e for e in got if e["type"] == "entry"]
    assert len(entries) == DATASETS and all(e["in_graph"] for e in entries)
    assert entries[1]["loc"] == server.url("/dataset/ctd")
    assert {e["sitemap"] for e in entries} == {server.url("/graph.jsonld")}
    summary = got[-1]
    assert summary["sitegraphs"] == 1 and summary["in_graph"] == DATASETS
    assert summary["findings"] == {
        SITEGRAPH_DUPLICATE.code: 1,
        "discover/sitegraph-entry-skipped": 1,
        SITEGRAPH_READ.code: 1,
    }
    # the Datasets are never fetched: one request, the graph's
    assert [r.path for r in server.log if r.method == "GET"] == ["/robots.txt", "/graph.jsonld"]

    code, text = invoke("discover", "--rate", "100", server.url("/graph.jsonld"))
    assert code == 0
    assert f"{server.url('/dataset/ctd')}  in sitegraph {server.url('/graph.jsonld')}" in text
    assert f"0 landing pages and {DATASETS} Datasets in sitegraphs" in text


def test_discover_a_catalogue_page_as_a_sitegraph(serve_site: Serve) -> None:
    server = serve_site("sitegraph")
    code, out = invoke(
        "discover", "--rate", "100", "--json", "--sitegraph", server.url("/catalog.html")
    )
    assert code == 0
    entries = [e for e in lines(out) if e["type"] == "entry"]
    assert [e["loc"] for e in entries] == [server.url(f"/dataset/ref-{n}") for n in (1, 2, 3, 4)]
    assert not any(e["in_graph"] for e in entries)  # landing pages, fetched by the sync


def test_discover_a_configured_node_with_sitegraphs(serve_site: Serve, tmp_path: Path) -> None:
    server = serve_site("sitegraph")
    config = tmp_path / "nodes.yaml"
    config.write_text(
        f"""nodes:
  - id: urn:node:OIH
    name: Ocean InfoHub source
    start:
      sitegraph_urls: ["{server.url("/graph.jsonld")}", "{server.url("/catalog.html")}"]
    politeness: {{requests_per_second: 100}}
    scope: {{exclude: ["/dataset/ref-4$"]}}
    dataone: {{submitter: "CN=a", rights_holder: "CN=b", contact_subject: "CN=c"}}
"""
    )
    code, out = invoke("discover", "--json", "--config", str(config))
    assert code == 0, out
    summary = lines(out)[-1]
    assert summary["sitegraphs"] == 2 and summary["in_graph"] == DATASETS
    assert summary["entries"] == DATASETS + 3  # the catalogue's pages, ref-4 excluded
    code, _ = invoke("discover", "--config", str(config), server.url("/graph.jsonld"))
    assert code == 2  # URL or --config, not both
    code, out = invoke("config", "check", str(config))
    assert code == 0 and f"sitegraph {server.url('/graph.jsonld')}" in out


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_check_dataset_checks_every_dataset_of_a_graph(serve_site: Serve) -> None:
    server = serve_site("sitegraph")
    code, out = invoke("check-dataset", *MNLITE, "--json", server.url("/graph.jsonld"))
    assert code == 1  # one Dataset has no identifier
    got = json.loads(out)
    assert got["totals"] == {
        "datasets": DATASETS,
        "harvestable": DATASETS - 1,
        "not_harvestable": 1,
        "references": 0,
    }
    assert [r["url"] for r in got["reports"]][:2] == [
        server.url("/dataset/zooplankton"),
        server.url("/dataset/ctd"),
    ]
    bad = [r for r in got["reports"] if not r["harvestable"]]
    assert [r["url"] for r in bad] == [server.url("/dataset/turtles")]
    assert got["reports"][0]["path"][0] == server.url("/graph.jsonld")
    assert SITEGRAPH_DUPLICATE.code in {f["code"] for f in got["findings"]}

    code, text = invoke("check-dataset", *MNLITE, server.url("/graph.jsonld"))
    assert code == 1
    head = text.split("=" * 72)[0]  # totals first, then a report each
    assert f"{DATASETS} Datasets checked: {DATASETS - 1} harvestable, 1 not harvestable" in head
    assert text.count("=" * 72) == DATASETS


def test_check_dataset_picks_one_dataset_by_fragment_or_option(serve_site: Serve) -> None:
    server = serve_site("sitegraph")
    graph, ctd = server.url("/graph.jsonld"), server.url("/dataset/ctd")
    code, out = invoke("check-dataset", *MNLITE, "--json", f"{graph}#{ctd}")
    assert code == 0
    assert [r["url"] for r in json.loads(out)["reports"]] == [ctd]
    catalog = server.url("/catalog.jsonld")
    code, out = invoke(
        "check-dataset", *MNLITE, "--json", "--dataset", "urn:coast:dataset:rain-12", catalog
    )
    assert code == 0
    assert [r["url"] for r in json.loads(out)["reports"]] == [
        f"{catalog}#urn:coast:dataset:rain-12"
    ]
    code, out = invoke("check-dataset", *MNLITE, "--dataset", "nope", catalog)
    assert code == 2 and "no Dataset 'nope'" in out and "urn:coast:dataset:rain-12" in out


def test_check_dataset_on_a_broken_graph_and_a_catalogue_page(serve_site: Serve) -> None:
    server = serve_site("sitegraph")
    code, out = invoke("check-dataset", "--json", server.url("/broken.jsonld"))
    assert code == 2
    got = json.loads(out)
    assert [f["code"] for f in got["findings"]] == [SITEGRAPH_UNREADABLE.code]
    # an HTML catalogue page reads as a sitegraph once fetched: its pages listed, none checked
    code, text = invoke("check-dataset", server.url("/catalog.html"))
    assert code == 1
    assert "0 Datasets checked" in text and "4 landing pages referenced" in text
    assert server.url("/dataset/ref-3") in text
    # a landing page with one Dataset is still one page
    code, text = invoke("check-dataset", *MNLITE, server.url("/dataset/ref-1"))
    assert code == 0 and "Sitegraph" not in text


def test_quick_sync_of_a_sitegraph_url_and_its_pages(serve_site: Serve, tmp_path: Path) -> None:
    """`adapter sync URL.jsonld` takes it as a sitegraph; its Datasets are the node's pages."""
    server = serve_site("sitegraph")
    store = f"sqlite:///{tmp_path / 'quick.db'}"
    graph = server.url("/graph.jsonld")
    code, out = invoke("sync", graph, "--store", store, "--node-id", "urn:node:QUICK")
    assert code == 0, out
    assert not [r for r in server.log if r.path.startswith("/dataset/")]
    code, out = invoke("pages", "--store", store, "--json")
    assert code == 0
    pages = lines(out)
    assert len(pages) == DATASETS
    assert {p["url"] for p in pages} >= {server.url("/dataset/ctd"), server.url("/dataset/sst")}
    code, out = invoke("pages", "show", server.url("/dataset/turtles"), "--store", store)
    assert code == 1 and "NOT HARVESTABLE" in out and "dataone/identifier-missing" in out
