"""A URL typed into the form is a stranger's: public addresses only, a deadline, no script."""

from __future__ import annotations

import re
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from adapter.commands.web import build_app, configured_origins
from adapter.config.load import load_config
from adapter.errors import FetchError
from adapter.http.addresses import AddressPolicy
from adapter.limits import DEFAULT_LIMITS
from adapter.web.app import WebApp
from adapter.web.checking import Checker, DeadlineFetcher
from adapter.web.ratelimit import RateLimit
from tests.support.web import serve_wsgi
from tests.web.conftest import MakeWeb, origins

JSON = {"Accept": "application/json"}


def web_report(web: Any, url: str, profile: str = "dataone") -> dict[str, Any]:
    params = {"url": url, "profile": profile}
    got = requests.get(web.url("/check"), params=params, headers=JSON, timeout=30)
    assert got.status_code == 200
    return dict(got.json())


def codes(report: dict[str, Any]) -> set[str]:
    every = [*report["findings"], *(f for d in report["datasets"] for f in d["findings"])]
    return {f["code"] for f in every}


def test_an_unnamed_loopback_origin_is_refused_before_any_request(
    make_web: MakeWeb, sites: Any
) -> None:
    site = sites("sp-good")
    web = make_web()  # the operator named no origin
    report = web_report(web, site[0].url("/dataset/7"))
    assert report["harvestable"] is False
    assert "fetch/unsafe-url" in codes(report)
    assert "loopback" in " ".join(f["message"] for f in report["findings"])
    assert site[0].log == []


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/dataset",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:8080/",
        "http://0x7f.1/",
    ],
)
def test_private_link_local_and_disguised_addresses_are_refused(
    make_web: MakeWeb, url: str
) -> None:
    report = web_report(make_web(), url)
    assert "fetch/unsafe-url" in codes(report), report["findings"]


def test_the_operators_configured_origins_are_trusted(sites: Any, tmp_path: Path) -> None:
    site = sites("sp-good")
    config = tmp_path / "node.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            store_url: sqlite:///{tmp_path}/harvest.db
            nodes:
              - id: urn:node:WEBTEST
                name: Web test
                start:
                  entry_urls: ["{site[0].url("/")}"]
                dataone:
                  submitter: "urn:node:WEBTEST"
                  rights_holder: "urn:node:WEBTEST"
                  contact_subject: "http://orcid.org/0000-0002-1825-0097"
            """
        )
    )
    nodes = load_config(str(config)).nodes
    app = build_app(configured_origins(nodes), rate_file=str(tmp_path / "rate.db"))
    with serve_wsgi(app) as web:
        # mnlite: the page's metadata copy is EML, not the ISO one dataone asks for
        report = web_report(web, site[0].url("/dataset/7"), "mnlite")
        other = web_report(web, site[1].url("/"))  # the site's second host: not named
    assert report["harvestable"] is True
    assert "fetch/unsafe-url" in codes(other)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_hanging_page_ends_at_the_deadline(make_web: MakeWeb, sites: Any) -> None:
    site = sites("page-http")
    web = make_web(origins(site), deadline=1.0)
    report = web_report(web, site[0].url("/dataset/hang"))
    assert report["harvestable"] is False
    assert "fetch/timeout" in codes(report)


def test_no_fetch_starts_after_the_deadline(sites: Any) -> None:
    site = sites("sp-good")
    policy = AddressPolicy(origins(site))
    fetcher = DeadlineFetcher(DEFAULT_LIMITS, policy, time.monotonic() - 1, 5.0)
    with fetcher, pytest.raises(FetchError) as caught:
        fetcher.get(site[0].url("/dataset/7"))
    assert caught.value.code == "fetch/timeout"
    assert "deadline of 5 s" in caught.value.message
    assert site[0].log == []


def test_a_check_past_its_deadline_reports_the_fetches_not_made(sites: Any) -> None:
    site = sites("sp-good")
    checker = Checker(tuple(origins(site)), deadline=1e-9)
    report = checker.check_url(site[0].url("/dataset/7"))
    assert not report.harvestable
    assert any("deadline" in f.message for f in report.findings)


def test_a_hostile_page_is_never_reflected_unescaped(make_web: MakeWeb, sites: Any) -> None:
    site = sites("web-hostile")
    web = make_web(origins(site))
    got = requests.get(web.url("/check"), params={"url": site[0].url("/dataset/1")}, timeout=30)
    assert got.status_code == 200
    body = got.text
    assert "window.pwned" in body  # the payloads are shown, as text
    assert "&lt;script&gt;window.pwned=&#39;name&#39;" in body
    assert re.findall(r"<script[^>]*>", body, re.IGNORECASE) == [
        '<script src="/static/copy.js" defer>',  # ours, the only ones
        '<script src="/static/focus.js" defer>',
    ]
    assert "<img" not in body.lower()
    assert not re.search(r"\son\w+\s*=", re.sub(r">[^<]*<", "><", body))  # no event handler
    assert not re.search(r"""href\s*=\s*["']?\s*javascript:""", body, re.IGNORECASE)
    assert "script-src 'self'" in got.headers["Content-Security-Policy"]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_checks_beyond_the_running_slots_are_503_and_not_counted(
    sites: Any, tmp_path: Path
) -> None:
    site = sites("page-http")
    rate = RateLimit(tmp_path / "rate.db", per_minute=2)
    # the hanging check holds the one slot for its 1 s deadline while the second is refused
    app = WebApp(Checker(tuple(origins(site)), deadline=1.0), rate, max_checks=1)
    hanging = {"url": site[0].url("/dataset/hang")}
    with serve_wsgi(app) as web, ThreadPoolExecutor(1) as pool:
        slow = pool.submit(requests.get, web.url("/check"), params=hanging, timeout=60)
        while not any(r.path == "/dataset/hang" for r in site[0].log):
            time.sleep(0.02)  # the first check is waiting on the hanging page
        busy = requests.get(web.url("/check"), params={"url": "http://10.0.0.1/"}, timeout=30)
        assert busy.status_code == 503
        assert busy.headers["Retry-After"] == "5"
        assert "1 checks are running already" in busy.text
        assert slow.result().status_code == 200
        # the busy answer did not spend the client's budget: the second check is its 2nd
        again = requests.get(web.url("/check"), params={"url": "http://10.0.0.1/"}, timeout=30)
        assert again.status_code == 200
