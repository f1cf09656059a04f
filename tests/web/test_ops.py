"""The operator's view over a store a real sync wrote: nodes, runs, codes, pages, queue."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import requests

from adapter.store import notify as notify_store
from adapter.store.notify import Outgoing
from adapter.web.app import WebApp
from adapter.web.checking import Checker
from tests.support.web import serve_wsgi
from tests.web.conftest import NODE_ID, World

REPO = "https://repo.example.org/"
INBOX = "https://repo.example.org/inbox"


def get(world: World, path: str) -> str:
    got = requests.get(world.web.url(path), timeout=30)
    assert got.status_code == 200, (path, got.status_code)
    assert "default-src 'none'" in got.headers["Content-Security-Policy"]
    return got.text


def test_the_nodes_show_their_last_and_next_run(world: World) -> None:
    page = get(world, "/ops")
    last = world.runs[-1]
    assert NODE_ID in page and "Ops test repository" in page
    assert f'href="/ops/runs/{last.run_id}"' in page
    assert "next run" in page and "UTC" in page
    assert page.count('class="seg ') >= len(world.runs)  # the chart has a bar per run
    assert f"/ops/pages?node={quote(NODE_ID, safe='')}&amp;status=harvested" in page


def test_a_run_drills_down_to_the_pages_with_a_code_and_their_reports(world: World) -> None:
    first = world.runs[0]
    assert first.not_harvestable, "the fixture site has pages that are not harvestable"
    code, _pages = sorted(first.not_harvestable.items())[0]
    run_page = get(world, f"/ops/runs/{first.run_id}")
    assert f'href="/findings#{code}"' in run_page
    link = re.search(r'href="(/ops/pages\?[^"]*code=' + re.escape(quote(code)) + ')"', run_page)
    assert link, run_page
    pages = get(world, link.group(1).replace("&amp;", "&"))
    urls = re.findall(r'href="(/ops/page\?[^"]+)"', pages)
    assert urls
    report = get(world, urls[0].replace("&amp;", "&"))
    assert code in report
    assert "The stored report" in report


def test_the_queue_lists_the_pending_events(world: World) -> None:
    page = get(world, f"/ops/queue?node={NODE_ID}")
    pending = world.store.outbox(NODE_ID)
    assert pending
    assert page.count('<tr><td class="num">') == len(pending)


def test_sync_failures_are_shown_escaped(world: World) -> None:
    page = get(world, "/ops/failures")
    assert "sha256:abc" in page
    assert "&lt;b&gt;&#34;x&#34;&lt;/b&gt;" in page and "<b>" not in page


def test_unknown_runs_and_pages_are_404(world: World) -> None:
    assert requests.get(world.web.url("/ops/runs/99999"), timeout=10).status_code == 404
    missing = world.web.url(f"/ops/page?node={NODE_ID}&url=https://nowhere.example/")
    assert requests.get(missing, timeout=10).status_code == 404


def test_without_a_store_there_is_no_operator_view(tmp_path: Path) -> None:
    with serve_wsgi(WebApp(Checker())) as web:
        got = requests.get(web.url("/ops"), timeout=10)
    assert got.status_code == 404
    assert "only with --ops" in got.text


def test_coar_notify_shows_what_was_received_and_sent(world: World) -> None:
    page_url = "https://repo.example/dataset/<b>1</b>"
    store = world.store
    request_id = notify_store.receive(
        store, NODE_ID, "urn:uuid:1", "request-ingest", (REPO, INBOX), page_url, {}, due=False,
        answers=[Outgoing(NODE_ID, "tentative-accept", INBOX, {}, "urn:uuid:1", page_url)],
    )  # fmt: skip
    notify_store.settle(store, request_id, "rejected", [], reason="NOT HARVESTABLE <i>x</i>")
    [sent] = notify_store.sent(store)
    notify_store.record_attempt(
        store, sent.id, state="pending", now=sent.created_at, error="connection refused",
        retry_at=sent.created_at,
    )  # fmt: skip
    overview = get(world, "/ops")
    assert "COAR Notify" in overview and "rejected 1" in overview and "pending 1" in overview
    received = get(world, "/ops/notify")
    assert "&lt;b&gt;1&lt;/b&gt;" in received and "<b>1</b>" not in received
    assert "NOT HARVESTABLE &lt;i&gt;x&lt;/i&gt;" in received and REPO in received
    sent_page = get(world, "/ops/notify/sent")
    assert "tentative-accept" in sent_page and "connection refused" in sent_page
    assert INBOX in sent_page and "again" in sent_page
