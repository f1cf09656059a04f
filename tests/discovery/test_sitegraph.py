"""Reading a sitegraph (fixtures/sites/sitegraph): its Datasets cut out, its references, caps."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from adapter.discovery.sitegraph import (
    SITEGRAPH_DUPLICATE,
    SITEGRAPH_ENTRY_SKIPPED,
    SITEGRAPH_OVER_LIMIT,
    SITEGRAPH_UNREADABLE,
    dataset_response,
    read_sitegraph,
)
from adapter.http.fetcher import Fetcher
from adapter.limits import Limits
from adapter.models import Fetched
from adapter.pipeline import CheckOptions, check_landing_page
from tests.support.fixture_server import SITES

ROOT = SITES / "sitegraph"
ORIGIN = "https://repo.example"


def fetched(name: str, body: bytes | None = None, kind: str = "application/ld+json") -> Fetched:
    data = body if body is not None else (ROOT / name).read_bytes()
    url = f"{ORIGIN}/{name}"
    return Fetched(url, url, 200, {"content-type": kind}, data)


def codes(findings: list) -> list[str]:  # type: ignore[type-arg]
    return [f.code for f in findings]


def test_an_ocean_infohub_graph_gives_each_dataset_once() -> None:
    graph = read_sitegraph(fetched("graph.jsonld"), Limits())
    source = json.loads((ROOT / "graph.jsonld").read_text())["@graph"]
    typed = [n for n in source if "Organization" not in str(n.get("@type"))]
    ids = [n.get("@id") for n in typed]
    # every Dataset with an @id, once: the duplicate and the one without an id are skipped
    assert [d.id for d in graph.datasets] == list(dict.fromkeys(i for i in ids if i))
    assert sorted(codes(graph.findings)) == [SITEGRAPH_DUPLICATE.code, SITEGRAPH_ENTRY_SKIPPED.code]
    assert graph.whole and not graph.references
    duplicate = next(f for f in graph.findings if f.code == SITEGRAPH_DUPLICATE.code)
    assert "reef-fish" in duplicate.message and duplicate.url == f"{ORIGIN}/graph.jsonld"
    # each document carries the graph's context and the Organization it names by @id
    sst = graph.find(f"{ORIGIN}/dataset/sst")
    assert sst is not None
    doc = json.loads(sst.document)
    assert doc["@context"][0]["@vocab"] == "https://schema.org/"
    assert doc["@context"][1] == {"schema": "http://schema.org/"}  # its own, after the graph's
    assert [n["@id"] for n in doc["@graph"]] == [sst.id, f"{ORIGIN}/org/nodc"]


def test_each_cut_dataset_checks_as_its_own_page() -> None:
    """The messy spellings (http/https contexts, prefixed terms, DOIs written five ways)
    all read as the Dataset they are; the one without an identifier is not harvestable."""
    graph = read_sitegraph(fetched("graph.jsonld"), Limits())
    fetcher = Fetcher(Limits())
    verdicts = {}
    for found in graph.datasets:
        response = dataset_response(found.address, found.document)
        report = check_landing_page(
            found.address, fetcher, CheckOptions(profile="mnlite"), prefetched=response
        )
        assert report.url == found.address and len(report.datasets) == 1
        verdicts[found.address.rsplit("/", 1)[-1]] = (report.harvestable, report.datasets[0].doi)
    assert verdicts["turtles"] == (False, None)  # the one without an identifier
    dois = {doi for ok, doi in verdicts.values() if ok}
    assert len(dois) == len(graph.datasets) - 1
    assert all(doi and doi.startswith("10.5072/oih.") for doi in dois)


def test_a_catalogue_gives_its_datasets_and_its_references() -> None:
    graph = read_sitegraph(fetched("catalog.jsonld"), Limits())
    assert graph.catalogues == 1 and graph.whole
    addresses = [d.address for d in graph.datasets]
    # no url and an @id that is no URL: the graph's URL with the @id as fragment
    assert addresses == [
        f"{ORIGIN}/obs/wave-buoy-7",
        f"{ORIGIN}/obs/current-meter-3",
        f"{ORIGIN}/catalog.jsonld#urn:coast:dataset:rain-12",
    ]
    assert graph.find("urn:coast:dataset:rain-12") is graph.datasets[2]
    assert [r.loc for r in graph.references] == [f"{ORIGIN}/dataset/ref-1"]


def test_a_catalogue_page_of_references_lists_landing_pages() -> None:
    graph = read_sitegraph(fetched("catalog.html", kind="text/html"), Limits())
    assert not graph.datasets
    assert [r.loc for r in graph.references] == [f"{ORIGIN}/dataset/ref-{n}" for n in (1, 2, 3, 4)]
    assert graph.references[1].lastmod is not None  # its dateModified
    assert all(r.sitemap == f"{ORIGIN}/catalog.html" for r in graph.references)
    assert codes(graph.findings) == [SITEGRAPH_ENTRY_SKIPPED.code]  # the entry with no link


def test_a_broken_graph_is_a_finding_and_not_whole() -> None:
    graph = read_sitegraph(fetched("broken.jsonld"), Limits())
    assert not graph.datasets and not graph.whole
    assert codes(graph.findings) == [SITEGRAPH_UNREADABLE.code]
    assert "broken.jsonld" in graph.findings[0].message
    assert "line 5" in graph.findings[0].message


def test_more_datasets_than_the_cap_reads_the_first_and_says_so() -> None:
    limits = replace(Limits(), max_sitegraph_datasets=5)
    graph = read_sitegraph(fetched("graph.jsonld"), limits)
    assert len(graph.datasets) == 5 and not graph.whole
    over = [f for f in graph.findings if f.code == SITEGRAPH_OVER_LIMIT.code]
    assert len(over) == 1
    assert "max_sitegraph_datasets (5)" in over[0].message and "graph.jsonld" in over[0].message


def test_a_graph_nested_past_the_depth_cap_is_not_read(tmp_path: Path) -> None:
    deep: dict = {"@type": "Dataset", "@id": f"{ORIGIN}/d", "name": "deep"}  # type: ignore[type-arg]
    inner = deep
    for _ in range(80):
        inner["about"] = {"@type": "Thing"}
        inner = inner["about"]
    body = json.dumps({"@context": "https://schema.org/", "@graph": [deep]}).encode()
    graph = read_sitegraph(fetched("deep.jsonld", body), Limits())
    assert not graph.datasets and not graph.whole
    assert codes(graph.findings) == [SITEGRAPH_OVER_LIMIT.code]
    assert "max_json_depth (64" in graph.findings[0].message


def test_a_top_level_array_and_blank_nodes() -> None:
    body = json.dumps(
        [
            {"@context": "http://schema.org", "@type": "Dataset", "@id": "_:b0", "url": "/x/1"},
            {"@context": "http://schema.org", "@type": "Dataset", "@id": "_:b1"},
            {"@context": "http://schema.org", "@type": "Dataset", "url": "/x/1"},
        ]
    ).encode()
    graph = read_sitegraph(fetched("array.json", body, "application/json"), Limits())
    assert [d.address for d in graph.datasets] == [f"{ORIGIN}/x/1"]
    assert graph.datasets[0].id is None  # a blank node is no identity
    assert codes(graph.findings) == [SITEGRAPH_ENTRY_SKIPPED.code, SITEGRAPH_DUPLICATE.code]


def test_a_flattened_catalogue_names_its_graphs_datasets_by_id() -> None:
    """A catalogue whose `dataset` entries are {"@id"} of Datasets in the same @graph (as an
    RDF export flattens it): those are the graph's Datasets, not landing pages to fetch."""
    body = json.dumps(
        {
            "@context": "https://schema.org/",
            "@graph": [
                {
                    "@id": f"{ORIGIN}/catalog",
                    "@type": "DataCatalog",
                    "dataset": [
                        {"@id": f"{ORIGIN}/ds/1"},
                        {"@id": "urn:x:2"},
                        {"@id": f"{ORIGIN}/elsewhere/3"},
                    ],
                },
                {"@id": f"{ORIGIN}/ds/1", "@type": "Dataset", "name": "one"},
                {"@id": "urn:x:2", "@type": "Dataset", "name": "two"},
            ],
        }
    ).encode()
    graph = read_sitegraph(fetched("flat.jsonld", body), Limits())
    assert [d.id for d in graph.datasets] == [f"{ORIGIN}/ds/1", "urn:x:2"]
    assert [r.loc for r in graph.references] == [f"{ORIGIN}/elsewhere/3"]
    assert not graph.findings and graph.is_sitegraph()


def test_a_catalogue_page_with_a_broken_block_is_not_read_whole() -> None:
    """One JSON-LD block of the page is broken: a Dataset may hide in it, so the graph is
    not whole (nothing leaves it this run), and the other block's Datasets are read."""
    good = json.dumps(
        {
            "@context": "https://schema.org/",
            "@type": "DataCatalog",
            "dataset": [
                {"@type": "Dataset", "@id": f"{ORIGIN}/ds/1", "name": "one", "description": "d"}
            ],
        }
    )
    broken = '{"@context": "https://schema.org/", "@type": "DataCatalog", "dataset": [{'
    page = (
        f'<html><head><script type="application/ld+json">{good}</script>'
        f'<script type="application/ld+json">{broken}</script></head></html>'
    ).encode()
    graph = read_sitegraph(fetched("catalog2.html", page, "text/html"), Limits())
    assert [d.id for d in graph.datasets] == [f"{ORIGIN}/ds/1"]
    assert not graph.whole and graph.readable
    assert codes(graph.findings) == [SITEGRAPH_UNREADABLE.code]
    assert "block 2" in graph.findings[0].message or "not valid JSON" in graph.findings[0].message
