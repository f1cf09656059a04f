"""DataONE's search index of a Dataset: the indexer's fields, written by hand from its rules.

Each expected value below is worked out from the indexer's schema.org configuration
(application-context-schema-org.xml in DataONEorg/dataone-indexer) and its converters,
not from our code: `title` is `name`, `abstract` the first `description`, `author` the
first creator (list order) with a `name`, the box "south west north east" after commas
became spaces, dates as Solr dates in UTC, and so on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from adapter.config.settings import ChecksSettings
from adapter.dataone.index import prepare
from adapter.dataone.index.compute import dataone_index
from adapter.dataone.index.convert import geohash, java_double, latitude, longitude, solr_date
from adapter.dataone.index.queries import FIELDS
from adapter.dataone.index.rules import index_dataset
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS
from adapter.pipeline import CheckOptions, check_landing_page

ROOT = Path(__file__).resolve().parents[2] / "fixtures"
CTX = {"@vocab": "http://schema.org/"}


def page_jsonld(path: Path) -> Any:
    block = re.search(r'<script type="application/ld\+json">(.*?)</script>', path.read_text(), re.S)
    assert block is not None
    return json.loads(block.group(1))


def without_geohash(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if not k.startswith("geohash_")}


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_the_science_on_schema_org_full_example() -> None:
    doc = page_jsonld(ROOT / "sites/page-index/dataset/soso-full-example.html")
    fields = dataone_index(doc)
    abstract = fields.pop("abstract")
    assert isinstance(abstract, str)
    assert abstract.startswith("&lt;p&gt;&quot;Winter ecology of larval krill")  # as written
    assert without_geohash(fields) == {
        "title": "Larval krill studies - fluorescence and clearance from ARSV Laurence M. Gould "
        "LMG0106, LMG0205 in the Southern Ocean from 2001-2002 (SOGLOBEC project)",
        "label": "larval krill pigments",
        "author": "Dr Langdon Quetin",
        "origin": ["Dr Langdon Quetin", "Dr Robin Ross"],
        "pubDate": ["2010-02-03T00:00:00.000Z"],
        "keywords": ["biota", "krill", "oceans"],
        "licenseUrl": ["https://creativecommons.org/licenses/by/4.0/"],
        "licenseName": ["https://creativecommons.org/licenses/by/4.0/"],
        # "-68.4817,-75.8183 -65.08,-68.5033": commas become spaces, then south west north east
        "southBoundCoord": "-68.4817",
        "westBoundCoord": "-75.8183",
        "northBoundCoord": "-65.08",
        "eastBoundCoord": "-68.5033",
        "beginDate": "2001-08-06T00:00:00.000Z",
        "endDate": "2002-09-09T00:00:00.000Z",
        "funderName": ["NSF Antarctic Sciences"],  # an Offer is no MonetaryGrant: no award
        "parameter": ["cruiseid", "pigment_content", "year"],
        "edition": "1",
        "serviceEndpoint": [
            "https://www.example-data-repository.org/dataset/3300",
            "https://www.example-data-repository.org/dataset/3300/data/larval-krill.tsv",
        ],
    }
    # the indexer's own test indexes this box to these geohashes
    assert fields["geohash_1"] == ["4"]
    assert fields["geohash_9"] == ["4khsjfyj7"]


def test_a_dryad_like_page() -> None:
    fields = dataone_index(page_jsonld(ROOT / "pages/dryad-like.html"))
    assert fields == {
        "title": "Data from: Thermal tolerance of intertidal snails across a latitudinal gradient",
        "abstract": "Snails were collected at 12 sites.",  # the first description, in order
        "author": "Lee, Min-jun",
        "authorGivenName": "Min-jun",
        "authorLastName": ["Lee", "Okafor"],
        "investigator": ["Lee", "Okafor"],
        "origin": ["Lee, Min-jun", "Okafor, Chidi"],
        "pubDate": ["2020-06-11T00:00:00.000Z"],
        "keywords": ["Littorina", "climate change", "thermal tolerance"],
        # a licence node: its own `license` is the URL, its `name` the name
        "licenseUrl": ["https://creativecommons.org/publicdomain/zero/1.0/"],
        "licenseName": ["CC0 1.0 Universal (CC0 1.0) Public Domain Dedication"],
        "namedLocation": ["Baja California", "Oregon coast"],
        "beginDate": "2018-01-01T00:00:00.000Z",  # "2018": a gYear, no "/" so no end
        "edition": "1",
        "serviceEndpoint": [
            "https://repo.example/api/v2/datasets/doi%3A10.5072%2Fdryad.8w9ghx3k2/download",
            "https://repo.example/dataset/dryad-like",
        ],
    }


def test_a_bcodmo_like_page() -> None:
    fields = dataone_index(page_jsonld(ROOT / "pages/bcodmo-like.html"))
    assert without_geohash(fields) == {
        "title": "Zooplankton biomass from MOCNESS tows, R/V Atlantis AT42-01",
        "label": "AT42-01 zooplankton biomass",
        "abstract": "Dry weight biomass of zooplankton size fractions from MOCNESS net tows."
        "\r\n\r\nSee the methods document for the sieve sizes.",
        # the Role shares the Person's @id: one node, typed both, with the Person's name
        "author": "Dr Maria Gonzalez",
        "origin": ["Dr Maria Gonzalez"],
        "pubDate": ["2022-08-01T00:00:00.000Z"],
        "keywords": ["zooplankton, MOCNESS, biomass, dry weight"],  # one text, one keyword
        "southBoundCoord": "36.5",
        "westBoundCoord": "-75.2",
        "northBoundCoord": "39.8",
        "eastBoundCoord": "-70.1",
        "beginDate": "2019-03-02T00:00:00.000Z",
        "endDate": "2019-03-28T00:00:00.000Z",
        "edition": "2",
        "serviceEndpoint": [
            "https://repo.example/dataset/bcodmo-like",
            "https://repo.example/dataset/bcodmo-like/data/biomass.csv",
        ],
    }


def test_the_projects_full_soso_page() -> None:
    fields = dataone_index(page_jsonld(ROOT / "pages/soso-full.html"))
    assert fields["author"] == "Josiah Carberry"
    assert fields["origin"] == ["Josiah Carberry", "Ana Ferreira"]
    assert (fields["southBoundCoord"], fields["westBoundCoord"]) == ("41.0", "-71.0")
    assert (fields["northBoundCoord"], fields["eastBoundCoord"]) == ("45.0", "-65.5")
    assert fields["beginDate"] == "2017-02-10T00:00:00.000Z"
    assert fields["endDate"] == "2019-11-30T00:00:00.000Z"
    assert fields["parameter"] == ["abundance", "tow_volume"]
    assert "authorGivenName" not in fields  # no creator has a givenName


def test_the_first_author_is_the_first_creator_with_a_name() -> None:
    doc = {
        "@context": CTX,
        "@type": "Dataset",
        "creator": [
            {"@type": "Person", "givenName": "Ines", "familyName": "Okafor"},
            {"@type": "Person", "name": "Wen Li"},
            {"@type": "Person", "name": "Ana Abreu"},
        ],
    }
    fields = dataone_index(doc)
    assert fields["author"] == "Wen Li"  # not "Ana Abreu": list order, not alphabetical
    assert fields["origin"] == ["Wen Li", "Ana Abreu"]
    assert fields["authorGivenName"] == "Ines"
    assert fields["authorLastName"] == ["Okafor"]


def test_sub_datasets_are_left_out_where_the_indexer_leaves_them_out() -> None:
    doc = {
        "@context": CTX,
        "@type": "Dataset",
        "name": "Whole",
        "keywords": "top",
        "hasPart": {"@type": "Dataset", "name": "Part", "keywords": "part", "license": "L"},
    }
    fields = dataone_index(doc)
    assert fields["title"] == "Whole"  # title filters out a Dataset in hasPart
    assert fields["hasPart"] == ["Part"]
    assert "licenseUrl" not in fields  # so does the licence
    assert fields["keywords"] == ["top", "part"]  # keywords do not (the top Dataset first)


def test_https_vocabulary_and_language_tags() -> None:
    doc = {
        "@context": {"@vocab": "https://schema.org/"},
        "@type": "Dataset",
        "name": {"@value": "Titel", "@language": "de"},
        "keywords": {"@type": "DefinedTerm", "name": "Seen"},
    }
    fields = dataone_index(doc)
    assert fields["title"] == "Titel@de"  # Jena's text of a language-tagged literal
    assert fields["keywords"] == ["_:blank-node"]  # a node's label, meaningless in search


@pytest.mark.parametrize(
    ("text", "solr"),
    [
        ("2019", "2019-01-01T00:00:00.000Z"),
        ("2019-05", "2019-05-01T00:00:00.000Z"),
        ("2019-05-03", "2019-05-03T00:00:00.000Z"),
        ("2019-05-03T10:00:00+02:00", "2019-05-03T08:00:00.000Z"),
        ("2003-04-21T09:40:00", "2003-04-21T09:40:00.000Z"),  # the indexer's own test case
        ("2019-05-03T10:00:00.1234Z", "2019-05-03T10:00:00.123Z"),
        ("2019-02-30", None),
        ("2019-05-03 10:00", None),
        ("March 2020", None),
        ("..", None),
        ("", None),
    ],
)
def test_dates_as_the_indexer_converts_them(text: str, solr: str | None) -> None:
    assert solr_date(text) == solr


def test_coordinates_as_the_indexer_converts_them() -> None:
    assert latitude("45") == "45.0"
    assert latitude("-90.5") is None
    assert latitude("north") is None
    assert longitude("-180") == "-180.0"
    assert longitude("190") == "170.0"  # above 180 it is 360 minus the value
    assert longitude("361") is None
    assert java_double(0.0001) == "1.0E-4"
    assert java_double(12345678.0) == "1.2345678E7"
    assert geohash(42.6, -5.6, 5) == "ezs42"  # the textbook example


def test_a_document_past_the_cap_gives_no_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prepare, "MAX_TRIPLES", 3)
    doc = {"@context": CTX, "@type": "Dataset", "name": "A", "keywords": ["a", "b", "c"]}
    assert index_dataset(doc, {}, "https://repo.example/") == ({}, [])


# -- findings ------------------------------------------------------------------------------


def findings_for(doc: dict[str, Any], framed: dict[str, Any] | None = None) -> dict[str, str]:
    _, found = index_dataset(doc, framed or doc, "https://repo.example/d")
    return {f.code: f.message for f in found}


def test_author_instead_of_creator() -> None:
    doc = {"@context": CTX, "@type": "Dataset", "author": {"@type": "Person", "name": "Kim Ode"}}
    message = findings_for(doc)["dataone/index-author-not-creator"]
    assert '"creator": [{"@type": "Person", "name": "Kim Ode"}]' in message


def test_creator_named_only_by_parts() -> None:
    doc = {
        "@context": CTX,
        "@type": "Dataset",
        "creator": {"@type": "Person", "givenName": "Kim", "familyName": "Ode"},
    }
    message = findings_for(doc)["dataone/index-creator-unnamed"]
    assert '"name": "Kim Ode"' in message and "no author" in message


def box_doc(box: str, kind: str = "GeoShape") -> dict[str, Any]:
    geo = {"@type": kind, "box": box}
    return {"@context": CTX, "@type": "Dataset", "spatialCoverage": {"@type": "Place", "geo": geo}}


def test_a_box_written_longitude_first() -> None:
    message = findings_for(box_doc("-120.2 39.3 -119.5 40.1"))["dataone/index-box-dropped"]
    assert "southBoundCoord" in message and '"box": "39.3 -120.2 40.1 -119.5"' in message


def test_a_box_with_south_above_north() -> None:
    found = findings_for(box_doc("40.1 -120.2 39.3 -119.5"))
    assert "whole record" in found["dataone/index-box-inverted"]
    assert '"box": "39.3 -120.2 40.1 -119.5"' in found["dataone/index-box-inverted"]
    assert not any(k.startswith("geohash") for k in dataone_index(box_doc("40 0 39 1")))


def test_a_point_is_no_box() -> None:
    doc = box_doc("")
    doc["spatialCoverage"]["geo"] = {"@type": "GeoCoordinates", "latitude": 1, "longitude": 2}
    assert "GeoCoordinates" in findings_for(doc)["dataone/index-geo-not-box"]


def test_a_good_box_is_silent() -> None:
    assert findings_for(box_doc("39.3 -120.2 40.1 -119.5")) == {}


@pytest.mark.parametrize(
    ("coverage", "flagged"),
    [
        ("2019-03-01 to 2019-09-30", True),
        ("2019-03-01/2019-09-31", True),  # no 31 September
        ("../2019", True),
        ("2019-03-01/..", False),
        ("2019-03-01/2019-09-30", False),
        ("2019", False),
    ],
)
def test_temporal_coverage_the_index_cannot_split(coverage: str, flagged: bool) -> None:
    doc = {"@context": CTX, "@type": "Dataset", "temporalCoverage": coverage}
    assert ("dataone/index-temporal-unsplit" in findings_for(doc)) is flagged


def test_licences() -> None:
    base = {"@context": CTX, "@type": "Dataset"}
    node = {**base, "license": {"@type": "CreativeWork", "url": "https://x.example/l"}}
    assert "dataone/index-license-unread" in findings_for(node)
    text = {**base, "license": "Free to use with attribution"}
    assert "dataone/index-license-unnamed" in findings_for(text)
    url = {**base, "license": "https://creativecommons.org/licenses/by/4.0/"}
    assert findings_for(url) == {}  # search shows the URL: enough to find it
    named = {
        **base,
        "license": {"@id": "https://spdx.org/licenses/CC0-1.0", "name": "CC0 1.0"},
    }
    assert findings_for(named) == {}


def test_funding_the_index_cannot_read() -> None:
    grant = {"@type": "MonetaryGrant", "identifier": "OCE-1", "funder": {"name": "NSF"}}
    doc = {"@context": CTX, "@type": "Dataset", "@id": "https://repo.example/d", "funding": grant}
    message = findings_for(doc)["dataone/index-funding-unread"]
    assert '"funder": {"@type": "Organization", "name": "NSF"}' in message
    assert '"fundedItem": {"@id": "https://repo.example/d"}' in message
    grant["fundedItem"] = {"@id": "https://repo.example/d"}
    doc["funder"] = {"@type": "Organization", "name": "NSF"}
    assert findings_for(doc) == {}


def test_an_unreadable_date_published() -> None:
    doc = {"@context": CTX, "@type": "Dataset", "datePublished": "March 2020"}
    assert "2021-06-30" in findings_for(doc)["dataone/index-date-unread"]


def test_garbled_keywords() -> None:
    doc = {"@context": CTX, "@type": "Dataset", "keywords": {"@type": "DefinedTerm", "name": "k"}}
    assert "blank-node" in findings_for(doc)["dataone/index-garbled-text"]


# -- in the pipeline: every Dataset, every profile -------------------------------------------


def check(serve_site: Any, path: str, **options: Any) -> Any:
    server = serve_site("page-index")
    with Fetcher(DEFAULT_LIMITS, policy=AddressPolicy([server.origin])) as fetcher:
        return check_landing_page(server.url(path), fetcher, CheckOptions(**options))


def test_warnings_under_soso_recommended_and_blocking_when_a_node_requires_them(
    serve_site: Any,
) -> None:
    report = check(serve_site, "/dataset/boxes.html", profile="soso")
    (dataset,) = report.datasets
    item = next(i for i in dataset.checklist if i.name == "dataone-search")
    assert not item.met and not item.blocking
    assert "dataone/index-box-inverted" in item.codes
    assert dataset.dataone_index["title"] == "Kelp canopy surveys, two regions"
    required = check(
        serve_site, "/dataset/boxes.html", required=frozenset({"dataone/index-"})
    ).datasets[0]
    assert not required.harvestable
    assert "dataone/required-check-failed" in {f.code for f in required.findings}


def test_the_sync_computes_it_only_when_the_node_asks(serve_site: Any) -> None:
    off = check(serve_site, "/dataset/people.html", dataone_index=False).datasets[0]
    assert off.dataone_index == {}
    assert not [f for f in off.findings if f.code.startswith("dataone/index-")]
    assert not ChecksSettings().search_index  # the sync's default: it costs CPU
    assert ChecksSettings(dataone_index=True).search_index
    assert ChecksSettings(profile="soso").search_index  # its checklist reads the findings
    assert ChecksSettings(required=("dataone/index-",)).search_index


def test_the_queries_parsed_ahead_are_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """`parse_queries` is what a parent that forks checkers (tests/support/zygote.py) runs
    first: ~0.5 s of CPU each child would otherwise pay for its first harvestable page."""
    from adapter.dataone.index import compute

    monkeypatch.setattr(compute, "_parsed", {})
    compute.parse_queries()
    assert sorted(compute._parsed) == sorted(f.name for f in FIELDS)

    def parse_again(text: str) -> None:
        raise AssertionError("a query parsed again")

    monkeypatch.setattr(compute, "prepareQuery", parse_again)
    fields = dataone_index({"@context": CTX, "@type": "Dataset", "name": "Ahead"})
    assert fields["title"] == "Ahead"


def test_only_the_queries_a_graph_can_match_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A query is parsed (~15 ms of CPU) the first time a graph has a predicate it needs: a
    plain Dataset pays for a third of them, not all 34; the fields come out the same."""
    from adapter.dataone.index import compute

    doc = page_jsonld(ROOT / "hostile" / "site" / "good" / "1.html")
    full = dataone_index(doc)
    monkeypatch.setattr(compute, "_parsed", {})
    assert dataone_index(doc) == full
    parsed = set(compute._parsed)
    assert {"title", "abstract"} <= parsed
    assert 0 < len(parsed) <= len(FIELDS) // 2


