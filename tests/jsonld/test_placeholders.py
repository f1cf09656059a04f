"""Placeholders and non-web addresses where a URL belongs are recognised, as written and as
JSON-LD expansion resolved them against the page; a real URL never is."""

from __future__ import annotations

from urllib.parse import unquote, urljoin

import pytest

from adapter.jsonld import placeholders
from adapter.jsonld.placeholders import PLACEHOLDERS, not_a_url
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


def _every_resolution(value: str, base: str) -> str | None:
    """`not_a_url`'s answer for a value none of whose spellings is a placeholder as written:
    the value against every placeholder resolved against `base`."""
    low = value.strip().lower()
    for placeholder, resolved in placeholders._resolved(base):
        if unquote(low) == resolved or low == resolved:
            return unquote(value.strip())[len(unquote(value.strip())) - len(placeholder) :]
    return None


BASES = [PAGE, PAGE + "#part", "http://a", "http://a/b/c?x=1#y", "http://a/b;p?q", "HTTP://A/B/"]


@pytest.mark.parametrize("base", BASES)
def test_only_values_ending_as_a_placeholder_are_resolved(base: str) -> None:
    # the shortcut (no urljoin unless the value ends as one does) answers as a full scan
    values = {base, base.split("#")[0], base.upper(), urljoin(base, "?"), PAGE + "/na-x"}
    for p in PLACEHOLDERS:
        joined = urljoin(base, p)
        values |= {joined, joined.upper(), joined.replace(" ", "%20"), joined + "x"}
    for value in sorted(values):
        if value.strip().lower() not in PLACEHOLDERS:
            assert not_a_url(value, base) == _every_resolution(value, base), value


@pytest.mark.parametrize(
    "base",
    [
        *BASES,
        "http://a/",
        "http://a/b/..",
        "http://a/b/./",
        "http://a/b/../c/d?x=1#y",
        "https://h/a b/c",
        "http://[::1]/x",
        "http:foo",
        "//host/p",
        "rel/path",
        "urn:x:y",
        "mailto:a@b",
        "",
    ],
)
def test_placeholders_resolve_as_urljoin_resolves_them(base: str) -> None:
    # one urljoin a page, its stem shared by every placeholder but "?"
    for p in PLACEHOLDERS:
        assert placeholders._join(base, p) == urljoin(base, p), (base, p)
