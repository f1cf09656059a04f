"""The notify outbox on SQLite and PostgreSQL: an inbox that is down is tried again with
backoff (on virtual time), gets the notification once it is back (after a restart too), and
one that stays down is recorded failed after the attempts allowed; sending goes through the
address policy."""

from __future__ import annotations

from datetime import timedelta

import pytest
from coarnotify.factory import COARNotifyFactory
from coarnotify.patterns import TentativelyAccept

from adapter.notify.patterns import CONTEXT, Received, node_service, parse, tentative_accept
from adapter.notify.sender import Backoff, Sender
from adapter.store import notify as kept
from adapter.store.db import Store
from adapter.store.notify import Outgoing
from tests.support import stores
from tests.support.clock import FakeClock
from tests.support.ldn import LdnInbox, of_type
from tests.support.member_node import node_settings

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
REPO = "https://repo.example.org/"


def _request(inbox: str) -> Received:
    return parse(
        {
            "@context": CONTEXT,
            "id": "urn:uuid:0370c0fb-bb78-4a9b-87f5-bed307a509dd",
            "type": ["Offer", "coar-notify:IngestAction"],
            "origin": {"id": REPO, "inbox": inbox, "type": "Service"},
            "target": {"id": "https://adapter.example/X", "inbox": "https://adapter.example/inbox"},
            "object": {"id": "https://repo.example/dataset/1", "type": "sorg:AboutPage"},
        }
    )


def _queue(store: Store, node_id: str, inbox: str) -> int:
    me = node_service("https://adapter.example", "TESTREPO", "Test")
    req = _request(inbox)
    doc = tentative_accept(me, req, "checking")
    with store.write() as conn:
        return kept.enqueue(conn, Outgoing(node_id, "tentative-accept", inbox, doc, req.id))


def _row(store: Store, sent_id: int) -> kept.Sent:
    [row] = [s for s in kept.sent(store) if s.id == sent_id]
    return row


def test_an_inbox_that_is_down_gets_the_notification_once_it_is_back(store_url):
    inbox = LdnInbox()  # its port is chosen, nothing listens there yet
    node = node_settings(notify={"origins": [{"id": REPO, "inbox": inbox.url}]})
    store = Store.open(store_url)
    sent_id = _queue(store, node.id, inbox.url)
    clock = FakeClock()  # its wall time starts now: the queued notification is due
    sender = Sender(store, [node], clock=clock, backoff=Backoff(first=30, max_attempts=5))

    assert sender.deliver_due() == 0
    row = _row(store, sent_id)
    assert (row.state, row.attempts) == ("pending", 1)
    assert "refused" in (row.last_error or "")
    assert 29 <= (row.next_attempt_at - sender.now()).total_seconds() <= 31
    assert sender.deliver_due() == 0 and _row(store, sent_id).attempts == 1  # not due yet
    store.close()

    inbox.start()
    try:
        store = Store.open(store_url)  # a restart: the outbox is in the store
        sender = Sender(store, [node], clock=clock, backoff=Backoff(first=30, max_attempts=5))
        clock.advance(31)
        assert sender.deliver_due() == 1
        answer = COARNotifyFactory.get_by_object(inbox.wait_for(of_type("TentativeAccept")))
        assert isinstance(answer, TentativelyAccept) and answer.validate()
        assert answer.in_reply_to == "urn:uuid:0370c0fb-bb78-4a9b-87f5-bed307a509dd"
        assert inbox.content_types[0].startswith("application/ld+json")
        row = _row(store, sent_id)
        assert (row.state, row.attempts, row.http_status) == ("delivered", 2, 201)
        assert sender.deliver_due() == 0 and len(inbox.received) == 1  # never sent twice
    finally:
        inbox.stop()
        store.close()


def test_an_inbox_that_stays_down_is_recorded_failed_after_the_limit(store_url):
    inbox = LdnInbox()
    node = node_settings(notify={"origins": [{"id": REPO, "inbox": inbox.url}]})
    store = Store.open(store_url)
    sent_id = _queue(store, node.id, inbox.url)
    clock = FakeClock()
    backoff = Backoff(first=30, most=100, max_attempts=4)
    sender = Sender(store, [node], clock=clock, backoff=backoff)
    waits = []
    try:
        for _ in range(backoff.max_attempts):
            assert sender.deliver_due() == 0
            left = sender.seconds_to_next()
            if left is not None:
                waits.append(round(left))
                clock.advance(left + 1)
        row = _row(store, sent_id)
        assert (row.state, row.attempts) == ("failed", 4)
        assert waits == [30, 60, 100]  # doubling, capped at `most`
        assert sender.seconds_to_next() is None
        assert kept.counts(store)["sent"] == {"failed": 1}
    finally:
        store.close()


def test_a_reply_inbox_on_a_private_address_is_refused_unless_configured(store_url):
    inbox = LdnInbox().start()
    node = node_settings(notify={"origins": [{"id": REPO, "inbox": "https://repo.example/in"}]})
    store = Store.open(store_url)
    try:
        sent_id = _queue(store, node.id, inbox.url)
        sender = Sender(store, [node], clock=FakeClock(), backoff=Backoff(max_attempts=1))
        assert sender.deliver_due() == 0
        row = _row(store, sent_id)
        assert row.state == "failed"
        assert "loopback" in (row.last_error or "")
        assert inbox.received == []
    finally:
        inbox.stop()
        store.close()


@pytest.mark.parametrize("attempts, seconds", [(1, 30.0), (2, 60.0), (5, 480.0), (30, 21600.0)])
def test_backoff_doubles_up_to_its_most(attempts, seconds):
    assert Backoff().delay(attempts) == seconds
    assert timedelta(seconds=Backoff().delay(12)) <= timedelta(hours=6)
