"""A linked document that cannot be fetched is a finding about its link, not about the page.

The landing page answers; a link set it points to refuses connections or sits on an address
the check may not reach, a `describedby` JSON-LD record answers 500 or 404, or its host does
not resolve (`nonexistent.invalid`). Each failure is reported once, under the link (`where`
names the relation and the target, and the link's row of the signpost table shows the code),
never as a fetch/ finding about the landing page: the page's status stays its own, the
verdict is never could-not-check, and a sync does not take the page for gone.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapter.findings import Stage
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS
from adapter.models import DatasetReport
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.report.jsonview import to_json
from adapter.report.text import render_text
from tests.support.cli import run_in_process
from tests.support.clock import FakeClock
from tests.support.fixture_server import SiteServer, start_site, stop

ROOT = Path(__file__).resolve().parents[1]
LINKED_UNREACHABLE = "extract/linked-jsonld-unreachable"


@dataclass
class Linked:
    """The sp-linked site, with https://refused.example on a port that refuses connections."""

    servers: list[SiteServer]
    refused: str  # http://127.0.0.1:PORT: bound, never listening

    @property
    def site(self) -> SiteServer:
        return self.servers[0]

    def url(self, path: str) -> str:
        return self.site.url(path)

    def origins(self) -> list[str]:
        return [s.origin for s in self.servers]


@pytest.fixture
def linked(virtual_clock: FakeClock) -> Iterator[Linked]:
    """The refused connections are retried with backoff: on virtual time, not seconds."""
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))  # bound and not listening: every connection is refused
    refused = f"http://127.0.0.1:{hole.getsockname()[1]}"
    servers = start_site("sp-linked")
    servers[0].rewrites["https://refused.example"] = refused
    try:
        yield Linked(servers, refused)
    finally:
        stop(servers)
        hole.close()


def check(linked: Linked, path: str, trusted: list[str], **options: Any) -> DatasetReport:
    with Fetcher(policy=AddressPolicy(trusted)) as fetcher:
        return check_landing_page(linked.url(path), fetcher, CheckOptions(**options))


def no_landing_page_failure(report: DatasetReport) -> None:
    """The landing page answered 200 and nothing says otherwise."""
    data = to_json(report)
    assert data["status"] == 200
    assert data["verdict"] != "could-not-check"
    every = [*data["findings"], *(f for d in data["datasets"] for f in d["findings"])]
    assert not [f for f in every if f["code"].startswith(f"{Stage.FETCH}/")]
    text = render_text(report)
    assert "COULD NOT CHECK" not in text
    assert "  fetch (the landing page over HTTP): ok" in text


def finding(report: DatasetReport, code: str) -> dict[str, Any]:
    [found] = [f for f in to_json(report)["findings"] if f["code"] == code]
    return dict(found)


def row(text: str, rel: str, href: str) -> str:
    """The signpost table's row for one link of the text report."""
    [line] = [x for x in text.splitlines() if x.split()[:2] == [rel, href] and x.startswith("  ")]
    return line


def test_a_refused_link_set_is_reported_under_its_link(linked: Linked) -> None:
    trusted = [*linked.origins(), linked.refused]  # reachable by policy: the socket refuses
    report = check(linked, "/dataset/ocean-cores", trusted)
    no_landing_page_failure(report)
    assert to_json(report)["verdict"] == "harvestable"
    href = f"{linked.refused}/linkset/ocean-cores.json"
    found = finding(report, "signposting/linkset-unreachable")
    assert found["where"] == f"rel=linkset {href}"
    assert found["url"] == href
    assert "refused the connection" in found["message"]
    assert "linkset-unreachable" in row(render_text(report), "linkset", href)


def test_a_link_set_on_a_refused_address_is_reported_under_its_link(linked: Linked) -> None:
    report = check(linked, "/dataset/ocean-cores", linked.origins())  # its port: not trusted
    no_landing_page_failure(report)
    href = f"{linked.refused}/linkset/ocean-cores.json"
    found = finding(report, "signposting/linkset-unreachable")
    assert found["where"] == f"rel=linkset {href}"
    assert "loopback" in found["message"] or "not public" in found["message"]


