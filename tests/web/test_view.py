"""The report laid out for the page: the profile's checklist, the stages, safe markup."""

from __future__ import annotations

import json
from typing import Any

from adapter.report.text import dataset_says
from adapter.web.app import ticks
from adapter.web.checking import Checker
from adapter.web.view import CheckItem, report_view
from tests.web.conftest import origins


def by_label(items: list[CheckItem]) -> dict[str, CheckItem]:
    return {item.label: item for item in items}


def test_a_good_page_passes_every_essential(sites: Any) -> None:
    site = sites("sp-good")
    # its metadata copy is EML: under mnlite every requirement is met, under dataone all
    # but the ISO copy
    checker = Checker(tuple(origins(site)))
    view = report_view(checker.check_url(site[0].url("/dataset/7"), "mnlite"))
    essentials = [item for item in view.checklist if item.essential]
    assert essentials and all(item.state == "ok" for item in essentials), essentials
    assert view.verdict.word == "HARVESTABLE" and view.profile == "mnlite"
    strict = report_view(checker.check_url(site[0].url("/dataset/7")))
    missing = [i.label for i in strict.checklist if i.state == "missing"]
    assert missing == ["an ISO TC 211 XML metadata copy in `encoding` (or `subjectOf`)"]
    assert strict.verdict.word == "NOT HARVESTABLE"


def test_a_missing_identifier_fails_its_item_with_the_code(sites: Any) -> None:
    site = sites("real-shapes")  # a CKAN-style page with no identifier and no DOI
    checker = Checker(tuple(origins(site)))
    view = report_view(checker.check_url(site[0].url("/dataset/ckan-no-identifier.html")))
    items = by_label(view.checklist)
    assert items["a DOI in `identifier`"].state == "missing"
    assert "dataone/identifier-missing" in items["a DOI in `identifier`"].codes
    assert items["a schema.org Dataset on the page"].state == "ok"
    dataone = next(s for s in view.stages if s.key == "dataone")
    assert dataone.state == "error"
    assert [f.severity for f in dataone.findings] == sorted(
        (f.severity for f in dataone.findings), key=["error", "warning", "info"].index
    )


def test_a_page_never_fetched_leaves_the_checklist_not_reached() -> None:
    view = report_view(Checker().check_url("http://10.0.0.1/dataset"))  # refused: private
    items = by_label(view.checklist)
    assert items["a schema.org Dataset on the page"].state == "not reached"
    assert {i.state for i in view.checklist} == {"not reached"}
    # extract, normalize, dataone, soso, signposting
    assert [s.state for s in view.stages if s.key != "fetch"] == ["not reached"] * 5
    assert view.proposal is None


def test_backticks_become_code_only_after_escaping() -> None:
    assert str(ticks("no `name`")) == "no <code>name</code>"
    hostile = ticks('`<script>alert(1)</script>` and "`x`"')
    assert "<script>" not in str(hostile)
    assert str(hostile).startswith("<code>&lt;script&gt;")  # markup inside stays text


def test_only_additional_types_that_are_iris_are_type_rows() -> None:
    """A bare word in additionalType ("dataset", as some repositories write it) is free text:
    no https://schema.org/dataset row; one that repeats @type is not shown twice."""
    base = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "@id": "https://doi.org/10.5072/x",
        "name": "Cores",
        "description": "Sediment cores",
        "identifier": "doi:10.5072/x",
    }
    cases = {
        "dataset": [],
        "Data set": [],
        "dcat:Dataset": [],  # a prefix no context declares: no IRI
        "Dataset": [],  # said by @type already
        "http://schema.org/Dataset": [],
        "schema:Collection": ["https://schema.org/Collection"],
        "http://purl.org/dc/dcmitype/Dataset": ["http://purl.org/dc/dcmitype/Dataset"],
    }
    for value, extra in cases.items():
        body = json.dumps({**base, "additionalType": ["dataset", value]}).encode()
        report = Checker().check_content(body, "https://repo.example.org/ds/1")
        rows = [r.href for r in report_view(report).signposts if r.rel == "type"]
        assert rows == ["https://schema.org/Dataset", *extra], value
        said = dataset_says(report, [report.url])["type"]  # the text report's table rows
        assert [url for url, _ in said] == rows, value
