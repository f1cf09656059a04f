"""The check page over real HTTP: the same report as the CLI, as HTML and as JSON."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import lxml.html
import pytest
import requests

from adapter.findings import catalogue
from adapter.web.app import WebApp
from adapter.web.checking import Checker
from tests.support.cli import run_in_process
from tests.support.clock import FakeClock
from tests.support.fixture_server import start_site, stop
from tests.web.conftest import MakeWeb, origins

ROOT = Path(__file__).resolve().parents[2]
JSON = {"Accept": "application/json"}


def cli_json(url: str, *args: str) -> dict[str, Any]:
    """`adapter check-dataset --json`'s report, from its entry point in this process."""
    done = run_in_process(["check-dataset", "--json", url, *args], ROOT)
    return dict(json.loads(done.stdout))


def test_permalink_answers_200_with_the_report_whatever_the_verdict(
    make_web: MakeWeb, sites: Any
) -> None:
    site = sites("real-shapes")  # a CKAN-style page with no identifier and no DOI
    web = make_web(origins(site))
    page = site[0].url("/dataset/ckan-no-identifier.html")
    got = requests.get(web.url("/check"), params={"url": page}, timeout=30)
    assert got.status_code == 200
    assert got.headers["Content-Type"].startswith("text/html")
    assert "NOT HARVESTABLE" in got.text
    assert 'href="/findings#dataone/identifier-missing"' in got.text


def test_json_at_the_same_address_is_the_cli_report(make_web: MakeWeb, sites: Any) -> None:
    site = sites("sp-good")
    web = make_web(origins(site))
    page = site[0].url("/dataset/7")
    params = {"url": page, "profile": "mnlite"}  # its copy is EML, not dataone's ISO one
    got = requests.get(web.url("/check"), params=params, headers=JSON, timeout=30)
    assert got.status_code == 200
    assert got.headers["Content-Type"] == "application/json"
    assert got.json() == cli_json(page, "--profile", "mnlite")
    assert got.json()["harvestable"] is True


def test_every_web_app_of_a_process_renders_with_one_compiled_set_of_templates() -> None:
    """Compiling them is 0.3 CPU s: once a process, not once per WebApp (per node, per test)."""
    first, second = WebApp(Checker()), WebApp(Checker(), None, max_checks=1)
    assert first.env is second.env
    assert first.env.cache is not None and len(first.env.cache) == len(first.env.list_templates())


def test_a_browser_accept_header_gets_html(make_web: MakeWeb, sites: Any) -> None:
    site = sites("sp-good")
    web = make_web(origins(site))
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    got = requests.get(
        web.url("/check"),
        params={"url": site[0].url("/dataset/7")},
        headers={"Accept": accept},
        timeout=30,
    )
    assert got.headers["Content-Type"].startswith("text/html")
    assert "HARVESTABLE" in got.text


def test_the_form_alone_checks_nothing(make_web: MakeWeb) -> None:
    web = make_web()
    got = requests.get(web.url("/check"), timeout=10)
    assert got.status_code == 200
    assert 'name="url"' in got.text and 'name="content"' in got.text and 'type="file"' in got.text
    assert 'id="verdict"' not in got.text
    root = requests.get(web.url("/"), allow_redirects=False, timeout=10)
    assert root.status_code == 303 and root.headers["Location"] == "/check"


def test_pasted_html_is_checked_at_the_address_given(make_web: MakeWeb) -> None:
    web = make_web()
    html = (
        "<html><head><title>x</title>"
        '<script type="application/ld+json">{"@context": "https://schema.org/",'
        ' "@type": "Dataset", "name": "Pasted", "identifier": "doi:10.5061/p.1",'
        ' "url": "https://repository.example/d/1"}</script></head></html>'
    )
    got = requests.post(
        web.url("/check"),
        data={"content": html, "address": "https://repository.example/d/1"},
        headers=JSON,
        timeout=30,
    )
    report = got.json()
    assert got.status_code == 200
    assert report["url"] == "https://repository.example/d/1"
    assert [d["name"] for d in report["datasets"]] == ["Pasted"]
    assert report["datasets"][0]["doi"] == "10.5061/p.1"


def test_an_uploaded_jsonld_file_is_read_as_jsonld(make_web: MakeWeb) -> None:
    web = make_web()
    body = b'{"@context": "https://schema.org/", "@type": "Dataset", "name": "Uploaded"}'
    got = requests.post(
        web.url("/check"),
        files={"file": ("dataset.jsonld", body, "application/octet-stream")},
        data={"address": ""},
        headers=JSON,
        timeout=30,
    )
    assert got.status_code == 200
    assert [d["name"] for d in got.json()["datasets"]] == ["Uploaded"]


