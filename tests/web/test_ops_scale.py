"""/ops over a node of 5,000 pages, and who may read it.

Every list is walked to its end through the page links the view writes, so
every row is reached and the counts it shows are the store's. /ops answers
loopback callers, and others only with the operator's secret: a caller from
elsewhere is made real by waitress trusting a proxy on 127.0.0.1 that names
the client in X-Forwarded-For (as `adapter web --trusted-proxy` runs it).
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
import requests
import waitress

from adapter.commands.web import operator_view
from adapter.store.db import Store
from adapter.web.app import WebApp
from adapter.web.checking import Checker
from tests.support import stores
from tests.support.opsstore import KINDS, fill
from tests.support.web import ServedWeb, serve_wsgi, stop_waitress

NODE = "urn:node:SCALE"
PAGES = 5000
SECRET = "s3cret-of-the-operator-0123"
ELSEWHERE = {"X-Forwarded-For": "203.0.113.9"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    url = stores.sqlite_url(tmp_path_factory.mktemp("scale"))
    s = Store.open(url)
    fill(s, NODE, PAGES, runs=3, events=250)
    yield s
    s.close()


@pytest.fixture(scope="module")
def web(store: Store) -> Iterator[ServedWeb]:
    with serve_wsgi(WebApp(Checker(), None, operator_view(store, (), SECRET))) as served:
        yield served


@pytest.fixture(scope="module")
def proxied(store: Store) -> Iterator[ServedWeb]:
    """The same view behind a trusted proxy: X-Forwarded-For names the caller."""
    app = WebApp(Checker(), None, operator_view(store, (), SECRET))
    server = waitress.create_server(
        app,
        host="127.0.0.1",
        port=0,
        threads=2,
        trusted_proxy="127.0.0.1",
        trusted_proxy_headers={"x-forwarded-for"},
        clear_untrusted_proxy_headers=True,
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield ServedWeb(server, f"http://127.0.0.1:{server.effective_port}")
    finally:
        stop_waitress(server, thread)


def walk(web: ServedWeb, first: str) -> tuple[list[str], set[str]]:
    """Every row's page link, following `next` to the end; and the totals each page said."""
    seen: list[str] = []
    totals: set[str] = set()
    path: str | None = first
    while path:
        got = requests.get(web.url(path), timeout=30)
        assert got.status_code == 200, (path, got.status_code)
        seen += [html.unescape(u) for u in re.findall(r'href="/ops/page\?([^"]+)"', got.text)]
        totals.update(re.findall(r"of <strong>([\d,]+)</strong>", got.text))
        nxt = re.search(r'rel="next" href="([^"]+)"', got.text)
        path = html.unescape(nxt.group(1)) if nxt else None
    return seen, totals


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_every_page_of_a_5000_page_node_is_reached_with_true_counts(web: ServedWeb) -> None:
    seen, totals = walk(web, f"/ops/pages?node={quote(NODE)}")
    assert len(seen) == PAGES and len(set(seen)) == PAGES
    assert totals == {"5,000"}
    urls = [unquote(re.search(r"url=([^&]+)", s).group(1)) for s in seen]  # type: ignore[union-attr]
    assert urls[:3] == [f"https://repo.example/ds/{i}" for i in range(3)]
    assert urls[9:11] == ["https://repo.example/ds/9", "https://repo.example/ds/10"]  # natural


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_code_and_an_outcome_reach_all_their_pages(web: ServedWeb) -> None:
    having = sum("dataone/encoding-missing" in dict(k[2]) for k in KINDS) * PAGES // len(KINDS)
    seen, totals = walk(web, f"/ops/pages?node={quote(NODE)}&code=dataone/encoding-missing")
    assert len(seen) == having and totals == {f"{having:,}"}
    gone = sum(k[0] == "gone" for k in KINDS) * PAGES // len(KINDS)
    seen, totals = walk(web, f"/ops/pages?node={quote(NODE)}&status=gone")
    assert len(seen) == gone and totals == {f"{gone:,}"}
    last = requests.get(web.url(f"/ops/pages?node={quote(NODE)}&page=50"), timeout=30).text
    assert "4,901\N{EN DASH}5,000 of <strong>5,000</strong>" in last and 'rel="next"' not in last


