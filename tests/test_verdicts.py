"""Every verdict is explained: each fixture landing page through check_landing_page.

A repository manager reading NOT HARVESTABLE must find an error finding saying
why; a HARVESTABLE page must carry no page-level error. The pages are every
file and `_headers.json` rule under `/dataset/` of the page-* and sp-* fixture
sites, so a new fixture page is checked the day it is added.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from adapter.findings import Severity
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS
from adapter.models import DatasetReport
from adapter.pipeline import CheckOptions, check_landing_page
from tests.support.fixture_server import SITES, SiteServer, start_site, stop

FAST_FAIL = {"read_timeout": 0.5, "total_timeout": 1.5, "max_retries": 1}


def _pages() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for root in sorted(p for p in SITES.iterdir() if p.name.startswith(("page-", "sp-"))):
        found = {"/" + p.relative_to(root).as_posix() for p in root.glob("dataset/**/*")}
        found = {p for p in found if (root / p[1:]).is_file()}
        rules = root / "_headers.json"
        if rules.exists():
            found |= {k for k in json.loads(rules.read_text("utf-8")) if k.startswith("/dataset/")}
        out.extend((root.name, path) for path in sorted(found))
    return out


PAGES = _pages()


class Sites:
    def __init__(self) -> None:
        self.servers: dict[str, list[SiteServer]] = {}

    def check(self, site: str, path: str) -> DatasetReport:
        if site not in self.servers:
            self.servers[site] = start_site(site)
        main = self.servers[site][0]
        limits = DEFAULT_LIMITS.with_overrides(FAST_FAIL)
        policy = AddressPolicy(list(main.rewrites.values()))
        with Fetcher(limits, policy=policy, retry_base_delay=0.01) as fetcher:
            return check_landing_page(main.url(path), fetcher, CheckOptions())


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    s = Sites()
    yield s
    for servers in s.servers.values():
        stop(servers)


def test_there_are_pages_of_every_kind() -> None:
    assert len(PAGES) >= 80
    assert ("page-extract", "/dataset/all-broken.html") in PAGES


@pytest.mark.parametrize(("site", "path"), PAGES, ids=[f"{s}{p}" for s, p in PAGES])
def test_the_verdict_is_explained(sites: Sites, site: str, path: str) -> None:
    report = sites.check(site, path)
    errors = [f for f in report.all_findings() if f.severity is Severity.ERROR]
    page_errors = [f for f in report.findings if f.severity is Severity.ERROR]
    if report.harvestable:
        assert not page_errors
        if len(report.datasets) <= 1:
            assert not errors
    elif not report.not_modified:
        codes = sorted(f.code for f in report.all_findings())
        assert errors, f"NOT HARVESTABLE without an error finding; findings: {codes}"


def test_a_page_whose_only_blocks_are_broken_says_so(sites: Sites) -> None:
    report = sites.check("page-extract", "/dataset/all-broken.html")
    assert not report.harvestable
    (error,) = [f for f in report.all_findings() if f.severity is Severity.ERROR]
    assert error.code == "normalize/no-dataset"
    assert "block 1" in error.message and "block 2" in error.message
    assert "could not be read" in error.message


def test_a_broken_json_ld_document_says_so(sites: Sites) -> None:
    report = sites.check("page-extract", "/dataset/broken-document")
    (error,) = [f for f in report.all_findings() if f.severity is Severity.ERROR]
    assert error.code == "normalize/no-dataset"
    assert "document: not valid JSON" in error.message
