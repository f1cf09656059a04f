"""Signposting over real HTTP: fixture sites (fixtures/sites/sp-*) through check_landing_page.

`CASES` says which signposting codes each page must produce; each site is served once per
module and every case runs once; `test_every_signposting_code_has_a_fixture` fails as
soon as a `signposting/` code is declared that no case (here or in test_resolve.py)
triggers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from adapter.findings import Severity, catalogue
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS
from adapter.models import DatasetReport, Link
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.report.jsonview import to_json
from adapter.report.text import render_text
from adapter.signposting.links import group
from tests.signposting.test_resolve import RESOLVE_CODES
from tests.support.fixture_server import SiteServer, start_site, stop


@dataclass(frozen=True)
class Case:
    site: str
    path: str
    codes: frozenset[str]
    follow: bool = False
    elsewhere: bool = True  # CheckOptions.linksets_elsewhere (check-dataset: --follow)
    limits: tuple[tuple[str, Any], ...] = ()  # Limits overrides
    signmap: tuple[tuple[str, str], ...] = ()  # (rel, href) Signmap links for the page

    def __str__(self) -> str:
        return f"{self.site}{self.path}"


def case(
    site: str, path: str, *codes: str, limits: dict[str, Any] | None = None, **kw: Any
) -> Case:
    found = frozenset(f"signposting/{c}" for c in codes)
    return Case(site, path, found, limits=tuple(sorted((limits or {}).items())), **kw)


CASES = [
    case("real-shapes", "/dataset/linkset-elsewhere", "linkset-not-fetched", elsewhere=False),
    case(
        "sp-messy",
        "/dataset/commas",
        "link-missing-comma",
        "link-doubled-bracket",
        "link-malformed",
        "link-without-rel",
        "link-repeated-param",
    ),
    case(
        "sp-messy",
        "/dataset/body-links",
        "html-link-in-body",
        "html-link-without-href",
        "type-missing",
    ),
    case(
        "sp-messy",
        "/dataset/disagree",
        "sources-disagree",
        "cite-as-several",
        "conflicting-attributes",
        "describedby-type-missing",
        "cite-as-mismatch",
    ),
    case(
        "sp-messy",
        "/dataset/dataverse",
        "linkset-type-missing",
        "linkset-wrapped",
        "linkset-media-type",
        "linkset-invalid",
    ),
    case(
        "sp-messy", "/dataset/misspelled", "linkset-media-type", "linkset-anchor", "linkset-invalid"
    ),
    case("sp-messy", "/dataset/other-anchor", "linkset-not-for-page", "absent", "proposal"),
    case("sp-messy", "/dataset/broken-linkset", "linkset-invalid", "linkset-unreachable"),
    case("sp-messy", "/dataset/none", "absent", "proposal"),
    case("sp-messy", "/dataset/many", "too-many-links", limits={"max_links": 10}),
    case(
        "sp-cross",
        "/dataset/c1",
        "cite-as-mismatch",
        "type-not-dataset",
        "type-aboutpage-missing",
        "type-not-in-dataset",
        "author-not-in-dataset",
        "author-not-linked",
        "license-form",
        "license-mismatch",
        "license-several",
        "collection-mismatch",
        "describes-mismatch",
        "proposal",
    ),
    case(
        "sp-cross",
        "/dataset/c2",
        "cite-as-missing",
        "type-missing",
        "describedby-missing",
        "describedby-not-linked",
        "item-type-missing",
        "item-not-in-dataset",
        "item-not-linked",
        "license-not-linked",
    ),
    case(
        "sp-cross",
        "/dataset/c3",
        "describedby-profile-mismatch",
        "describedby-profile-missing",
        "describedby-type-mismatch",
        "describedby-not-in-dataset",
        "item-type-mismatch",
    ),
    case("sp-cross", "/dataset/c4", "cite-as-doi-only", "describes-mismatch"),
    case("sp-cross", "/dataset/two", "several-datasets"),
    case(
        "sp-follow",
        "/dataset/f1",
        "follow-cite-as-elsewhere",
        "follow-no-collection",
        "follow-no-describes",
        "follow-type-mismatch",
        "follow-unreachable",
        "cite-as-form",
        follow=True,
    ),
    case("sp-follow", "/dataset/f1", "follow-limit", follow=True, limits={"max_follow": 2}),
    case(
        "sp-good",
        "/dataset/7",
        "signmap-differs",
        "signmap-missing-on-page",
        signmap=(
            ("Cite-As", "https://doi.org/10.5061/dryad.sp7-old"),
            ("describedby", "https://repo.example/meta/7/datacite.xml"),
            ("item", "https://repo.example/files/7/cores.csv"),
        ),
    ),
]


@dataclass
class Run:
    report: DatasetReport
    server: SiteServer
    log: list[tuple[str, str]]  # (method, path) on every server of the site, in order


class Sites:
    """Each fixture site started once for the module; reports cached per case."""

    def __init__(self) -> None:
        self.servers: dict[str, list[SiteServer]] = {}
        self.runs: dict[Case, Run] = {}

    def server(self, site: str) -> list[SiteServer]:
        if site not in self.servers:
            self.servers[site] = start_site(site)
        return self.servers[site]

    def run(self, c: Case) -> Run:
        if c not in self.runs:
            servers = self.server(c.site)
            main = servers[0]
            for s in servers:
                s.log.clear()
            limits = DEFAULT_LIMITS.with_overrides(dict(c.limits))
            links = [
                Link(href=main.rewrite(h), rel=rel, anchor=main.url(c.path), source="signmap")
                for rel, h in c.signmap
            ]
            policy = AddressPolicy(list(main.rewrites.values()))
            with Fetcher(limits, policy=policy) as fetcher:
                report = check_landing_page(
                    main.url(c.path),
                    fetcher,
                    CheckOptions(limits=limits, follow=c.follow, linksets_elsewhere=c.elsewhere),
                    sitemap_links=links,
                )
            log = [(e.method, e.path) for s in servers for e in s.log]
            self.runs[c] = Run(report, main, log)
        return self.runs[c]

    def close(self) -> None:
        for servers in self.servers.values():
            stop(servers)


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    s = Sites()
    yield s
    s.close()


def codes(report: DatasetReport) -> set[str]:
    return {f.code for f in report.all_findings()}


@pytest.mark.parametrize("c", CASES, ids=str)
def test_case(sites: Sites, c: Case) -> None:
    report = sites.run(c).report
    found = codes(report)
    assert c.codes <= found, f"missing {sorted(c.codes - found)}; got {sorted(found)}"
    for f in report.all_findings():
        assert f.url.startswith("http://127.0.0.1:"), f  # every finding names a URL
        assert f.message.strip()
    render_text(report)  # the human report never fails on these pages
    json.dumps(to_json(report))


def test_every_signposting_code_has_a_fixture(sites: Sites) -> None:
    declared = {t.code for t in catalogue() if t.code.startswith("signposting/")}
    triggered = set(RESOLVE_CODES)
    for c in CASES:
        triggered |= codes(sites.run(c).report)
    assert declared - triggered == set()


def test_clean_page_reads_every_source(sites: Sites) -> None:
    run = sites.run(case("sp-good", "/dataset/7"))
    report = run.report
    signposting = [f for f in report.all_findings() if f.code.startswith("signposting/")]
    assert [f.code for f in signposting] == ["signposting/cite-as-form"]  # a fake resolver
    # its metadata copy is EML: all it lacks for the default dataone profile is the ISO one
    [dataset] = report.datasets
    assert [i.name for i in dataset.checklist if i.blocking and not i.met] == ["encoding"]
    by_source = {s.source for s in report.signposts}
    assert by_source == {"header", "html", "linkset"}
    cores = next(
        s
        for s in group(report.signposts)
        if s.rel == "item" and s.href.endswith("/files/7/cores.csv")
    )
    assert cores.sources == ("header", "html", "linkset") and cores.type == "text/csv"
    # the comma inside a target survived every source
    assert any(s.href.endswith("/files/7/photos,2019.zip") for s in report.signposts)
    # both link set formats were fetched, each once
    assert run.log.count(("GET", "/linkset/7.json")) == 1
    assert run.log.count(("GET", "/linkset/7.txt")) == 1
    # links about other resources are kept (for back-link checks) but do not count as the page's
    backs = [s for s in report.signposts if s.rel in ("collection", "describes")]
    assert backs and all(not s.anchor.endswith("/dataset/7") for s in backs)
    text = render_text(report)
    assert "Signposts of the landing page" in text and "header, html, linkset" in text
    assert to_json(report)["signposts"][0].keys() >= {
        "rel",
        "href",
        "type",
        "profile",
        "anchor",
        "source",
    }


def test_level_two_only_page(sites: Sites) -> None:
    report = sites.run(case("sp-good", "/dataset/8")).report
    assert not [
        f
        for f in report.all_findings()
        if f.code.startswith("signposting/") and f.severity is not Severity.INFO
    ]
    assert {s.rel for s in report.signposts if s.source == "linkset"} >= {
        "cite-as",
        "describedby",
        "item",
        "license",
        "author",
        "type",
    }


def test_follow_on_a_clean_page_uses_head_only(sites: Sites) -> None:
    run = sites.run(case("sp-good", "/dataset/7", follow=True))
    assert not [f for f in run.report.all_findings() if "follow-" in f.code]
    visits = [(m, p) for m, p in run.log if p.startswith(("/files/", "/meta/", "/10."))]
    assert {m for m, _ in visits} == {"HEAD"}
    assert {p for _, p in visits} == {
        "/files/7/cores.csv",
        "/files/7/photos,2019.zip",
        "/meta/7/eml.xml",
        "/10.5061/dryad.sp7",
    }


def test_follow_gets_only_html_targets_and_stays_bounded(sites: Sites) -> None:
    run = sites.run(CASES[-3])
    gets = [p for m, p in run.log if m == "GET" and p.startswith("/files/")]
    assert gets == ["/files/f1/readme"]  # its back-link is in its <head>
    messages = " ".join(f.message for f in run.report.findings if "follow-" in f.code)
    assert "readme" not in messages  # found the collection link there
    limited = sites.run(CASES[-2])
    visited = {p for m, p in limited.log if p.startswith(("/files/", "/meta/", "/10."))}
    assert visited == {"/10.5072/follow.1", "/meta/f1.xml"}  # cite-as first, then metadata


def test_signmap_links_join_the_page_links(sites: Sites) -> None:
    report = sites.run(CASES[-1]).report
    cores = next(
        s
        for s in group(report.signposts)
        if s.rel == "item" and s.href.endswith("/files/7/cores.csv")
    )
    assert "signmap" in cores.sources
    missing = [f for f in report.findings if f.code == "signposting/signmap-missing-on-page"]
    assert len(missing) == 1 and "datacite.xml" in missing[0].message


def test_several_datasets_are_checked_against_the_one_cite_as_names(sites: Sites) -> None:
    report = sites.run(case("sp-cross", "/dataset/two")).report
    note = next(f for f in report.findings if f.code == "signposting/several-datasets")
    assert "10.5072/cross.52" in note.message


def test_proposal_carries_the_fix(sites: Sites) -> None:
    report = sites.run(case("sp-messy", "/dataset/none")).report
    proposal = next(f for f in report.findings if f.code == "signposting/proposal")
    assert '<https://doi.org/10.5072/messy.8> ; rel="cite-as"' in proposal.message
    assert '<link rel="item" href="http://127.0.0.1:' in proposal.message


def test_a_cdif_catalog_record_is_part_of_its_dataset(sites: Sites) -> None:
    report = sites.run(case("sp-cross", "/dataset/c4")).report
    assert len(report.datasets) == 1
    (dataset,) = report.datasets
    assert dataset.id is not None and dataset.id.endswith("/dataset/c4")
    assert dataset.framed["subjectOf"]["@id"].endswith("/record/c4")  # still embedded
    found = codes(report)
    assert "normalize/embedded-dataset" in found
    assert "signposting/several-datasets" not in found
    errors = {f.code for f in report.all_findings() if f.severity is Severity.ERROR}
    assert errors == {"dataone/profile-unmet"}
    # no DOI identifier, and (a CDIF record being no metadata copy) no ISO copy
    unmet = [(i.name, i.codes) for i in dataset.checklist if i.blocking and not i.met]
    assert unmet == [
        ("doi-identifier", ("dataone/identifier-not-doi",)),
        ("encoding", ("dataone/encoding-missing",)),
    ]


def test_a_linkset_on_another_host_is_fetched_only_when_asked(sites: Sites) -> None:
    unasked = sites.run(
        case("real-shapes", "/dataset/linkset-elsewhere", "linkset-not-fetched", elsewhere=False)
    )
    assert not [path for _, path in unasked.log if path.startswith("/linkset/")]
    assert not [s for s in unasked.report.signposts if s.source == "linkset"]
    asked = sites.run(case("real-shapes", "/dataset/linkset-elsewhere"))
    assert ("GET", "/linkset/rain01.json") in asked.log
    assert {s.rel for s in asked.report.signposts if s.source == "linkset"} >= {"cite-as", "item"}
    assert "signposting/linkset-not-fetched" not in codes(asked.report)


def test_check_dataset_visits_no_other_host_without_follow(sites: Sites) -> None:
    from click.testing import CliRunner

    from adapter.commands.check import check_dataset_command

    servers = start_site("real-shapes")
    try:
        url = servers[0].url("/dataset/linkset-elsewhere")
        out = CliRunner().invoke(check_dataset_command, [url, "--json"]).output
        assert "signposting/linkset-not-fetched" in out  # said, not silently skipped
        assert all(not s.log for s in servers[1:])  # api.example was never asked
    finally:
        stop(servers)