NESTED = {
    "@context": CTX,
    "@type": "Dataset",
    "@id": "https://repo.example/whole",
    "name": ["Whole", "Also whole"],
    "description": ["Second", "First"],
    "keywords": ["b", "a", {"@type": "DefinedTerm", "name": "node"}],
    "creator": [{"@type": "Person", "name": "Zed"}, {"@type": "Person", "name": "Amy"}],
    "license": ["https://l.example/2", {"@type": "CreativeWork", "name": "Named"}],
    "isBasedOn": "https://d.example/1",
    "http://www.w3.org/ns/prov#wasDerivedFrom": {"@id": "https://d.example/1"},
    "spatialCoverage": [
        {"@type": "Place", "geo": {"@type": "GeoShape", "box": "1 2 3 4"}},
        {"@type": "Place", "geo": {"@type": "GeoShape", "box": "0, 1, 2, 3"}},
    ],
    "temporalCoverage": ["2019/2020", "2018"],
    "hasPart": {
        "@type": "Dataset",
        "name": "Part",
        "description": "A part",
        "keywords": "a",
        "license": "https://l.example/0",
        "creator": {"@type": "Person", "name": "Bob"},
        "isBasedOn": "https://d.example/0",
        "spatialCoverage": {"@type": "Place", "geo": {"@type": "GeoShape", "box": "-1 0 0 1"}},
        "temporalCoverage": "2000/2001",
    },
}
# one field of each kind of outer step: TOP, ?sub first or after ?pos, DISTINCT, LIMIT 1,
# the box's and the coverage's own keys
EVALUATED = (
    "abstract",
    "title",
    "author",
    "origin",
    "keywords",
    "licenseUrl",
    "prov_wasDerivedFrom",
    "southBoundCoord",
    "beginDate",
)


@pytest.mark.parametrize(
    "doc",
    [NESTED, page_jsonld(ROOT / "sites/page-index/dataset/soso-full-example.html")],
    ids=["nested", "soso-full-example"],
)
def test_the_outer_steps_done_in_python_give_what_rdflib_gives(doc: Any) -> None:
    """rdflib runs each field's pattern and `compute` does its filters, ORDER BY, DISTINCT
    and LIMIT: the same terms in the same order as rdflib's evaluation of the whole query."""
    from rdflib.plugins.sparql import prepareQuery

    from adapter.dataone.index import compute

    graph = prepare.to_graph(prepare.prepared(doc))
    compared = 0
    for field in (f for f in FIELDS if f.name in EVALUATED):
        whole = [row[0] for row in graph.query(prepareQuery(field.sparql))]  # type: ignore[index]
        ours = compute._values(graph, field, compute.solutions(graph, field), {})
        assert ours == whole, field.name
        compared += bool(whole)
    assert compared >= 6