def test_nothing_to_check_and_bad_urls_are_400_with_the_reason(make_web: MakeWeb) -> None:
    web = make_web()
    empty = requests.post(web.url("/check"), data={"url": ""}, timeout=10)
    assert empty.status_code == 400
    assert "give a URL or a DOI" in empty.text
    for text in ("ftp://repo.example/x", "not a url", "http://127.0.0.1:99999/"):
        got = requests.get(web.url("/check"), params={"url": text}, headers=JSON, timeout=10)
        assert got.status_code == 400, text
        assert text in got.json()["error"] or "port" in got.json()["error"]
    html = requests.get(web.url("/check"), params={"url": "ftp://x/<b>"}, timeout=10)
    assert html.status_code == 400
    assert "ftp://x/&lt;b&gt;" in html.text and "ftp://x/<b>" not in html.text


def test_a_form_over_the_cap_is_413(make_web: MakeWeb) -> None:
    web = make_web()
    huge = "x" * (11 * 1024 * 1024)
    got = requests.post(web.url("/check"), data={"content": huge}, timeout=30)
    assert got.status_code == 413


def test_the_catalogue_has_an_anchor_per_code(make_web: MakeWeb) -> None:
    web = make_web()
    got = requests.get(web.url("/findings"), timeout=10)
    assert got.status_code == 200
    for t in catalogue():
        assert f'id="{t.code}"' in got.text


def test_every_response_carries_the_security_headers(make_web: MakeWeb) -> None:
    web = make_web()
    for path in ("/check", "/findings", "/static/style.css", "/nowhere"):
        got = requests.get(web.url(path), timeout=10)
        csp = got.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "'unsafe-inline'" not in csp, path
        assert got.headers["X-Content-Type-Options"] == "nosniff"
    assert requests.get(web.url("/nowhere"), timeout=10).status_code == 404
    assert requests.delete(web.url("/check"), timeout=10).status_code == 405


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_the_checklist_is_the_chosen_profiles(make_web: MakeWeb, sites: Any) -> None:
    site = sites("page-profiles")  # a DOI and a download, but no ISO metadata copy
    web = make_web(origins(site))
    page = site[0].url("/dataset/no-copy.html")
    strict = requests.get(web.url("/check"), params={"url": page}, timeout=30)
    assert "NOT HARVESTABLE" in strict.text
    assert "the dataone profile" in strict.text
    assert "an ISO TC 211 XML metadata copy" in strict.text
    assert 'href="/findings#dataone/encoding-missing"' in strict.text
    lax = requests.get(web.url("/check"), params={"url": page, "profile": "mnlite"}, timeout=30)
    assert "the mnlite profile" in lax.text and "NOT HARVESTABLE" not in lax.text
    assert "an ISO TC 211 XML metadata copy" not in lax.text
    data = requests.get(
        web.url("/check"), params={"url": page, "profile": "mnlite"}, headers=JSON, timeout=30
    ).json()
    assert data["profile"] == "mnlite" and data["harvestable"] is True
    bad = requests.get(web.url("/check"), params={"url": page, "profile": "lenient"}, timeout=30)
    assert bad.status_code == 400 and "not a requirement profile" in bad.text


def test_an_unreachable_page_could_not_be_checked_not_refused(
    make_web: MakeWeb, virtual_clock: FakeClock
) -> None:
    """The refused connection retried on virtual time (tests/http times the real backoff)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/dataset/1"
    web = make_web([f"http://127.0.0.1:{port}"], deadline=5.0)
    got = requests.get(web.url("/check"), params={"url": url}, timeout=60)
    assert got.status_code == 200
    assert ">COULD NOT CHECK<" in got.text and "NOT HARVESTABLE" not in got.text
    assert "Nothing was checked" in got.text and "To fix" not in got.text
    as_json = requests.get(
        web.url("/check"), params={"url": url}, headers={"Accept": "application/json"}, timeout=60
    ).json()
    assert as_json["verdict"] == "could-not-check"
    assert virtual_clock.sleeps  # retried, without waiting for it


def test_pasted_content_shows_no_fake_address_or_http_status(make_web: MakeWeb) -> None:
    web = make_web()
    body = '{"@context": "https://schema.org/", "@type": "Dataset", "name": "Pasted cores"}'
    got = requests.post(web.url("/check"), data={"content": body}, timeout=30)
    assert got.status_code == 200 and "Pasted cores" in got.text
    assert "pasted.invalid" not in got.text and "HTTP 200" not in got.text
    assert "(pasted content: no address given)" in got.text and "pasted, not fetched" in got.text
    given = requests.post(
        web.url("/check"),
        data={"content": body, "address": "https://repository.example/d/9"},
        timeout=30,
    )
    assert "https://repository.example/d/9" in given.text and "HTTP 200" not in given.text


def tree_checklist(html: str) -> dict[str, list[str]]:
    """The checklist's items: label -> the codes beside it."""
    items = lxml.html.fromstring(html).xpath("//section[@class='checklist']//li")
    return {
        li.xpath("string(span[@class='label'])"): [a.text_content() for a in li.xpath("a")]
        for li in items
    }


