"""COAR Notify end to end: COAR's own client sends to a real `adapter serve`, and a real LDN
inbox on 127.0.0.1 receives what the adapter answers, read back with `coarnotify`.

The repository is the `sync-change` fixture site; no sync has run, so a page's record in the
store comes only from the notification.
"""

from __future__ import annotations

import json
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests
import yaml
from coarnotify.client import COARNotifyClient
from coarnotify.factory import COARNotifyFactory
from coarnotify.patterns import Accept, Reject, TentativelyAccept

from adapter.notify.patterns import CONTEXT, RequestIngest
from adapter.store.db import Store
from adapter.store.frontier import find_page
from adapter.store.notify import page_objects, received, sent
from tests.support import SERVE_AS_STARTED, free_port
from tests.support.fixture_server import SITES, SiteServer, start_site, stop
from tests.support.ldn import LdnInbox, of_type
from tests.support.zygote import adapter_popen

NODE_ID = "urn:node:NOTIFYTEST"
REPO = "https://repo.example.org/"  # the repository's service id


@dataclass
class Setup:
    origin: str  # the adapter's http://127.0.0.1:PORT
    site: SiteServer
    inbox: LdnInbox
    store_url: str

    def request(self, page: str, origin: str = REPO, inbox: str | None = None) -> dict[str, Any]:
        return {
            "@context": CONTEXT,
            "id": f"urn:uuid:{uuid.uuid4()}",
            "type": ["Offer", "coar-notify:IngestAction"],
            "actor": {"id": origin, "name": "Test Repository", "type": "Service"},
            "origin": {"id": origin, "inbox": inbox or self.inbox.url, "type": "Service"},
            "target": {
                "id": f"{self.origin}/NOTIFYTEST",
                "inbox": f"{self.origin}/inbox",
                "type": "Service",
            },
            "object": {
                "id": page,
                "ietf:cite-as": "https://doi.org/10.5072/SYNC.STABLE",
                "type": ["Page", "sorg:AboutPage"],
            },
        }


SERVERS = {
    "waitress": ("--server", "waitress"),
    # the inbox answers in each of granian's workers; the notify worker is a process apart
    "granian": ("--server", "granian", "--workers", "2", "--threads", "2"),
}


@pytest.fixture(scope="module", params=list(SERVERS))
def setup(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Setup]:
    tmp = tmp_path_factory.mktemp("notify")
    servers = start_site("sync-change", SITES)
    site = servers[0]
    inbox = LdnInbox().start()
    store_url = f"sqlite:///{tmp / 'store.db'}"
    Store.open(store_url).close()
    config = {
        "store_url": store_url,
        "nodes": [
            {
                "id": NODE_ID,
                "name": "Notify Test Repository",
                "start": {"sitemap_urls": [site.url("/sitemap.xml")]},
                "politeness": {"requests_per_second": 20},
                "checks": {"profile": "mnlite"},  # no ISO copy asked of the fixture pages
                "dataone": {
                    "submitter": "http://orcid.org/0000-0002-1825-0097",
                    "rights_holder": "CN=test,DC=dataone,DC=org",
                    "contact_subject": "http://orcid.org/0000-0002-1825-0097",
                },
                "notify": {"origins": [{"id": REPO, "inbox": inbox.url}]},
            }
        ],
    }
    (tmp / "node.yaml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = tmp / "serve.log"
    with log.open("w") as sink:
        process = adapter_popen(  # forked with its imports done (tests/support/zygote.py)
            "serve", *SERVE_AS_STARTED, *SERVERS[request.param],
            "--config", str(tmp / "node.yaml"), "--port", str(port),
            stdout=sink, stderr=sink,
        )  # fmt: skip
    origin = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{origin}/healthz", timeout=2)
            break
        except requests.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"serve did not start:\n{log.read_text()}") from None
            time.sleep(0.1)
    try:
        yield Setup(origin, site, inbox, store_url)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0, log.read_text()
        inbox.stop()
        stop(servers)


def _send(setup: Setup, doc: dict[str, Any]) -> None:
    """Sent with COAR's own client, as a repository would."""
    response = COARNotifyClient(f"{setup.origin}/inbox").send(RequestIngest(doc))
    assert response.action == "accepted"


def _post(setup: Setup, body: bytes | dict[str, Any]) -> requests.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return requests.post(
        f"{setup.origin}/inbox",
        data=data,
        headers={"Content-Type": "application/ld+json"},
        timeout=30,
    )


def _answer_to(request_id: str) -> Any:
    """The final answer to a request: Accept or Reject."""
    accept, reject = of_type("Accept", request_id), of_type("Reject", request_id)
    return lambda doc: accept(doc) or reject(doc)


def _parsed(doc: dict[str, Any]) -> Any:
    pattern = COARNotifyFactory.get_by_object(json.loads(json.dumps(doc)))
    assert pattern.validate()
    return pattern


