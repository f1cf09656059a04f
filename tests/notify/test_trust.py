"""Whom the inbox acts for, and what it reads as a notification: pure decisions."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from adapter.config.load import quick_node
from adapter.notify.inbox import InboxApp
from adapter.notify.patterns import (
    ANNOUNCE,
    CONTEXT,
    REQUEST_INGEST,
    UNDO_OFFER,
    Malformed,
    node_service,
    parse,
)
from adapter.notify.trust import Refused, Trusted, decide
from adapter.store.db import Store
from adapter.store.notify import sent

REPO = "https://repo.example.org/"
INBOX = "https://repo.example.org/inbox"
NODE = quick_node(
    "https://data.example.org/sitemap.xml",
    "urn:node:TRUST",
    scope={"allowed_hosts": ["files.example.org"], "exclude": ["/private/"]},
    notify={"origins": [{"id": REPO, "inbox": INBOX}], "per_origin_per_minute": 2},
)
DEEP: list[object] = []
for _ in range(40):
    DEEP = [DEEP]
OTHER = quick_node("https://other.example.net/sitemap.xml", "urn:node:OTHER")


def _doc(page: str = "https://data.example.org/dataset/1", **over: Any) -> dict[str, Any]:
    doc = {
        "@context": CONTEXT,
        "id": "urn:uuid:0370c0fb-bb78-4a9b-87f5-bed307a509dd",
        "type": ["Offer", "coar-notify:IngestAction"],
        "origin": {"id": REPO, "inbox": INBOX, "type": "Service"},
        "target": {"id": "https://adapter.example/TRUST", "inbox": "https://adapter.example/inbox"},
        "object": {"id": page, "type": "sorg:AboutPage"},
    }
    doc.update(over)
    return doc


def test_the_patterns_are_read_with_coarnotify():
    assert parse(_doc()).kind == REQUEST_INGEST
    assert parse(_doc(type="Announce")).kind == ANNOUNCE
    assert parse(_doc(type=["Announce", "coar-notify:IngestAction"])).kind == ANNOUNCE
    request = _doc()
    undo = _doc(type="Undo", id="urn:uuid:1", inReplyTo=request["id"], object=request)
    got = parse(undo)
    assert (got.kind, got.withdraws, got.page) == (UNDO_OFFER, request["id"], None)


@pytest.mark.parametrize(
    "change, why",
    [
        ({"type": ["Offer", "coar-notify:ReviewAction"]}, "acts on Request Ingest"),
        ({"type": "Flag"}, "unknown notification type"),
        ({"object": {"type": "sorg:AboutPage"}}, "object.id must be"),
        ({"object": {"id": "ftp://data.example.org/1"}}, "object.id must be"),
        ({"origin": {"id": REPO, "type": "Service"}}, "origin.inbox is missing"),
        ({"origin": {"id": "not a uri", "inbox": INBOX}}, "origin.id"),
        ({"id": None}, "id is missing"),
        ({"object": {"id": "https://data.example.org/1", "x": DEEP}}, "nested deeper than 32"),
    ],
)
def test_malformed_notifications_say_why(change, why):
    with pytest.raises(Malformed, match=why):
        parse(_doc(**change))


@pytest.mark.parametrize(
    "page",
    [
        "https://data.example.org/dataset/1",
        "http://files.example.org/d/2",
        "https://DATA.example.org/x",
    ],
)
def test_pages_on_the_nodes_hosts_are_trusted(page):
    decision = decide([OTHER, NODE], parse(_doc(page)))
    assert isinstance(decision, Trusted) and decision.nodes == (NODE,)


@pytest.mark.parametrize(
    "doc, why",
    [
        (_doc("https://other.example.net/dataset/1"), "not a page of a node that trusts"),
        (_doc("https://data.example.org/private/1"), "not a page of a node that trusts"),
        (_doc(origin={"id": "https://evil.example/", "inbox": INBOX}), "not a trusted origin"),
        (_doc(origin={"id": REPO, "inbox": "https://evil.example/in"}), "not the inbox configured"),
        (_doc(actor={"id": "http://169.254.169.254/latest", "type": "Service"}), "cloud metadata"),
        (_doc(actor={"id": "http://10.0.0.7/x", "type": "Service"}), "private address"),
        (_doc(actor={"id": "http://user:pw@example.org/", "type": "Service"}), "credentials"),
    ],
)
def test_everything_else_is_refused(doc, why):
    decision = decide([NODE, OTHER], parse(doc))
    assert isinstance(decision, Refused) and why in decision.reason


def test_the_inbox_limits_each_origin_per_minute(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        inbox = InboxApp(store, [NODE], {NODE.id: node_service("https://a.example", "TRUST", "T")})
        statuses = []
        for n in range(3):
            doc = copy.deepcopy(_doc(f"https://data.example.org/dataset/{n}"))
            doc["id"] = f"urn:uuid:{n}"
            statuses.append(inbox.receive(json.dumps(doc).encode())[0])
        assert statuses == [202, 202, 429]
        assert inbox.receive(b"[1, 2]") == (400, "the body is not a JSON object")
    finally:
        store.close()


def test_unprocessable_answers_are_limited_per_origin_per_minute(tmp_path):
    """A malformed notification only claims its origin: a stranger naming a trusted origin
    must not make the adapter flood that origin's inbox with Unprocessable Notifications."""
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        inbox = InboxApp(store, [NODE], {NODE.id: node_service("https://a.example", "TRUST", "T")})
        for n in range(5):
            doc = _doc("ftp://data.example.org/dataset/1")
            doc["id"] = f"urn:uuid:{n}"
            assert inbox.receive(json.dumps(doc).encode())[0] == 400
        queued = sent(store, node_id=NODE.id)
        assert [s.kind for s in queued] == ["unprocessable"] * 2
        assert {s.target_inbox for s in queued} == {INBOX}
    finally:
        store.close()
