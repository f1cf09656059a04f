"""`POST /inbox`: the LDN inbox of `adapter serve` (COAR Notify), and the `Link` that names it.

What a POST gets:
- 202: a trusted origin's Request Ingest, Announce or Undo Offer, kept in the store; for a
  request its page is made due now and a Tentative Accept queued, in one transaction (the
  notify worker checks the page and sends the answers: adapter.notify.worker);
- 400: not JSON, or not a notification `coarnotify` accepts (a configured origin also gets
  an Unprocessable Notification at its inbox, at most `per_origin_per_minute` a minute);
  403: an origin no node trusts, a page not on the hosts of a node that trusts it, a
  refused URL (logged; nothing fetched or kept);
- 413: a body over `max_body` bytes; 415: not JSON by its Content-Type; 429: the origin
  sent more than its node's `notify.per_origin_per_minute` in the last minute.

A GET (LDN's inbox listing) answers an empty container with `Accept-Post`.

A resend of a notification already received (same origin, same id) gets 202 and changes
nothing. `Advertise` adds `Link: <.../inbox>; rel="http://www.w3.org/ns/ldp#inbox"` to the
Member Node base URLs and the check page, where LDN senders look for it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.errors import StoreError
from adapter.notify.patterns import (
    INBOX_PATH,
    REQUEST_INGEST,
    UNDO_OFFER,
    Malformed,
    Received,
    Service,
    parse,
    peek_origin_inbox,
    tentative_accept,
    unprocessable,
)
from adapter.notify.trust import Refused, configured_origin, decide
from adapter.store import notify as kept
from adapter.store.db import Store
from adapter.store.notify import Outgoing

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024  # bytes: a notification is a few KiB; COAR's examples are under 3
JSON_TYPES = ("application/ld+json", "application/json", "application/activity+json")
LDP_INBOX = "http://www.w3.org/ns/ldp#inbox"
ALLOW = "GET, HEAD, OPTIONS, POST"

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class InboxApp:
    """The WSGI application answering `/inbox`."""

    def __init__(
        self,
        store: Store,
        nodes: Sequence[NodeSettings],
        services: dict[str, Service],
        *,
        wake: Callable[[], None] = lambda: None,
        max_body: int = MAX_BODY,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.store = store
        self.nodes = list(nodes)
        self.services = services  # node id -> the adapter as that node's service
        self.wake = wake  # the notify worker: something to do
        self.max_body = max_body
        self.now = now

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        if method in ("GET", "HEAD", "OPTIONS"):
            return _listing(start_response, method)
        if method != "POST":
            return _answer(start_response, 405, "POST a notification here", [("Allow", ALLOW)])
        kind = str(environ.get("CONTENT_TYPE", "")).split(";", 1)[0].strip().lower()
        if kind not in JSON_TYPES:
            why = f"Content-Type {kind or '(none)'} is not application/ld+json"
            return _answer(start_response, 415, why)
        body = _read(environ, self.max_body)
        if body is None:
            return _answer(start_response, 413, f"a notification is at most {self.max_body} bytes")
        try:
            status, text = self.receive(body)
        except StoreError as exc:  # nothing was kept: the sender may send it again
            log.error("inbox: the store is unavailable: %s", exc)
            return _answer(start_response, 503, "the store is unavailable; send it again later",
                           [("Retry-After", "60")])  # fmt: skip
        return _answer(start_response, status, text)

    def receive(self, body: bytes) -> tuple[int, str]:
        """The status and text the sender gets for this body."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return 400, "the body is not JSON"
        try:
            rec = parse(data)
        except Malformed as exc:
            self._unprocessable(data, str(exc))
            return 400, str(exc)
        ours = [u for s in self.services.values() for u in (s.id, s.inbox)]
        decision = decide(self.nodes, rec, ours)
        if isinstance(decision, Refused):
            log.warning("inbox: refused %s from %s: %s", rec.id, rec.origin_id, decision.reason)
            return 403, decision.reason
        node = decision.nodes[0]
        if kept.known(self.store, rec.origin_id, rec.id):
            return 202, "already received"
        since = self.now() - timedelta(minutes=1)
        limit = node.notify.per_origin_per_minute
        if kept.received_since(self.store, rec.origin_id, since) >= limit:
            return 429, f"more than {limit} notifications a minute from {rec.origin_id}"
        if rec.kind == UNDO_OFFER:
            return self._undo(decision.nodes, rec)
        answers = []
        if rec.kind == REQUEST_INGEST:
            service = self.services[node.id]
            summary = f"{rec.page} is checked now; the answer follows."
            answers.append(
                _out(node, "tentative-accept", rec, tentative_accept(service, rec, summary))
            )
        to = (rec.origin_id, rec.origin_inbox)
        kept.receive(
            self.store, node.id, rec.id, rec.kind, to, rec.page, data, due=True, answers=answers
        )
        log.info("inbox: %s %s from %s for %s", rec.kind, rec.id, rec.origin_id, rec.page)
        self.wake()
        return 202, "accepted: the page is checked now"

    def _undo(self, nodes: Sequence[NodeSettings], rec: Received) -> tuple[int, str]:
        withdrawn = any(
            kept.withdraw(self.store, n.id, rec.origin_id, rec.withdraws or "") for n in nodes
        )
        to = (rec.origin_id, rec.origin_inbox)
        state = "noted" if withdrawn else "ignored"
        kept.receive(self.store, nodes[0].id, rec.id, rec.kind, to, None, rec.doc, due=False,
                     state=state)  # fmt: skip
        if withdrawn:
            return 202, f"request {rec.withdraws} withdrawn"
        return 202, f"no pending request {rec.withdraws} from {rec.origin_id}: nothing to undo"

    def _unprocessable(self, data: Any, why: str) -> None:
        """A configured origin's malformed notification: an Unprocessable Notification to
        the inbox the operator configured for it (never to an inbox named only in a payload
        that did not parse)."""
        notification_id, origin_id, _inbox = peek_origin_inbox(data)
        known = configured_origin(self.nodes, origin_id)
        if known is None or notification_id is None:
            log.info("inbox: malformed notification (%s)", why)
            return
        node = next(n for n in self.nodes if known in n.notify.origins)
        since = self.now() - timedelta(minutes=1)
        limit = node.notify.per_origin_per_minute
        if kept.sent_since(self.store, known.inbox, "unprocessable", since) >= limit:
            # anyone can name a trusted origin in a payload that does not parse
            log.warning("inbox: malformed notification %s from %s not answered: more than "
                        "%d a minute", notification_id, known.id, limit)  # fmt: skip
            return
        doc = unprocessable(self.services[node.id], (known.id, known.inbox), notification_id, why)
        with self.store.write() as conn:
            kept.enqueue(
                conn, Outgoing(node.id, "unprocessable", known.inbox, doc, notification_id)
            )
        log.info("inbox: malformed notification %s from %s (%s)", notification_id, known.id, why)
        self.wake()