def test_a_trusted_request_is_tentatively_accepted_then_accepted_with_the_pid(setup):
    page = setup.site.url("/dataset/stable")
    request = setup.request(page)
    _send(setup, request)
    tentative = _parsed(setup.inbox.wait_for(of_type("TentativeAccept", request["id"])))
    assert isinstance(tentative, TentativelyAccept)
    assert tentative.in_reply_to == request["id"] and tentative.object.id == request["id"]
    answer = _parsed(setup.inbox.wait_for(_answer_to(request["id"]), timeout=90))
    assert isinstance(answer, Accept), answer.doc
    assert answer.origin.inbox == f"{setup.origin}/inbox"
    assert answer.target.id == REPO
    store = Store.open(setup.store_url, create=False)
    try:
        [obj, *_] = page_objects(store, NODE_ID, page)
        [row] = find_page(store, page, NODE_ID)
    finally:
        store.close()
    assert answer.doc["context"]["identifier"] == obj.pid
    assert answer.doc["context"]["seriesId"] == obj.series_id == "doi:10.5072/sync.stable"
    assert "/check?url=" in answer.doc["context"]["url"]
    assert row.last_status == "harvested" and row.harvestable
    ingest = _parsed(setup.inbox.wait_for(of_type("Announce", request["id"])))
    assert ingest.doc["object"]["identifier"] == obj.pid
    assert ingest.doc["context"]["id"] == page


def _once_answered(store: Store, request_id: str, timeout: float = 30.0) -> list[Any]:
    """The answers sent to a request, once none is pending: the test inbox has the answer
    before the sender hears its 2xx and records it delivered."""
    deadline = time.monotonic() + timeout
    while True:
        answers = sent(store, in_reply_to=request_id)
        if all(s.state != "pending" for s in answers) or time.monotonic() > deadline:
            return answers
        time.sleep(0.05)


def test_a_request_for_a_page_that_is_not_harvestable_is_rejected_with_reasons(setup):
    page = setup.site.url("/dataset/no-doi")
    request = setup.request(page)
    _send(setup, request)
    answer = _parsed(setup.inbox.wait_for(_answer_to(request["id"]), timeout=90))
    assert isinstance(answer, Reject), answer.doc
    summary = answer.summary
    assert summary.startswith("NOT HARVESTABLE")
    assert "/check?url=" in summary and "identifier" in summary.lower()
    store = Store.open(setup.store_url, create=False)
    try:
        [kept] = [r for r in received(store) if r.notification_id == request["id"]]
        delivered = _once_answered(store, request["id"])
    finally:
        store.close()
    assert kept.state == "rejected"
    assert {s.kind for s in delivered} == {"tentative-accept", "reject"}
    assert all(s.state == "delivered" for s in delivered)


def test_an_untrusted_origin_is_refused_and_nothing_is_fetched(setup):
    page = setup.site.url("/dataset/edited")
    before = len(setup.site.log)
    answer = _post(setup, setup.request(page, origin="https://stranger.example/"))
    assert answer.status_code == 403
    assert "not a trusted origin" in answer.text
    time.sleep(1.0)
    assert not [r for r in setup.site.log[before:] if r.path == "/dataset/edited"]


def test_a_trusted_origin_asking_for_another_host_is_refused(setup):
    answer = _post(setup, setup.request("https://elsewhere.example/dataset/1"))
    assert answer.status_code == 403
    assert "not a page of a node" in answer.text


def test_answers_go_only_to_the_configured_inbox(setup):
    request = setup.request(setup.site.url("/dataset/edited"), inbox="https://evil.example/in")
    assert _post(setup, request).status_code == 403


def test_a_huge_body_is_refused(setup):
    huge = setup.request(setup.site.url("/dataset/edited"))
    huge["summary"] = "x" * (200 * 1024)
    assert _post(setup, huge).status_code == 413


def test_a_malformed_notification_gets_400_and_an_unprocessable_notification(setup):
    assert _post(setup, b"{not json").status_code == 400
    bad = setup.request(setup.site.url("/dataset/edited"))
    del bad["object"]
    answer = _post(setup, bad)
    assert answer.status_code == 400
    flag = _parsed(setup.inbox.wait_for(of_type("Flag", bad["id"])))
    assert "object" in flag.summary


def test_the_base_url_and_the_check_page_advertise_the_inbox(setup):
    inbox = f'<{setup.origin}/inbox>; rel="http://www.w3.org/ns/ldp#inbox"'
    for path in ("/NOTIFYTEST", "/NOTIFYTEST/v2", "/check"):
        answer = requests.get(setup.origin + path, timeout=30)
        assert inbox in answer.headers.get("Link", ""), path
    assert "ldp#inbox" not in requests.get(setup.origin + "/healthz", timeout=30).headers.get(
        "Link", ""
    )


def test_the_inbox_lists_nothing_and_says_what_it_takes(setup):
    answer = requests.get(f"{setup.origin}/inbox", timeout=30)
    assert answer.status_code == 200 and answer.headers["Accept-Post"] == "application/ld+json"
    assert answer.json()["contains"] == []
    wrong = requests.post(
        f"{setup.origin}/inbox", data=b"<x/>", headers={"Content-Type": "text/xml"}, timeout=30
    )
    assert wrong.status_code == 415
    assert requests.delete(f"{setup.origin}/inbox", timeout=30).status_code == 405


def test_metrics_count_the_notifications(setup):
    text = requests.get(f"{setup.origin}/metrics", timeout=30).text
    lines = [line for line in text.splitlines() if line.startswith("adapter_notify_")]
    delivered = 'adapter_notify_notifications{direction="sent",state="delivered"}'
    assert any(line.startswith(delivered) and float(line.split()[-1]) >= 4 for line in lines)
    assert any('direction="received",state="rejected"' in line for line in lines), lines
