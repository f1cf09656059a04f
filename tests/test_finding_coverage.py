"""Every finding code of the page stages is triggered by a fixture over real HTTP.

`CASES` says which codes each fixture page must produce; `test_case` runs each
page through `check_landing_page` against the fixture server and checks it;
`test_every_code_has_a_fixture` fails as soon as a code is declared in an area
listed in `COVERED_AREAS` and no case triggers it. Other areas (robots/,
sitemap/, signposting/, ...) add their prefix here when they add their cases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from adapter.findings import catalogue
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS
from adapter.pipeline import CheckOptions, check_landing_page
from tests.support.fixture_server import SiteServer

COVERED_AREAS = ("fetch/", "extract/", "normalize/", "dataone/", "soso/")


@dataclass(frozen=True)
class Case:
    site: str
    path: str
    codes: frozenset[str]
    harvestable: bool
    limits: dict[str, Any] = field(default_factory=dict)  # CheckOptions.limits overrides
    fetch_limits: dict[str, Any] = field(default_factory=dict)  # the fetcher's limits
    required: frozenset[str] = frozenset()
    profile: str = "dataone"

    def __str__(self) -> str:
        return f"{self.site}{self.path}"


def case(site: str, path: str, *codes: str, ok: bool = False, **kw: Any) -> Case:
    return Case(site, path, frozenset(codes), ok, **kw)


FAST_FAIL = {"read_timeout": 0.5, "total_timeout": 1.5, "max_retries": 1}

CASES = [
    # fetch: the landing page over HTTP
    case("page-http", "/dataset/gone", "fetch/gone"),
    case("page-http", "/dataset/withdrawn", "fetch/gone"),
    case("page-http", "/dataset/broken", "fetch/http-error"),
    case("page-http", "/dataset/loop-a", "fetch/redirect-loop"),
    case("page-http", "/dataset/moved", "fetch/too-many-redirects"),
    case("page-http", "/dataset/to-metadata-service", "fetch/unsafe-url"),
    case("page-http", "/dataset/bad-gzip", "fetch/bad-content-encoding"),
    case("page-http", "/dataset/endless", "fetch/too-large"),
    case("page-http", "/dataset/hang", "fetch/timeout", fetch_limits=FAST_FAIL),
    case("page-http", "/dataset/reset", "fetch/connection-failed", fetch_limits=FAST_FAIL),
    case("page-http", "/dataset/busy", "fetch/host-paused"),
    case("page-http", "/dataset/slow-down", "fetch/rate-limited", fetch_limits=FAST_FAIL),
    case("page-http", "/dataset/huge-header", "fetch/headers-too-large"),
    # a 304 to a request with no validators is no page (and no "not modified")
    case("real-shapes", "/dataset/stale-cache", "fetch/http-error"),
    case("real-shapes", "/sitemap.xml", "extract/sitemap-given"),
    # a linked document that is gone is about its link: the page answered
    case(
        "page-http",
        "/dataset/linked-missing.html",
        "extract/linked-jsonld-unreachable",
        "extract/no-jsonld",
    ),
    # extract: the JSON-LD blocks of the page
    case("page-extract", "/dataset/no-jsonld.html", "extract/no-jsonld"),
    case("page-extract", "/dataset/spa.html", "extract/no-jsonld", "extract/js-rendered"),
    case("page-extract", "/dataset/broken.html", "extract/invalid-json", ok=True),
    case("page-extract", "/dataset/repaired.html", "extract/repaired-json", ok=True),
    case("page-extract", "/dataset/empty-block.html", "extract/empty-block", ok=True),
    case("page-extract", "/dataset/deep.html", "extract/too-deep", ok=True),
    case(
        "page-extract",
        "/dataset/plain.html",
        "extract/too-many-nodes",
        "normalize/dataset-over-limit",  # the cap bit: not "no Dataset"
        limits={"max_json_nodes": 20},
    ),
    case(
        "page-extract",
        "/dataset/broken.html",
        "extract/too-many-blocks",
        limits={"max_jsonld_blocks": 1},
    ),
    case(
        "page-extract",
        "/dataset/plain.html",
        "extract/body-too-large",
        limits={"max_page_bytes": 1000},
    ),
    case("page-extract", "/dataset/preview", "extract/not-html"),
    case("page-extract", "/dataset/record", "extract/not-jsonld"),
    case("page-extract", "/dataset/as-text", "extract/wrong-content-type", ok=True),
    case("page-extract", "/dataset/latin1.html", "extract/invalid-encoding", ok=True),
    case("page-extract", "/dataset/klingon", "extract/unknown-charset", ok=True),
    case(
        "page-extract",
        "/dataset/microdata.html",
        "extract/non-jsonld-markup",
        ok=True,
        profile="mnlite",
    ),
    case(
        "page-good",
        "/dataset/linked.html",
        "extract/linked-jsonld-used",
        "normalize/https-namespace",
        ok=True,
    ),
    # normalize: JSON-LD to a framed schema.org Dataset
    case("page-extract", "/dataset/dataset-typo.html", "normalize/no-dataset"),
    case("page-extract", "/dataset/vocab-no-slash.html", "normalize/no-dataset"),
    case("page-extract", "/dataset/remote-context.html", "normalize/remote-context", ok=True),
    case("page-extract", "/dataset/invalid-jsonld.html", "normalize/invalid-jsonld", ok=True),
    case(
        "page-extract", "/dataset/no-context.html", "normalize/no-context", "normalize/no-dataset"
    ),
    case("page-extract", "/dataset/fan-out.html", "normalize/embedding-too-large", ok=True),
    case(
        "real-shapes",
        "/dataset/fan-out-only.html",
        "normalize/embedding-too-large",
        "normalize/dataset-over-limit",
    ),
    # 214 Datasets in one array, one funder described in each: framing merges it
    case("real-shapes", "/dataset/many.json", ok=True, profile="mnlite"),
    case(
        "real-shapes",
        "/dataset/https-type.html",
        "normalize/https-dataset-type",
        ok=True,
        profile="mnlite",
    ),
    # a CDIF catalog record in subjectOf is part of its Dataset (the page still lacks a DOI
    # identifier: cite-as alone names it)
    case("sp-cross", "/dataset/c4", "normalize/embedded-dataset", "dataone/identifier-not-doi"),
    # dataone: what DataONE needs from the Dataset
    case(
        "page-bad",
        "/dataset/doi-null.html",
        "dataone/identifier-empty",
        "dataone/date-modified-missing",
        "dataone/wrong-property",
        "dataone/distribution-incomplete",
    ),
    case(
        "page-bad",
        "/dataset/free-text.html",
        "dataone/identifier-not-doi",
        "dataone/encoding-incomplete",
        "dataone/encoding-format-unknown",
    ),
    case(
        "page-bad",
        "/dataset/no-identifier.html",
        "dataone/doi-not-in-identifier",  # no identifier, the DOI in sameAs: one rule
        "dataone/id-missing",
        "dataone/name-missing",
        "dataone/description-missing",
        "dataone/url-missing",
        "dataone/encoding-missing",
        "dataone/distribution-missing",
    ),
    case(
        "page-bad",
        "/dataset/sameas-doi.html",
        "dataone/doi-not-in-identifier",
        ok=True,
        profile="mnlite",
    ),
    # OpenTopography: a local identifier and the DOI in url, or (the same rule) in @id
    case("real-shapes", "/dataset/doi-in-url.html", "dataone/doi-not-in-identifier", ok=True),
    case("real-shapes", "/dataset/doi-in-id.html", "dataone/doi-not-in-identifier", ok=True),
    case(
        "real-shapes",
        "/dataset/ckan-no-identifier.html",
        "dataone/identifier-missing",
        "dataone/dangling-reference",
    ),
    # placeholders and script/data addresses where URLs belong: no requirement met by them
    case(
        "real-shapes",
        "/dataset/placeholders.html",
        "dataone/not-a-url",
        "dataone/encoding-incomplete",
        "dataone/distribution-incomplete",
        "dataone/id-missing",
        "dataone/url-missing",
    ),
    # requirement profiles (these pages lack the ISO metadata copy the dataone profile asks,
    # so the cases about other things use mnlite)
    case("page-profiles", "/dataset/no-copy.html", "dataone/profile-unmet"),
    case("page-profiles", "/dataset/no-copy.html", ok=True, profile="mnlite"),
    case(
        "page-profiles",
        "/dataset/local-id.html",
        "dataone/identifier-not-doi",
        "dataone/identifier-not-persistent",
        ok=True,
        profile="mnlite",
    ),
    case(
        "page-profiles", "/dataset/ark.html", "dataone/identifier-not-doi", "dataone/profile-unmet"
    ),
    case(
        "page-bad", "/dataset/several-dois.html", "dataone/several-dois", ok=True, profile="mnlite"
    ),
    case(
        "page-bad",
        "/dataset/two.html",
        "dataone/identifier-empty",
        "dataone/description-missing",
        ok=True,
    ),
    case(
        "page-bad",
        "/dataset/free-text.html",
        "dataone/required-check-failed",
        required=frozenset({"encoding"}),
    ),
    # soso: science-on-schema.org recommendations (never blocking under the default profile)
    case(
        "page-soso",
        "/dataset/bare.html",
        "soso/license-missing",
        "soso/creator-missing",
        "soso/spatial-missing",
        "soso/temporal-missing",
        "soso/variables-missing",
        "soso/date-published-missing",
        "soso/free-missing",
        "soso/funding-missing",
        ok=True,
    ),
    case(
        "page-soso",
        "/dataset/people.html",
        "soso/license-not-uri",
        "soso/license-unknown-uri",
        "soso/orcid-invalid",
        "soso/orcid-not-uri",
        "soso/creator-no-orcid",
        ok=True,
    ),
    case(
        "page-soso",
        "/dataset/coverage.html",
        "soso/spatial-not-place",
        "soso/spatial-no-geo",
        "soso/box-order",
        "soso/box-antimeridian",
        "soso/geo-out-of-range",
        "soso/geo-malformed",
        "soso/crs-not-wgs84",
        "soso/temporal-order",
        "soso/temporal-invalid",
        ok=True,
    ),
    # dataone/index-: what DataONE's search index would miss or garble (warnings, never blocking)
    case(
        "page-index",
        "/dataset/people.html",
        "dataone/index-author-not-creator",
        "dataone/index-geo-not-box",
        "dataone/index-temporal-unsplit",
        "dataone/index-date-unread",
        "dataone/index-license-unread",
        "dataone/index-funding-unread",
        "dataone/index-garbled-text",
        ok=True,
    ),
    case(
        "page-index",
        "/dataset/boxes.html",
        "dataone/index-creator-unnamed",
        "dataone/index-box-dropped",
        "dataone/index-box-inverted",
        "dataone/index-license-unnamed",
        ok=True,
    ),
    case(
        "page-soso",
        "/dataset/misc.html",
        "soso/keywords-missing",
        "soso/publisher-missing",
        "soso/version-missing",
        "soso/variable-not-propertyvalue",
        "soso/variable-no-name",
        "soso/description-length",
        "soso/date-published-invalid",
        "soso/free-not-boolean",
        "soso/funding-no-funder",
        "soso/checksum-missing",
        "soso/checksum-malformed",
        ok=True,
    ),
]


def run(serve_site: Callable[[str], SiteServer], c: Case) -> Any:
    server = serve_site(c.site)
    limits = DEFAULT_LIMITS.with_overrides(c.fetch_limits)
    options = CheckOptions(
        limits=DEFAULT_LIMITS.with_overrides(c.limits), required=c.required, profile=c.profile
    )
    with Fetcher(limits, policy=AddressPolicy([server.origin]), retry_base_delay=0.01) as fetcher:
        return check_landing_page(server.url(c.path), fetcher, options)


SLOW_CASES = {"real-shapes/dataset/many.json"}  # 214 Datasets on one page: 1.4 s of CPU


@pytest.mark.parametrize(
    "c",
    [pytest.param(c, marks=pytest.mark.slow) if str(c) in SLOW_CASES else c for c in CASES],
    ids=str,
)
def test_case(serve_site: Callable[[str], SiteServer], c: Case) -> None:
    report = run(serve_site, c)
    found = {f.code for f in report.all_findings()}
    assert c.codes <= found, f"missing {sorted(c.codes - found)}; got {sorted(found)}"
    assert report.harvestable is c.harvestable, sorted(found)
    for f in report.all_findings():
        assert f.url.startswith("http://127.0.0.1:"), f  # every finding names its URL
        assert f.message


def test_a_complete_soso_page_gets_no_recommendation(
    serve_site: Callable[[str], SiteServer],
) -> None:
    report = run(serve_site, case("page-soso", "/dataset/complete.html", ok=True))
    assert report.harvestable
    assert [f.code for f in report.all_findings() if f.code.startswith("soso/")] == []


def test_every_code_has_a_fixture() -> None:
    declared = {t.code for t in catalogue() if t.code.startswith(COVERED_AREAS)}
    covered = set().union(*(c.codes for c in CASES))
    assert not declared - covered, f"codes no fixture triggers: {sorted(declared - covered)}"
    assert not covered - declared, f"cases expect undeclared codes: {sorted(covered - declared)}"
