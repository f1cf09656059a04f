"""The notify worker on SQLite and PostgreSQL, in process: what the inbox keeps is checked
through the sync engine (only the pages asked for), settled from the store, withdrawn by an
Undo Offer; `report_to` hears once per page and state change."""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.notify.inbox import InboxApp
from adapter.notify.patterns import CONTEXT, node_service
from adapter.notify.worker import NotifyWorker
from adapter.store import notify as kept
from adapter.store.db import Store
from adapter.store.frontier import find_page, frontier_rows
from adapter.sync.drain import WorkOptions
from adapter.sync.run import run_node
from adapter.sync.worker import work
from tests.support import stores
from tests.support.fixture_server import SITES, SiteServer, start_site, stop

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
REPO = "https://repo.example.org/"
INBOX = "https://repo.example.org/inbox"
PUBLIC = "https://adapter.example"


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    servers = start_site("sync-change", SITES)
    yield servers[0]
    stop(servers)


def _node(site: SiteServer, **notify: Any) -> NodeSettings:
    return quick_node(
        site.url("/sitemap.xml"),
        "urn:node:NOTIFYWORK",
        checks={"profile": "mnlite"},
        politeness={"requests_per_second": 20},
        notify={"origins": [{"id": REPO, "inbox": INBOX}], **notify},
    )


def _inbox(store: Store, node: NodeSettings) -> InboxApp:
    return InboxApp(store, [node], {node.id: node_service(PUBLIC, node.short_name, node.name)})


def _doc(kind: list[str] | str, page: str | None = None, **extra: Any) -> dict[str, Any]:
    doc = {
        "@context": CONTEXT,
        "id": f"urn:uuid:{uuid.uuid4()}",
        "type": kind,
        "origin": {"id": REPO, "inbox": INBOX, "type": "Service"},
        "target": {"id": f"{PUBLIC}/NOTIFYWORK", "inbox": f"{PUBLIC}/inbox", "type": "Service"},
        **extra,
    }
    if page:
        doc["object"] = {"id": page, "type": "sorg:AboutPage"}
    return doc


def _send(inbox: InboxApp, doc: dict[str, Any]) -> int:
    status, _text = inbox.receive(json.dumps(doc).encode())
    return status


def _kinds(store: Store, in_reply_to: str) -> list[str]:
    return sorted(s.kind for s in kept.sent(store, in_reply_to=in_reply_to))


def test_requests_are_checked_alone_and_answered(store_url, site):
    node = _node(site)
    store = Store.open(store_url)
    try:
        inbox = _inbox(store, node)
        good, bad = (
            _doc(INGEST, site.url("/dataset/stable")),
            _doc(INGEST, site.url("/dataset/no-doi")),
        )
        assert _send(inbox, good) == 202 and _send(inbox, bad) == 202
        assert _send(inbox, good) == 202  # a resend: nothing more
        assert [r.url for r in frontier_rows(store, node.id)] == [
            site.url("/dataset/stable"), site.url("/dataset/no-doi")
        ]  # fmt: skip
        worker = NotifyWorker(store, [node], PUBLIC)
        assert worker.check_once() == 2
        assert _kinds(store, good["id"]) == ["accept", "announce-ingest", "tentative-accept"]
        assert _kinds(store, bad["id"]) == ["reject", "tentative-accept"]
        [accept] = [s for s in kept.sent(store, in_reply_to=good["id"]) if s.kind == "accept"]
        [page] = find_page(store, site.url("/dataset/stable"), node.id)
        assert page.harvestable and not page.due
        [obj, *_] = kept.page_objects(store, node.id, page.url)
        assert accept.body["context"]["identifier"] == obj.pid
        assert accept.body["context"]["seriesId"] == obj.series_id
        [reject] = [s for s in kept.sent(store, in_reply_to=bad["id"]) if s.kind == "reject"]
        assert reject.body["summary"].startswith("NOT HARVESTABLE")
        assert f"{PUBLIC}/check?url=" in reject.body["summary"]
        states = {r.notification_id: r.state for r in kept.received(store)}
        assert states == {good["id"]: "accepted", bad["id"]: "rejected"}
        assert worker.check_once() == 0  # settled once
    finally:
        store.close()


def test_only_the_pages_asked_for_are_claimed(store_url, site):
    node = _node(site)
    store = Store.open(store_url)
    try:
        config = AdapterConfig(store_url=store_url, nodes=(node,))
        run_node(config, node, enqueue_only=True)  # every page of the sitemap due
        due = {r.url for r in frontier_rows(store, node.id)}
        assert len(due) > 3
        inbox = _inbox(store, node)
        request = _doc(INGEST, site.url("/dataset/edited"))
        assert _send(inbox, request) == 202
        NotifyWorker(store, [node], PUBLIC).check_once()
        checked = {r.url for r in frontier_rows(store, node.id) if r.last_checked_at}
        assert checked == {site.url("/dataset/edited")}
        assert _kinds(store, request["id"])[0] == "accept"
    finally:
        store.close()