def _out(node: NodeSettings, kind: str, rec: Received, doc: dict[str, Any]) -> Outgoing:
    return Outgoing(node.id, kind, rec.origin_inbox, doc, rec.id, rec.page)


def _read(environ: dict[str, Any], cap: int) -> bytes | None:
    """The request body, or None when it is over `cap` bytes (told or found)."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or -1)
    except ValueError:
        length = -1
    if length > cap:
        return None
    stream = environ["wsgi.input"]
    body = stream.read(length if length >= 0 else cap + 1)
    return None if len(body) > cap else bytes(body)


def _listing(start_response: StartResponse, method: str) -> list[bytes]:
    """LDN's GET on an inbox: a container that lists nothing. What repositories sent is
    theirs and the operator's (`adapter notify list`), not every caller's; `Accept-Post`
    says what may be POSTed."""
    body = json.dumps(
        {
            "@context": "http://www.w3.org/ns/ldp",
            "@id": "",
            "@type": ["ldp:Container", "ldp:BasicContainer"],
            "contains": [],
        }
    ).encode()
    start_response(
        "200 OK",
        [
            ("Content-Type", "application/ld+json"),
            ("Content-Length", str(len(body) if method == "GET" else 0)),
            ("Accept-Post", "application/ld+json"),
            ("Allow", ALLOW),
        ],
    )
    return [body] if method == "GET" else []


def _answer(
    start_response: StartResponse,
    status: int,
    text: str,
    headers: list[tuple[str, str]] | None = None,
) -> list[bytes]:
    reasons = {
        202: "Accepted",
        400: "Bad Request",
        403: "Forbidden",
        405: "Method Not Allowed",
        413: "Content Too Large",
        415: "Unsupported Media Type",
        429: "Too Many Requests",
        503: "Service Unavailable",
    }
    body = (text + "\n").encode()
    start_response(
        f"{status} {reasons.get(status, '')}".strip(),
        [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", str(len(body))),
            *(headers or []),
        ],
    )
    return [body]


class Advertise:
    """`/inbox` to the inbox; every other request to `app`, the inbox's `Link` added to the
    Member Node base URLs (`/<short name>`, its `/v1`, `/v2` and their Node documents) and
    the check page."""

    def __init__(self, inbox: WsgiApp, app: WsgiApp, short_names: Iterable[str], public: str):
        self.inbox = inbox
        self.app = app
        self.set_public(public)
        bases = {f"/{name}" for name in short_names}
        self.advertised = {"/check"} | bases
        self.advertised |= {f"{b}/{v}{tail}" for b in bases for v in ("v1", "v2")
                            for tail in ("", "/node")}  # fmt: skip

    def set_public(self, public: str) -> None:
        """The server's public URL, known once it listens."""
        self.link = f'<{public.rstrip("/")}{INBOX_PATH}>; rel="{LDP_INBOX}"'

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        if path.rstrip("/") == INBOX_PATH:
            return self.inbox(environ, start_response)
        if path.rstrip("/") not in self.advertised:
            return self.app(environ, start_response)

        def with_link(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            return start_response(status, [*headers, ("Link", self.link)], *exc)

        return self.app(environ, with_link)