def test_the_node_view_counts_every_code_across_its_pages(web: ServedWeb) -> None:
    page = requests.get(web.url(f"/ops/node?node={quote(NODE)}"), timeout=30).text
    for code in {c for _, _, codes in KINDS for c, _ in codes}:
        count = sum(code in dict(k[2]) for k in KINDS) * PAGES // len(KINDS)
        assert re.search(
            rf"{re.escape(code)}</a></td>\s*<td><span class=\"sev \w+\">\w+</span></td>\s*"
            rf"<td class=\"num\">{count:,}</td>",
            page,
        ), code
    assert "profile <strong>dataone</strong>" in page  # recorded in the stored reports


def test_the_queue_pages_through_every_event(web: ServedWeb) -> None:
    first = requests.get(web.url(f"/ops/queue?node={quote(NODE)}"), timeout=30).text
    assert "1\N{EN DASH}100 of <strong>250</strong>" in first
    last = requests.get(web.url(f"/ops/queue?node={quote(NODE)}&offset=200"), timeout=30).text
    assert (
        "201\N{EN DASH}250 of <strong>250</strong>" in last
        and last.count('<tr><td class="num">') == 50
    )


def test_a_stored_report_shows_its_checklist_errors_first_and_rechecks_under_its_profile(
    web: ServedWeb,
) -> None:
    url = "https://repo.example/ds/0"  # not harvestable: an ISO copy missing, and advice
    page = requests.get(web.url("/ops/page"), params={"node": NODE, "url": url}, timeout=30).text
    assert "What DataONE needs: the dataone profile" in page
    assert page.index("an ISO metadata copy") < page.index("findings, errors first")
    assert page.index("dataone/encoding-missing</a>\n      <p") < page.index(
        "soso/creator-orcid</a>\n      <p"
    )
    recheck = f"/check?url={quote(url, safe='/')}&amp;profile=dataone"
    assert recheck in page


def test_from_elsewhere_ops_needs_the_operators_secret(proxied: ServedWeb) -> None:
    ops = proxied.url("/ops")
    refused = requests.get(ops, headers=ELSEWHERE, timeout=10)
    assert refused.status_code == 401 and NODE not in refused.text
    assert 'action="/ops/login"' in refused.text
    wrong = {**ELSEWHERE, "Authorization": "Bearer not-the-secret"}
    assert requests.get(ops, headers=wrong, timeout=10).status_code == 401
    bearer = {**ELSEWHERE, "Authorization": f"Bearer {SECRET}"}
    allowed = requests.get(ops, headers=bearer, timeout=10)
    assert allowed.status_code == 200 and NODE in allowed.text
    assert allowed.headers["Cache-Control"] == "no-store"
    for path in ("/ops/pages?node=x", "/ops/page?node=x&url=y", "/ops/queue", "/ops/failures"):
        assert requests.get(proxied.url(path), headers=ELSEWHERE, timeout=10).status_code == 401


def test_the_secret_typed_once_opens_ops_with_a_cookie_not_holding_it(proxied: ServedWeb) -> None:
    with requests.Session() as browser:
        browser.headers.update(ELSEWHERE)
        bad = browser.post(proxied.url("/ops/login"), data={"token": "guess"}, timeout=10)
        assert bad.status_code == 401 and "not the operator" in bad.text
        done = browser.post(
            proxied.url("/ops/login"), data={"token": SECRET}, allow_redirects=False, timeout=10
        )
        assert done.status_code == 303 and done.headers["Location"] == "/ops"
        cookie = done.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and SECRET not in cookie
        assert browser.get(proxied.url("/ops"), timeout=10).status_code == 200


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_on_loopback_ops_needs_no_secret_and_without_one_only_loopback(
    store: Store, tmp_path: Path
) -> None:
    with serve_wsgi(WebApp(Checker(), None, operator_view(store))) as local:
        assert requests.get(local.url("/ops"), timeout=10).status_code == 200
    app = WebApp(Checker(), None, operator_view(store))
    server = waitress.create_server(
        app,
        host="127.0.0.1",
        port=0,
        trusted_proxy="127.0.0.1",
        trusted_proxy_headers={"x-forwarded-for"},
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        origin = f"http://127.0.0.1:{server.effective_port}"
        got = requests.get(origin + "/ops", headers=ELSEWHERE, timeout=10)
        assert got.status_code == 401 and "only callers on this machine" in got.text
        login = requests.post(origin + "/ops/login", data={"token": ""}, headers=ELSEWHERE)
        assert login.status_code == 401
    finally:
        stop_waitress(server, thread)
