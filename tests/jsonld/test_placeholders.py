"""Placeholders and non-web addresses where a URL belongs are recognised, as written and as
JSON-LD expansion resolved them against the page; a real URL never is."""

from __future__ import annotations

import pytest

from adapter.jsonld.placeholders import not_a_url
from adapter.report.jsonview import to_json
from adapter.web.checking import Checker
from tests.support.fixture_server import start_site, stop

PAGE = "https://repo.example.org/ds/1"


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("see landing page", "see landing page"),
        ("https://repo.example.org/ds/see landing page", "see landing page"),
        ("https://repo.example.org/ds/see%20landing%20page", "see landing page"),
        ("N/A", "N/A"),
        ("https://repo.example.org/ds/N/A", "N/A"),
        ("https://repo.example.org/ds/TBD", "TBD"),
        ("javascript:alert(1)", "javascript:alert(1)"),
        (" JavaScript:void(0)", "JavaScript:void(0)"),
        ("data:text/csv,a,b", "data:text/csv,a,b"),
    ],
)
def test_a_placeholder_is_named_as_the_page_wrote_it(value: str, named: str) -> None:
    assert not_a_url(value, PAGE) == named


@pytest.mark.parametrize(
    "value",
    [
        PAGE,
        "https://repo.example.org/ds/1?format=iso19139",
        "https://repo.example.org/files/na-sediments.csv",
        "https://doi.org/10.5555/tbd.1",
        "https://repo.example.org/ds/",
        None,
        "",
    ],
)
def test_a_url_is_not_a_placeholder(value: str | None) -> None:
    assert not_a_url(value, PAGE) is None


def test_placeholders_meet_no_requirement_and_are_never_proposed() -> None:
    servers = start_site("real-shapes")
    try:
        report = Checker((servers[0].origin,)).check_url(
            servers[0].url("/dataset/placeholders.html"), "dataone"
        )
    finally:
        stop(servers)
    [dataset] = report.datasets
    named = [f.message for f in dataset.findings if f.code == "dataone/not-a-url"]
    for value in ("'TBD'", "'N/A'", "'see landing page'", "'javascript:alert(1)'", "'data:"):
        assert any(value in m for m in named), value
    unmet = {i.name for i in dataset.checklist if not i.met}
    assert {"encoding", "distribution"} <= unmet
    assert not report.harvestable and to_json(report)["verdict"] == "not-harvestable"
    proposal = next(f.message for f in report.findings if f.code == "signposting/proposal")
    for value in ("TBD", "N/A", "see landing page", "javascript:", "data:"):
        assert value not in proposal.replace("Not proposed", ""), value