def test_an_undo_offer_withdraws_a_pending_request(store_url, site):
    node = _node(site)
    store = Store.open(store_url)
    try:
        inbox = _inbox(store, node)
        request = _doc(INGEST, site.url("/dataset/fresh"))
        assert _send(inbox, request) == 202
        undo = _doc("Undo", inReplyTo=request["id"], object={**request, "@context": None})
        del undo["object"]["@context"]
        assert _send(inbox, undo) == 202
        states = {r.notification_id: r.state for r in kept.received(store)}
        assert states == {request["id"]: "withdrawn", undo["id"]: "noted"}
        assert NotifyWorker(store, [node], PUBLIC).check_once() == 0
        assert _kinds(store, request["id"]) == ["tentative-accept"]  # no answer after the undo
    finally:
        store.close()


def test_report_to_hears_once_per_page_and_state_change(store_url, tmp_path):
    root = tmp_path / "sites" / "sync-change"
    shutil.copytree(SITES / "sync-change", root)
    servers = start_site("sync-change", tmp_path / "sites")
    site = servers[0]
    node = _node(site, report_to="https://repo.example.org/status-inbox")
    no_doi = site.url("/dataset/no-doi")
    store = Store.open(store_url)
    try:
        config = AdapterConfig(store_url=store_url, nodes=(node,))
        run_node(config, node)
        worker = NotifyWorker(store, [node], PUBLIC)
        worker.check_once()
        told = kept.sent(store)
        bad = {s.page_url: s for s in told if s.kind == "announce-not-harvestable"}
        assert no_doi in bad and len(bad) == len(told)  # one each
        assert not [s for s in told if s.kind == "announce-harvestable"]  # nothing was bad before
        assert all(s.target_inbox == node.notify.report_to for s in told)
        summary = bad[no_doi].body["summary"]
        assert summary.startswith("NOT HARVESTABLE") and "/check?url=" in summary
        worker.check_once()  # the same run: nothing again
        run_node(config, node)  # a new run, nothing changed
        worker.check_once()
        assert len(kept.sent(store)) == len(told)
        page = root / "dataset" / "no-doi.html"  # the repository fixes the page
        fixed = '"identifier": "https://doi.org/10.5072/sync.fixed",\n  "dateModified"'
        page.write_text(page.read_text().replace('"dateModified"', fixed, 1))
        sitemap = root / "sitemap.xml"
        moved = "no-doi</loc><lastmod>2024-02-01"
        sitemap.write_text(sitemap.read_text().replace("no-doi</loc><lastmod>2024-01-01", moved))
        run_node(config, node)
        worker.check_once()
        worker.check_once()
        again = [s for s in kept.sent(store) if s.kind == "announce-harvestable"]
        assert [s.page_url for s in again] == [no_doi]
        assert "harvestable again" in again[0].body["summary"]
        assert len(kept.sent(store)) == len(told) + 1
    finally:
        store.close()
        stop(servers)


INGEST = ["Offer", "coar-notify:IngestAction"]


def test_a_page_an_adapter_worker_checks_first_is_answered_all_the_same(store_url, site):
    node = _node(site)
    store = Store.open(store_url)
    try:
        inbox = _inbox(store, node)
        request = _doc(INGEST, site.url("/dataset/with-iso"))
        assert _send(inbox, request) == 202
        done = work(store, [node], threading.Event(), WorkOptions(until_idle=True))
        assert done[node.id].fetched == 1  # `adapter worker` claimed the pushed page
        worker = NotifyWorker(store, [node], PUBLIC)
        [pending] = kept.pending_requests(store)
        assert worker.settle(pending)  # from the store: no second check
        assert _kinds(store, request["id"]) == ["accept", "announce-ingest", "tentative-accept"]
    finally:
        store.close()


def test_an_announce_is_checked_and_answered_only_with_news(store_url, site):
    node = _node(site)
    store = Store.open(store_url)
    try:
        inbox = _inbox(store, node)
        changed = _doc("Announce", site.url("/dataset/counter"))
        broken = _doc("Announce", site.url("/dataset/no-doi"))
        assert _send(inbox, changed) == 202 and _send(inbox, broken) == 202
        assert NotifyWorker(store, [node], PUBLIC).check_once() == 2
        assert _kinds(store, changed["id"]) == ["announce-ingest"]  # no Tentative Accept
        [reply] = kept.sent(store, in_reply_to=broken["id"])
        assert reply.kind == "reply-not-harvestable"
        assert reply.body["type"] == "Announce" and reply.body["inReplyTo"] == broken["id"]
        assert reply.body["summary"].startswith("NOT HARVESTABLE")
        assert kept.announced_states(store, node.id) == {}  # report_to tells on its own terms
    finally:
        store.close()