def test_a_describedby_record_that_fails_is_reported_under_its_link(linked: Linked) -> None:
    href = linked.url("/api/records/buoy.jsonld")
    for status in (500, 404):
        linked.site.extra_rules = {"/api/records/buoy.jsonld": {"status": status}}
        report = check(linked, "/dataset/buoy", linked.origins())
        no_landing_page_failure(report)
        assert to_json(report)["verdict"] == "not-harvestable"  # no Dataset was read
        found = finding(report, LINKED_UNREACHABLE)
        assert found["where"] == f"rel=describedby {href}"
        assert f"answered HTTP {status}" in found["message"]
        assert LINKED_UNREACHABLE in row(render_text(report), "describedby", href)
    # the same record answering gives the Dataset: the link was the only thing wrong
    linked.site.extra_rules = {}
    report = check(linked, "/dataset/buoy", linked.origins(), profile="mnlite")
    assert to_json(report)["verdict"] == "harvestable"
    assert LINKED_UNREACHABLE not in {f.code for f in report.findings}


def test_a_describedby_on_a_host_that_does_not_resolve(linked: Linked) -> None:
    report = check(linked, "/dataset/buoy-nxdomain", linked.origins(), follow=True)
    no_landing_page_failure(report)
    href = "https://metadata.nonexistent.invalid/records/buoy-46026.jsonld"
    found = finding(report, LINKED_UNREACHABLE)
    assert found["where"] == f"rel=describedby {href}"
    assert "does not resolve" in found["message"]
    assert "gaierror" not in found["message"] and "Errno" not in found["message"]
    # --follow does not ask the same target again, nor say the same thing twice
    assert "signposting/follow-unreachable" not in {f.code for f in report.findings}
    line = row(render_text(report), "describedby", href)
    assert LINKED_UNREACHABLE in line


def test_a_linked_record_over_the_size_cap(linked: Linked) -> None:
    # the page is smaller than the cap, the record it links to is not
    limits = DEFAULT_LIMITS.with_overrides({"max_page_bytes": 700})
    with Fetcher(limits, policy=AddressPolicy(linked.origins())) as fetcher:
        report = check_landing_page(
            linked.url("/dataset/buoy"), fetcher, CheckOptions(limits=limits)
        )
    no_landing_page_failure(report)
    found = finding(report, LINKED_UNREACHABLE)
    assert found["where"] == f"rel=describedby {linked.url('/api/records/buoy.jsonld')}"
    assert "700" in found["message"]


def test_follow_reports_a_describedby_that_fails_under_its_link(linked: Linked) -> None:
    report = check(linked, "/dataset/ocean-cores", linked.origins(), follow=True)
    no_landing_page_failure(report)
    assert report.harvestable
    href = linked.url("/meta/ocean-cores/datacite.xml")
    found = finding(report, "signposting/follow-unreachable")
    assert found["where"] == f"rel=describedby {href}"
    assert "HTTP 500" in found["message"]
    assert "follow-unreachable" in row(render_text(report), "describedby", href)


def test_check_dataset_json_and_exit_code(linked: Linked) -> None:
    """The command: --follow reads the link set elsewhere, whose address it may not reach."""
    done = run_in_process(
        ["check-dataset", "--json", "--follow", linked.url("/dataset/ocean-cores")], ROOT
    )
    data = json.loads(done.stdout)
    assert done.returncode == 0, data["findings"]
    assert (data["verdict"], data["status"]) == ("harvestable", 200)
    assert not [f for f in data["findings"] if f["code"].startswith("fetch/")]
    href = f"{linked.refused}/linkset/ocean-cores.json"
    [found] = [f for f in data["findings"] if f["code"] == "signposting/linkset-unreachable"]
    assert found["where"] == f"rel=linkset {href}"


def test_a_cite_as_that_does_not_resolve_is_reported_under_its_link(linked: Linked) -> None:
    """--follow resolves cite-as; a resolver that refuses is about the link, not the page."""
    rules = json.loads((ROOT / "fixtures/sites/sp-linked/_headers.json").read_text())
    page = dict(rules["/dataset/ocean-cores"])
    resolver = "https://refused.example/10.5072/sbb-cores-2018"
    page["headers"] = [
        [name, value.replace("https://doi.example/10.5072/sbb-cores-2018", resolver)]
        for name, value in page["headers"]
    ]
    linked.site.extra_rules = {"/dataset/ocean-cores": page}
    trusted = [*linked.origins(), linked.refused]
    report = check(linked, "/dataset/ocean-cores", trusted, follow=True)
    no_landing_page_failure(report)
    assert report.harvestable
    href = f"{linked.refused}/10.5072/sbb-cores-2018"
    [found] = [
        f
        for f in to_json(report)["findings"]
        if f["code"] == "signposting/follow-unreachable" and "cite-as" in f["where"]
    ]
    assert found["where"] == f"rel=cite-as {href}"
    assert "refused the connection" in found["message"]
    assert "follow-unreachable" in row(render_text(report), "cite-as", href)
