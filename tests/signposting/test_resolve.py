"""Any URL of an object leads to its landing page (COAR Notify web-agent path), over HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable

from click.testing import CliRunner

from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.signposting.resolve import Resolution, find_landing_page, resolver_url
from tests.support.fixture_server import SiteServer

Serve = Callable[[str], SiteServer]

# the resolve codes the cases below trigger (test_signposting_sites checks the catalogue)
RESOLVE_CODES = frozenset(
    {
        "signposting/resolve-path",
        "signposting/resolve-loop",
        "signposting/resolve-no-way-back",
        "signposting/resolve-failed",
    }
)


def resolve(server: SiteServer, url: str) -> Resolution:
    with Fetcher(policy=AddressPolicy(list(server.rewrites.values()))) as fetcher:
        return find_landing_page(url, fetcher)


def codes(r: Resolution) -> set[str]:
    return {f.code for f in r.findings}


def test_doi_spellings_become_resolver_urls() -> None:
    for text in (
        "doi:10.5061/dryad.X",
        "10.5061/dryad.x",
        "https://doi.org/10.5061/dryad.x",
        "http://dx.doi.org/10.5061/DRYAD.X",
    ):
        assert resolver_url(text) == "https://doi.org/10.5061/dryad.x", text
    assert resolver_url("https://repo.example/dataset/7") is None


def test_content_resource_leads_back_with_collection(serve_site: Serve) -> None:
    s = serve_site("sp-good")
    r = resolve(s, s.url("/files/7/cores.csv"))
    assert r.landing_url == s.url("/dataset/7")
    assert r.path == [s.url("/files/7/cores.csv"), s.url("/dataset/7")]
    assert codes(r) == {"signposting/resolve-path"}
    assert "rel=collection" in " ".join(r.steps)
    assert [(e.method, e.path) for e in s.log] == [
        ("HEAD", "/files/7/cores.csv"),
        ("HEAD", "/dataset/7"),
    ]


def test_metadata_resource_leads_back_with_describes(serve_site: Serve) -> None:
    s = serve_site("sp-good")
    r = resolve(s, s.url("/meta/7/eml.xml"))
    assert r.landing_url == s.url("/dataset/7")
    assert "rel=describes" in " ".join(r.steps)


def test_doi_through_a_resolver(serve_site: Serve) -> None:
    s = serve_site("sp-good")
    doi_host = s.rewrite("https://doi.example")
    r = resolve(s, f"{doi_host}/10.5061/dryad.sp7")
    assert r.landing_url == s.url("/dataset/7")
    assert r.path == [f"{doi_host}/10.5061/dryad.sp7", s.url("/dataset/7")]


def test_landing_page_itself_is_one_head(serve_site: Serve) -> None:
    s = serve_site("sp-good")
    r = resolve(s, s.url("/dataset/7"))
    assert r.landing_url == s.url("/dataset/7") and r.findings == []
    assert [e.method for e in s.log] == ["HEAD"]


def test_html_page_with_link_element_back(serve_site: Serve) -> None:
    s = serve_site("sp-resolve")
    r = resolve(s, s.url("/files/r1/readme.html"))
    assert r.landing_url == s.url("/dataset/r1")
    assert "<link rel=collection>" in " ".join(r.steps)
    # the landing page has no header links, so its HTML was read (and kept for the check)
    assert r.fetched is not None and r.fetched.final_url == s.url("/dataset/r1")
    assert [(e.method, e.path) for e in s.log] == [
        ("HEAD", "/files/r1/readme.html"),
        ("GET", "/files/r1/readme.html"),
        ("HEAD", "/dataset/r1"),
        ("GET", "/dataset/r1"),
    ]


def test_loop_orphan_and_missing(serve_site: Serve) -> None:
    s = serve_site("sp-resolve")
    loop = resolve(s, s.url("/files/loop-a.csv"))
    assert "signposting/resolve-loop" in codes(loop)
    orphan = resolve(s, s.url("/files/orphan.csv"))
    assert "signposting/resolve-no-way-back" in codes(orphan)
    assert orphan.landing_url == s.url("/files/orphan.csv")
    missing = resolve(s, s.url("/files/missing.csv"))
    assert "signposting/resolve-failed" in codes(missing)
    all_codes = codes(loop) | codes(orphan) | codes(missing) | {"signposting/resolve-path"}
    assert all_codes == RESOLVE_CODES


def test_check_dataset_starts_from_a_file_url_and_shows_its_path(serve_site: Serve) -> None:
    from adapter.commands.check import check_dataset_command

    s = serve_site("sp-good")
    # mnlite: the page's metadata copy is EML, not the ISO one the dataone profile asks for
    result = CliRunner().invoke(
        check_dataset_command, [s.url("/files/7/cores.csv"), "--json", "--profile", "mnlite"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["url"] == s.url("/files/7/cores.csv")
    assert report["final_url"] == s.url("/dataset/7")
    assert report["path"] == [s.url("/files/7/cores.csv"), s.url("/dataset/7")]
    assert "signposting/resolve-path" in {f["code"] for f in report["findings"]}
    text = CliRunner().invoke(check_dataset_command, [s.url("/meta/7/eml.xml")]).output
    assert f"reached {s.url('/dataset/7')}" in text
    assert "signposting/resolve-path" in text and "rel=describes" in text


def test_a_doi_that_does_not_resolve_never_reads_as_leading_to_the_landing_page(
    serve_site: Serve,
) -> None:
    s = serve_site("sp-resolve")
    doi_host = s.rewrite("https://doi.example")
    r = resolve(s, f"{doi_host}/10.5072/withdrawn.9")  # the resolver sends it to a 404
    assert codes(r) == {"signposting/resolve-failed"}
    [failed] = r.findings
    assert "HTTP 404" in failed.message and s.url("/dataset/withdrawn-9") in failed.message
    assert not any("led to the landing page" in f.message for f in r.findings)