def signpost_codes(html: str, href: str) -> list[str]:
    """The finding codes on the signpost table's row for `href`."""
    tree = lxml.html.fromstring(html)
    [row] = [
        tr
        for tr in tree.xpath("//section[@class='signposts']//tbody/tr")
        if tr.xpath("string(td[@data-label='target'])").strip() == href
    ]
    return [a.text_content() for a in row.xpath(".//a[@class='code']")]


def test_linked_documents_that_fail_are_reported_under_their_links(
    make_web: MakeWeb, virtual_clock: FakeClock
) -> None:
    """A link set that refuses connections, a describedby record that answers 500, one on a
    host that does not resolve: each under its link, the landing page's fetch untouched
    (the refused connection's retries on virtual time)."""
    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))  # bound, not listening: refused
        refused = f"http://127.0.0.1:{hole.getsockname()[1]}"
        site = start_site("sp-linked", rules={"/api/records/buoy.jsonld": {"status": 500}})
        site[0].rewrites["https://refused.example"] = refused
        try:
            web = make_web([*origins(site), refused])
            cases = [
                ("/dataset/ocean-cores", "rel=linkset", f"{refused}/linkset/ocean-cores.json"),
                ("/dataset/buoy", "rel=describedby", site[0].url("/api/records/buoy.jsonld")),
                (
                    "/dataset/buoy-nxdomain",
                    "rel=describedby",
                    "https://metadata.nonexistent.invalid/records/buoy-46026.jsonld",
                ),
            ]
            for path, rel, href in cases:
                params = {"url": site[0].url(path)}
                data = requests.get(web.url("/check"), params=params, headers=JSON, timeout=60)
                report = data.json()
                assert report["status"] == 200 and report["verdict"] != "could-not-check"
                assert not [f for f in report["findings"] if f["code"].startswith("fetch/")]
                [about] = [f for f in report["findings"] if f["where"] == f"{rel} {href}"]
                html = requests.get(web.url("/check"), params=params, timeout=60).text
                assert "COULD NOT CHECK" not in html and "Nothing was checked" not in html
                fetch = lxml.html.fromstring(html).get_element_by_id("stage-fetch")
                assert fetch.xpath("string(.//span[@class='state'])") == "ok"
                assert about["code"] in signpost_codes(html, href)
                if about["code"] == "extract/linked-jsonld-unreachable":  # no Dataset: why
                    found = tree_checklist(html)["a schema.org Dataset on the page"]
                    assert about["code"] in found
        finally:
            stop(site)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_a_page_of_214_datasets_gives_totals_first_and_folds_the_rest(
    make_web: MakeWeb, sites: Any
) -> None:
    site = sites("real-shapes")  # the cruise page: 214 casts, 57, 138 and 201 without a DOI
    web = make_web(origins(site))
    got = requests.get(
        web.url("/check"), params={"url": site[0].url("/cruise/at50-12.html")}, timeout=120
    )
    assert got.status_code == 200
    # 1,441,609 bytes before, every Dataset and every finding of each shown whole
    assert len(got.content) < 400_000, len(got.content)
    tree = lxml.html.fromstring(got.text)
    sections = [s.get("class") for s in tree.xpath("//main/section")]
    # the totals straight after the verdict, before the checklist and any Dataset
    assert sections[1:4] == ["verdict ok", "many", "checklist"], sections
    many = tree.xpath("//section[@class='many']")[0]
    assert many.xpath("string(h2)") == "214 Datasets on this page"
    assert "211 harvestable" in many.text_content() and "3 not harvestable" in many.text_content()
    rows = {
        r.xpath("string(td[2])"): r.xpath("string(td[3])") for r in many.xpath(".//table//tbody/tr")
    }
    assert rows["dataone/profile-unmet"] == "3 of 214"
    whole = [s.get("id") for s in tree.xpath("//section[@class='dataset']")]
    assert whole == [f"dataset-{n}" for n in (1, 2, 3, 57, 138, 201)]
    folded = tree.xpath("//section[@class='folded-datasets']/details")
    assert len(folded) == 208 and not [d for d in folded if d.get("open") is not None]
    assert folded[0].get("id") == "dataset-4"
    assert "CTD cast 004" in folded[0].xpath("string(summary)")
    assert "harvestable" in folded[0].xpath("string(summary)")
    # the findings by stage: the folded Datasets' codes once each, with a count
    dataone = tree.get_element_by_id("stage-dataone")
    assert "on 208 other Datasets" in dataone.xpath("string(.//li[contains(@class,'folded')])")
