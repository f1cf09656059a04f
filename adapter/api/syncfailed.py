"""MNRead.synchronizationFailed: the coordinating node tells us it could not sync a PID.

The CN POSTs a multipart body whose file part `message` is a
SynchronizationFailed exception document. Like GMN, the node answers 200
whatever arrives (the CN does not retry), and keeps what it can: one log line
and one row in the store's sync-failure table, which the operator reads. This
is the only write the Member Node API makes.

With token verification configured (`auth.cn_certificate`), only a caller
whose token names a subject in `auth.cn_subjects` may post; anyone else is
NotAuthorized (a bad token InvalidToken). Without it anyone can POST here, so
what is kept is capped (`CAPS`, `MAX_BODY_BYTES`):
a body is read up to 64 KiB and at most 8 KiB of its message is stored; per
node and UTC day at most 5 reports per object (PID or seriesId the node
holds), 20 reports naming no object of the node (together) and 500 reports in
all; reports older than 30 days are deleted as new ones arrive. A dropped
report still gets 200 and its log line (rate-limited by the same caps). So
anonymous posts add at most 20 x 8 KiB a day per node, and a store keeps at
most 500 x 8 KiB x 30 (about 120 MB) of reports per node however it is hit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from lxml import etree

from adapter.api.auth import caller_of, not_authorized
from adapter.api.call import Call, Response
from adapter.errors import StoreError
from adapter.store.history import FailureCaps

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024  # a SynchronizationFailed document is a few hundred bytes
MAX_KEPT_CHARS = 8 * 1024  # what is stored of a message
CAPS = FailureCaps(
    per_object_per_day=5,
    unnamed_per_day=20,
    per_node_per_day=500,
    keep_days=30,
    max_chars=MAX_KEPT_CHARS,
)
_SAFE_XML = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
)


@dataclass(frozen=True, slots=True)
class FailureReport:
    """What the CN said, as far as it could be read."""

    text: str  # the message document (or the raw body when no part was found)
    identifier: str | None = None
    detail_code: str | None = None
    description: str | None = None


def synchronization_failed(call: Call) -> Response:
    if call.authority.verifies:  # then only the CN may report
        who = caller_of(call.environ, call.authority, call.method)
        if not call.authority.is_cn(who):
            shown = "anonymous callers" if who.anonymous else who.subject
            raise not_authorized(
                call.method, f"only the coordinating node may report failures, not {shown}"
            )
    body = _read_body(call.environ)
    report = parse_report(str(call.environ.get("CONTENT_TYPE", "")), body)
    node_id = call.node.info.id
    try:
        kept = call.store.keep_sync_failure(node_id, report.identifier, report.text, CAPS)
    except StoreError as exc:  # still 200: the CN does not retry, the log line stays
        log.error("synchronizationFailed for %s could not be stored: %s", node_id, exc)
        kept = 0
    if kept is None:
        log.debug("synchronizationFailed for %s dropped: over the day's cap", node_id)
        return _ok()
    log.warning(
        "synchronizationFailed from %s for node %s: pid %s, detailCode %s: %s",
        call.environ.get("REMOTE_ADDR", "?"),
        node_id,
        (report.identifier or "(none)")[:200],
        (report.detail_code or "(none)")[:40],
        (report.description or "(no description)")[:500],
        extra={"event": "sync-failed", "node": node_id, "pid": report.identifier},
    )
    return _ok()


def _ok() -> Response:
    return Response(200, b"OK", content_type="text/plain; charset=utf-8")


def _read_body(environ: dict[str, Any]) -> bytes:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    stream = environ.get("wsgi.input")
    if stream is None or length <= 0:
        return b""
    return bytes(stream.read(min(length, MAX_BODY_BYTES)))


def parse_report(content_type: str, body: bytes) -> FailureReport:
    """The `message` part of a multipart body (or an XML body sent bare), read leniently."""
    document = body
    if content_type.lower().startswith("multipart/"):
        document = _message_part(content_type, body) or body
    # NUL cannot be stored in PostgreSQL text; a report is for reading, so it is shown as such
    text = document.decode("utf-8", "replace")[:MAX_KEPT_CHARS].replace("\x00", "\ufffd")
    try:
        root = etree.fromstring(document, parser=_SAFE_XML)
    except etree.XMLSyntaxError:
        return FailureReport(text)
    description = root.findtext("description")
    return FailureReport(
        text,
        identifier=root.get("identifier") or root.get("pid") or None,
        detail_code=root.get("detailCode"),
        description=" ".join(description.split()) if description else None,
    )


def _message_part(content_type: str, body: bytes) -> bytes | None:
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    if not isinstance(message, EmailMessage) or not message.is_multipart():
        return None
    for part in message.iter_parts():
        if not isinstance(part, EmailMessage):
            continue
        name = part.get_param("name", header="content-disposition")
        if name == "message":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else None
    return None
