"""check_landing_page end to end over real HTTP: what the sync and check-dataset rely on."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from typing import Any

import pytest

from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import DatasetReport, Link
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.report.jsonview import to_json
from adapter.report.text import render_text
from tests.support.fixture_server import SiteServer

Serve = Callable[[str], SiteServer]


def check(
    server: SiteServer, path: str, options: CheckOptions | None = None, **kw: Any
) -> DatasetReport:
    with Fetcher(policy=AddressPolicy([server.origin])) as fetcher:
        return check_landing_page(server.url(path), fetcher, options or CheckOptions(), **kw)


def test_good_page_through_a_redirect(serve_site: Serve) -> None:
    server = serve_site("page-good")
    report = check(server, "/dataset/1")
    assert report.harvestable
    assert report.status == 200
    assert report.final_url == server.url("/dataset/1.html")
    assert report.path == [server.url("/dataset/1"), server.url("/dataset/1.html")]
    assert report.fetched is not None and report.fetched.body.startswith(b"<!DOCTYPE html>")
    [ds] = report.datasets
    assert ds.id == server.url("/dataset/1.html#dataset")
    assert ds.doi == "10.5066/f7vx0dmq"
    assert ds.identifiers == ["doi:10.5066/F7VX0DMQ"]
    assert [(r.content_url, r.encoding_format) for r in ds.encoding] == [
        (server.url("/meta/1/iso19115.xml"), ("http://www.isotc211.org/2005/gmd",))
    ]
    assert [(r.content_url, r.encoding_format) for r in ds.distributions] == [
        (server.url("/files/1/zooplankton.csv"), ("text/csv",))
    ]
    assert ds.framed["name"] == "Zooplankton abundance, Lake Tahoe, 2010-2019"
    assert ds.original["@context"] == "https://schema.org/"
    assert not [f for f in report.all_findings() if f.severity == "error"]


def test_graph_with_subject_of_and_a_referenced_distribution(serve_site: Serve) -> None:
    server = serve_site("page-good")
    report = check(server, "/dataset/graph.html")
    [ds] = report.datasets
    # an EML copy is not the ISO TC 211 one the dataone profile asks for (it was harvestable
    # before profiles); mnlite takes it
    assert not report.harvestable
    unmet = [i.name for i in ds.checklist if i.blocking and not i.met]
    assert unmet == ["encoding"]
    assert check(server, "/dataset/graph.html", CheckOptions(profile="mnlite")).harvestable
    assert ds.doi == "10.6073/pasta/8a1b2c3d"
    assert [(r.property, r.content_url) for r in ds.encoding] == [
        ("subjectOf", server.url("/meta/graph/eml.xml"))
    ]
    assert ds.distributions[0].content_url == server.url("/files/graph/fluxes.csv")


def test_a_jsonld_landing_url_is_the_document(serve_site: Serve) -> None:
    server = serve_site("page-good")
    # mnlite: the document has no metadata copy, which the default dataone profile requires
    report = check(server, "/dataset/1.jsonld", CheckOptions(profile="mnlite"))
    assert report.harvestable
    [ds] = report.datasets
    assert ds.doi == "10.5061/dryad.hm55b"
    assert ds.identifiers[1].startswith("urn:uuid:")
    assert report.path == [server.url("/dataset/1.jsonld")]


def test_describedby_jsonld_is_fetched_when_the_page_has_none(serve_site: Serve) -> None:
    server = serve_site("page-good")
    report = check(server, "/dataset/linked.html")
    assert report.harvestable
    assert report.path[-1] == server.url("/meta/linked.jsonld")
    assert report.datasets[0].doi == "10.7289/v5sst46042"
    codes = {f.code for f in report.findings}
    assert "extract/linked-jsonld-used" in codes
    assert not codes & {"extract/no-jsonld", "normalize/no-dataset"}
    assert [r.path for r in server.log if r.method == "GET"] == [
        "/dataset/linked.html",
        "/meta/linked.jsonld",
    ]


def test_several_datasets_are_each_checked(serve_site: Serve) -> None:
    report = check(serve_site("page-bad"), "/dataset/two.html")
    assert [d.harvestable for d in report.datasets] == [True, False]
    assert report.harvestable  # one clean Dataset is enough
    assert report.datasets[0].doi == "10.6073/pasta/trout-temp"
    bad = {f.code for f in report.datasets[1].findings}
    assert {"dataone/identifier-empty", "dataone/description-missing"} <= bad
    # clean for DataONE; science-on-schema.org's recommendations (soso/) are advice only
    assert not [f for f in report.datasets[0].findings if not f.code.startswith("soso/")]
    assert all(f.severity != "error" for f in report.datasets[0].findings)


def test_required_checks_block_the_dataset(serve_site: Serve) -> None:
    server = serve_site("page-bad")
    lax = CheckOptions(profile="mnlite")  # the dataone profile would block the missing copy
    assert check(server, "/dataset/sameas-doi.html", lax).harvestable
    strict = CheckOptions(
        profile="mnlite", required=frozenset({"encoding", "dataone/doi-not-in-identifier"})
    )
    report = check(server, "/dataset/sameas-doi.html", strict)
    assert not report.harvestable
    [failed] = [f for f in report.datasets[0].findings if f.code == "dataone/required-check-failed"]
    assert "dataone/doi-not-in-identifier" in failed.message


def test_not_modified_returns_early(serve_site: Serve) -> None:
    server = serve_site("page-http")
    first = check(server, "/dataset/cached")
    assert first.harvestable and first.fetched is not None
    etag = first.fetched.etag
    again = check(server, "/dataset/cached", etag=etag)
    assert again.not_modified and again.status == 304
    assert again.datasets == [] and again.findings == []
    assert server.log[-1].headers.get("if-none-match") == etag


def test_gone_is_reported_for_the_sync_to_archive(serve_site: Serve) -> None:
    server = serve_site("page-http")
    report = check(server, "/dataset/withdrawn")
    [finding] = report.findings
    assert finding.code == "fetch/gone" and "410" in finding.message
    assert finding.url == server.url("/dataset/withdrawn")
    assert report.status == 410 and not report.harvestable


def test_sitemap_links_join_the_signposts(serve_site: Serve) -> None:
    server = serve_site("page-good")
    page = server.url("/dataset/1.html")
    signmap = Link("https://doi.org/10.5066/F7VX0DMQ", "cite-as", page, "signmap")
    report = check(server, "/dataset/1.html", sitemap_links=[signmap])
    assert signmap in report.signposts


def test_an_unreachable_page_is_a_finding_not_an_exception() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/dataset/1"
    with Fetcher(policy=AddressPolicy([url]), retry_base_delay=0.01) as fetcher:
        report = check_landing_page(url, fetcher)
    [finding] = report.findings
    assert finding.code == "fetch/connection-failed"
    assert url in finding.message
    assert report.fetched is None and report.path == [url]


def test_required_cite_as(serve_site: Serve) -> None:
    strict = CheckOptions(required=frozenset({"signposting/cite-as", "encoding"}))
    good = check(serve_site("page-good"), "/dataset/1.html", strict)
    assert good.harvestable, [f.code for f in good.all_findings()]
    bare = check(serve_site("page-bad"), "/dataset/sameas-doi.html", strict)
    assert not bare.harvestable
    # signposting/absent is about the page, so the blocking error is page-level too
    [failed] = [f for f in bare.findings if f.code == "dataone/required-check-failed"]
    assert "'signposting/cite-as'" in failed.message
    assert "signposting/absent" in failed.message


def test_one_doi_in_many_spellings_is_one_doi(serve_site: Serve) -> None:
    report = check(serve_site("page-good"), "/dataset/pangaea.html")
    [ds] = report.datasets
    assert ds.doi == "10.1594/pangaea.867435"
    assert len(ds.identifiers) == 3
    codes = {f.code for f in ds.findings}
    assert "dataone/several-dois" not in codes
    assert [r.property for r in ds.encoding] == ["subjectOf"]  # the article is not metadata
    assert report.harvestable


def test_a_bug_in_a_stage_is_a_finding_and_the_run_goes_on() -> None:
    from adapter.pipeline.compose import _guard

    report = DatasetReport(url="https://repo.example/dataset/1")

    def broken() -> int:
        empty: dict[str, int] = {}
        return empty["missing"]

    assert _guard(report, "dataone", broken) is None
    [finding] = report.findings
    assert finding.code == "pipeline/internal-error" and finding.severity == "error"
    assert "dataone stage" in finding.message and "KeyError" in finding.message
    assert _guard(report, "dataone", lambda: 42) == 42


# -- shapes real repositories publish (fixtures/sites/real-shapes) -------------


def test_a_licence_or_source_typed_dataset_is_a_reference_not_a_page_dataset(
    serve_site: Serve,
) -> None:
    # Harvard Dataverse types its licence Dataset; isBasedOn names the source dataset
    server = serve_site("real-shapes")
    # mnlite: the page has no metadata copy, which the default dataone profile requires
    report = check(server, "/dataset/dataverse-licence.html", CheckOptions(profile="mnlite"))
    [ds] = report.datasets
    assert ds.doi == "10.5072/fk2/rain01"
    assert ds.where == "block 1 $"
    nested = [f.message for f in report.findings if f.code == "normalize/embedded-dataset"]
    assert len(nested) == 2
    assert any("(its license)" in m for m in nested)
    assert any("10.5072/FK2/WEATHER" in m and "(its isBasedOn)" in m for m in nested)
    [proposal] = [f.message for f in report.findings if f.code == "signposting/proposal"]
    assert '<https://doi.org/10.5072/fk2/rain01> ; rel="cite-as"' in proposal
    assert "weather" not in proposal.lower()
    assert report.harvestable


def test_signposting_is_held_against_the_page_dataset_not_a_nested_one(serve_site: Serve) -> None:
    report = check(serve_site("real-shapes"), "/dataset/dataverse-cite")
    codes = {f.code for f in report.all_findings()}
    assert not codes & {"signposting/cite-as-mismatch", "signposting/several-datasets"}
    assert [d.doi for d in report.datasets] == ["10.5072/fk2/rain01"]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_an_array_of_many_datasets_sharing_a_funder_is_read_not_capped(serve_site: Serve) -> None:
    report = check(serve_site("real-shapes"), "/dataset/many.json")
    assert len(report.datasets) == 214
    assert report.datasets[0].doi == "10.5072/obs.001"
    codes = {f.code for f in report.all_findings()}
    assert not codes & {"normalize/embedding-too-large", "normalize/no-dataset"}
    funders = {str(d.framed["funder"]) for d in report.datasets}
    assert len(funders) == 1 and "National Science Foundation" in funders.pop()


def test_a_cap_that_bites_names_the_limit_and_never_says_no_dataset(serve_site: Serve) -> None:
    server = serve_site("real-shapes")
    report = check(server, "/dataset/many.json", CheckOptions(limits=_limits(max_json_nodes=500)))
    [finding] = [f for f in report.findings if f.severity == "error"]
    assert finding.code == "normalize/dataset-over-limit"
    assert "`max_json_nodes` (now 500)" in finding.message
    assert "No schema.org Dataset" not in finding.message
    blocks = CheckOptions(limits=_limits(max_jsonld_blocks=1))
    report = check(server, "/dataset/two-blocks.html", blocks)
    codes = [f.code for f in report.findings]
    assert "normalize/dataset-over-limit" in codes and "normalize/no-dataset" not in codes
    assert any("max_jsonld_blocks" in f.message for f in report.findings)


def _limits(**values: int) -> Limits:
    return DEFAULT_LIMITS.with_overrides(values)


def test_the_json_report_keeps_each_value_under_the_property_the_page_used(
    serve_site: Serve,
) -> None:
    server = serve_site("real-shapes")
    report = to_json(check(server, "/dataset/doi-in-url.html"))
    [laz, dem] = report["datasets"][0]["distributions"]
    assert laz["contentUrl"] == laz["link"] == server.url("/files/OTLAS.052019.32611.1.laz")
    assert laz["encodingFormat"] == ["application/vnd.las"] and laz["fileFormat"] == []
    # a url is a page about the file: never reported as its contentUrl
    assert dem["contentUrl"] is None and dem["encodingFormat"] == []
    assert dem["url"] == dem["link"] == server.url("/dataset/doi-in-url.html#dem")
    assert (dem["linkProperty"], dem["fileFormat"]) == ("url", ["image/tiff"])
    wrong = [
        f["message"]
        for f in report["datasets"][0]["findings"]
        if f["code"] == "dataone/wrong-property"
    ]
    assert len(wrong) == 2
    assert any("schema.org defines `fileFormat`" in m for m in wrong)
    assert any("`url` names a page about the file" in m for m in wrong)
    assert not any("does not define" in m for m in wrong)


def test_a_dangling_distribution_reference_is_a_finding_not_a_content_url(
    serve_site: Serve,
) -> None:
    server = serve_site("real-shapes")
    report = check(server, "/dataset/ckan-no-identifier.html")
    [entry] = to_json(report)["datasets"][0]["distributions"]
    target = server.url("/dataset/ckan-no-identifier.html/resource/trees-csv")
    assert entry["contentUrl"] is None and entry["link"] is None
    assert entry["reference"] == target
    [finding] = [f for f in report.all_findings() if f.code == "dataone/dangling-reference"]
    assert target in finding.message and finding.where == "$.distribution"
    assert "only a reference to " + target in render_text(report)


def test_signposts_in_the_json_report_are_signposting_and_other_links_are_apart(
    serve_site: Serve,
) -> None:
    report = to_json(check(serve_site("real-shapes"), "/dataset/dataverse-cite"))
    assert sorted({x["rel"] for x in report["signposts"]}) == ["cite-as", "type"]
    others = sorted(x["rel"] for x in report["other_links"])
    assert others == ["canonical", "icon", "manifest", "schema.dc", "stylesheet"]


def test_the_proposed_link_header_holds_only_uris(serve_site: Serve) -> None:
    server = serve_site("real-shapes")
    report = check(server, "/dataset/licence-text.html")
    [proposal] = [f.message for f in report.findings if f.code == "signposting/proposal"]
    header = next(line for line in proposal.splitlines() if line.startswith("Link: "))
    targets = re.findall(r"<([^>]*)>", header)
    assert targets and all(" " not in t and t.startswith(("http://", "https://")) for t in targets)
    assert 'rel="license"' not in header  # the licence is a sentence, not a URI
    assert server.url("/dataset/files/ex2104%20net%20tows.csv") in targets  # encoded, kept
    assert "rel=license: 'This work is licensed" in proposal
    assert "publish the licence as a URI" in proposal


def test_a_304_to_an_unconditional_request_is_a_status_finding(serve_site: Serve) -> None:
    report = check(serve_site("real-shapes"), "/dataset/stale-cache")
    [finding] = report.findings
    assert finding.code == "fetch/http-error" and "not conditional" in finding.message
    assert report.status == 304 and not report.not_modified and not report.harvestable


def test_a_sitemap_is_recognised_and_discover_suggested(serve_site: Serve) -> None:
    server = serve_site("real-shapes")
    report = check(server, "/sitemap.xml")
    [finding] = report.findings
    assert finding.code == "extract/sitemap-given" and "<urlset>" in finding.message
    assert f"adapter discover {server.url('/sitemap.xml')}" in finding.message
    text = render_text(report)
    assert "signposting (typed links vs the Dataset): not reached" in text
    assert "normalize (JSON-LD to a schema.org Dataset): not reached" in text


def test_normalize_is_not_ok_where_nothing_was_normalized(serve_site: Serve) -> None:
    # a CSV and a JS-built page: no JSON-LD block, so normalize never ran
    for site, path in (("page-extract", "/dataset/preview"), ("page-extract", "/dataset/spa.html")):
        text = render_text(check(serve_site(site), path))
        assert "normalize (JSON-LD to a schema.org Dataset): not reached" in text, text


def test_signposting_absent_promises_a_proposal_only_when_one_follows(serve_site: Serve) -> None:
    server = serve_site("real-shapes")
    bare = check(server, "/sitemap.xml")  # no Dataset, no proposal
    without = check(serve_site("page-extract"), "/dataset/spa.html")
    [absent] = [f for f in without.findings if f.code == "signposting/absent"]
    assert "propos" not in absent.message
    assert not [f for f in without.findings if f.code == "signposting/proposal"]
    assert not [f for f in bare.findings if f.code.startswith("signposting/")]
    with_dataset = check(server, "/dataset/dataverse-licence.html")
    [absent] = [f for f in with_dataset.findings if f.code == "signposting/absent"]
    assert "The proposal below" in absent.message
    assert [f for f in with_dataset.findings if f.code == "signposting/proposal"]


@pytest.mark.parametrize(
    "path", ["/dataset/euro-latin1", "/dataset/euro-ascii", "/dataset/euro-meta.html"]
)
def test_latin1_and_ascii_labels_are_read_as_windows_1252_as_browsers_do(
    serve_site: Serve, path: str
) -> None:
    # the WHATWG Encoding table: iso-8859-1, latin1 and ascii all mean windows-1252
    report = check(serve_site("page-extract"), path, CheckOptions(profile="mnlite"))
    [ds] = report.datasets
    assert ds.framed["name"] == "Price survey, 5\u20ac a sample"
    assert "\u201cwindows-1252\u201d quotes, and \x81," in ds.framed["description"]
    assert not {f.code for f in report.all_findings()} & {"extract/invalid-encoding"}
    [author] = [x for x in report.signposts if x.rel == "author"]
    assert dict(author.extra)["title"] == "J\u00f6rgensen \u20ac"
