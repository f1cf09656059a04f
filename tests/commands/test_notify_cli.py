"""`adapter notify list|retry` over a store that received a request and sent answers."""

from __future__ import annotations

import json
from pathlib import Path

from adapter.notify.patterns import CONTEXT, node_service, parse, tentative_accept
from adapter.store import notify as kept
from adapter.store.db import Store
from adapter.store.notify import Outgoing
from tests.support.cli import run_in_process

REPO = "https://repo.example.org/"
INBOX = "https://repo.example.org/inbox"
PAGE = "https://repo.example/dataset/1"


def _store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store.open(url)
    doc = {
        "@context": CONTEXT,
        "id": "urn:uuid:0370c0fb-bb78-4a9b-87f5-bed307a509dd",
        "type": ["Offer", "coar-notify:IngestAction"],
        "origin": {"id": REPO, "inbox": INBOX, "type": "Service"},
        "target": {"id": "https://adapter.example/X", "inbox": "https://adapter.example/inbox"},
        "object": {"id": PAGE, "type": "sorg:AboutPage"},
    }
    req = parse(doc)
    answer = tentative_accept(node_service("https://adapter.example", "X", "X"), req, "checking")
    out = Outgoing("urn:node:X", "tentative-accept", INBOX, answer, req.id, PAGE)
    request_id = kept.receive(
        store, "urn:node:X", req.id, req.kind, (REPO, INBOX), PAGE, doc, due=True, answers=[out]
    )
    [sent] = kept.sent(store)
    for _ in range(2):
        kept.record_attempt(
            store, sent.id, state="failed" if _ else "pending", now=sent.created_at,
            error="connection refused", retry_at=sent.created_at,
        )  # fmt: skip
    kept.settle(store, request_id, "rejected", [], reason="NOT HARVESTABLE  " + PAGE)
    store.close()
    return url


def test_list_shows_both_directions(tmp_path):
    url = _store(tmp_path)
    ran = run_in_process(["notify", "list", "--store", url], tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "Received (1):" in ran.stdout and "request-ingest  rejected" in ran.stdout
    assert PAGE in ran.stdout and "why: NOT HARVESTABLE" in ran.stdout
    assert "Sent (1):" in ran.stdout and "tentative-accept" in ran.stdout
    assert "failed    2 attempts -> https://repo.example.org/inbox" in ran.stdout
    assert "last error: connection refused" in ran.stdout


def test_list_as_json_and_filtered(tmp_path):
    url = _store(tmp_path)
    ran = run_in_process(["notify", "list", "--sent", "--json", "--store", url], tmp_path)
    [line] = ran.stdout.splitlines()
    sent = json.loads(line)
    assert sent["direction"] == "sent" and sent["state"] == "failed" and sent["attempts"] == 2
    assert sent["in_reply_to"] == "urn:uuid:0370c0fb-bb78-4a9b-87f5-bed307a509dd"
    ran = run_in_process(["notify", "list", "--state", "pending", "--store", url], tmp_path)
    assert "Received (0):" in ran.stdout and "Sent (0):" in ran.stdout


def test_retry_makes_failed_ones_pending_again(tmp_path):
    url = _store(tmp_path)
    assert run_in_process(["notify", "retry", "--store", url], tmp_path).returncode == 2
    ran = run_in_process(["notify", "retry", "--failed", "--store", url], tmp_path)
    assert ran.returncode == 0 and ran.stdout.startswith("1 notification(s) pending again")
    store = Store.open(url, create=False)
    try:
        [sent] = kept.sent(store)
    finally:
        store.close()
    assert (sent.state, sent.attempts) == ("pending", 0)
