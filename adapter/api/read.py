"""MNCore and MNRead methods: a routed `Call` in, a `Response` out.

Each handler validates its parameters (d1params), reads the store and writes
the DataONE document (d1xml); errors are `D1Error`s carrying the method's own
detail codes. listObjects pages over the store's change log (each object at its
first change in the window, so a sync never shifts the CN's offsets; see
`Store.list_changes`; `Store.list_entries` reads only the ObjectInfo fields),
ascending by that change's time then PID, `count` capped, InvalidRequest when `start >= total > 0`.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from urllib.parse import quote

from adapter.api.auth import Caller, caller_of, not_authorized
from adapter.api.call import Call, Handler, Response
from adapter.api.exceptions import invalid_request, not_found, service_failure
from adapter.api.params import (
    CHECKSUM_ALGORITHMS,
    algorithm_key,
    checked_identifier,
    checked_text,
    parse_algorithm,
    parse_bool,
    parse_count,
    parse_date,
    parse_query,
)
from adapter.api.syncfailed import synchronization_failed
from adapter.api.xml import (
    LogEntry,
    checksum_xml,
    log_xml,
    node_xml,
    object_entries_xml,
    sysmeta_v1,
)
from adapter.models import SyncRecord
from adapter.store.accesslog import AccessEvent, LogQuery
from adapter.store.listing import ListedObject, Window

DEFAULT_COUNT = 100  # d1_common.const.DEFAULT_SLICE_SIZE, GMN's default page
MAX_COUNT = 1000  # objectInfo per page; the CN pages on with start += len(page)
# A larger start is lowered to this: the slice's start attribute is an xs:int in D1-XSD (an
# objectList or log of no entries echoes it, and 2**31 broke the schema)
MAX_START = 2**31 - 1
WITHHELD = "withheld"  # what a caller other than the CN sees of an entry's IP address and subject
# D1-XSD Event
EVENTS = (
    "create",
    "read",
    "update",
    "delete",
    "replicate",
    "synchronization_failed",
    "replication_failed",
)


def ping(call: Call) -> Response:
    """200 only when the store answers: a CN reads anything else as "node down"."""
    now = datetime.now(UTC)
    call.store.list_objects(call.node.info.id, from_date=now, count=0)
    return Response(
        200,
        b"",
        [
            ("Date", format_datetime(now, usegmt=True)),
            ("Expires", format_datetime(now, usegmt=True)),
            ("Cache-Control", "no-cache, no-store, must-revalidate"),
            ("Pragma", "no-cache"),
        ],
        content_type="text/plain; charset=utf-8",
    )


def get_capabilities(call: Call) -> Response:
    info = call.node.info
    if call.node.harvest is not None:
        info = replace(info, schedule=call.node.harvest(datetime.now(UTC)))
    return Response(200, node_xml(info, call.base_url, call.api))


def list_objects(call: Call) -> Response:
    method = call.method
    q = parse_query(call.query, method)
    from_date = parse_date(q.get("fromDate"), "fromDate", method)
    to_date = parse_date(q.get("toDate"), "toDate", method)
    identifier = checked_identifier(q.get("identifier"), "identifier", method)
    parse_bool(q.get("replicaStatus"), "replicaStatus", method)  # we hold no replicas
    start = parse_count(q.get("start"), "start", method, 0, MAX_START)
    count = parse_count(q.get("count"), "count", method, DEFAULT_COUNT, MAX_COUNT)
    format_id = checked_text(q.get("formatId"), "formatId", method)
    node_filter = checked_text(q.get("nodeId"), "nodeId", method)
    listed = call.node.access.may_read(caller(call), call.authority)  # else: none listed
    if (node_filter and node_filter != call.node.info.id) or not listed:
        total, entries = 0, list[ListedObject]()  # this node holds objects of no other node
    else:
        window = Window(call.node.info.id, from_date, to_date, format_id, identifier)
        total, entries = call.store.list_entries(window, start=start, count=count)
    if start >= total > 0:
        raise invalid_request(method, f"start={start} is past the last of {total} objects")
    return Response(200, object_entries_xml(entries, start, total))


def get_object(call: Call) -> Response:
    who = caller(call)
    record = _record(call, with_bytes=True, who=who)
    if record.object_bytes is None:
        raise service_failure(call.method, "the object's bytes are missing", record.pid)
    if call.access_log is not None:
        call.access_log.record(event_of(call, who, record.pid, "read"))
    return Response(200, record.object_bytes, object_headers(record), record.media_type)


def caller(call: Call) -> Caller:
    """The request's caller (anonymous without a token); InvalidToken for a bad token."""
    return caller_of(call.environ, call.authority, call.method)


def event_of(call: Call, who: Caller, pid: str, event: str) -> AccessEvent:
    """Who did what, from where: the caller's subject (`public` without a token)."""
    return AccessEvent(
        node_id=call.node.info.id,
        pid=pid,
        event=event,
        subject=who.subject,
        ip_address=str(call.environ.get("REMOTE_ADDR") or "unknown"),
        # a NUL would make PostgreSQL refuse the whole batch
        user_agent=str(call.environ.get("HTTP_USER_AGENT") or "").replace("\x00", "\ufffd"),
        date_logged=datetime.now(UTC),
    )


def describe(call: Call) -> Response:
    record = _record(call, with_bytes=False, who=caller(call))
    return Response(200, b"", object_headers(record), record.media_type)


def get_system_metadata(call: Call) -> Response:
    document = call.node.sysmeta(_record(call, with_bytes=False, who=caller(call)))
    return Response(200, document if call.api == "v2" else sysmeta_v1(document))


def get_checksum(call: Call) -> Response:
    """The stored checksum, or one computed from the stored bytes for another algorithm.

    On v2 a seriesId gives its head's checksum, as in GMN (the CN asks by PID).
    """
    who = caller(call)
    label = parse_algorithm(
        parse_query(call.query, call.method).get("checksumAlgorithm"), call.method
    )
    record = _record(call, with_bytes=False, who=who)
    if label is None or algorithm_key(label) == algorithm_key(record.checksum_algorithm):
        return Response(200, checksum_xml(record.checksum_algorithm, record.checksum))
    full = call.store.get_record(call.node.info.id, record.pid, with_bytes=True)
    if full is None or full.object_bytes is None:
        raise service_failure(call.method, "the object's bytes are missing", record.pid)
    value = hashlib.new(CHECKSUM_ALGORITHMS[label], full.object_bytes).hexdigest()
    return Response(200, checksum_xml(label, value))


def get_log_records(call: Call) -> Response:
    """Logged reads and replications, oldest first, paged like listObjects.

    A CN (a token whose subject is in `auth.cn_subjects`) sees every entry as
    logged. Any other caller sees the entries of a node whose objects are
    public, with the IP address and subject withheld, and nothing of a node
    whose objects are not. Nothing older than the retention is shown (it is
    pruned as new entries arrive). v2's `idFilter` matches a PID prefix (as
    GMN does), v1's `pidFilter` one PID.
    """
    method = call.method
    who = caller(call)
    q = parse_query(call.query, method)
    query = LogQuery(
        from_date=parse_date(q.get("fromDate"), "fromDate", method),
        to_date=parse_date(q.get("toDate"), "toDate", method),
        event=checked_text(q.get("event"), "event", method),
        id_prefix=checked_identifier(q.get("idFilter"), "idFilter", method),
        pid=checked_identifier(q.get("pidFilter"), "pidFilter", method),
    )
    if query.event is not None and query.event not in EVENTS:
        raise invalid_request(method, f"event={query.event!r} is none of {', '.join(EVENTS)}")
    start = parse_count(q.get("start"), "start", method, 0, MAX_START)
    count = parse_count(q.get("count"), "count", method, DEFAULT_COUNT, MAX_COUNT)
    full_view = call.authority.is_cn(who)
    if call.access_log is None or not (full_view or call.node.public_read):
        return Response(200, log_xml([], start, 0, call.api))
    call.access_log.flush()  # the caller sees its own reads
    oldest = datetime.now(UTC) - timedelta(days=call.retention.keep_days)
    if query.from_date is None or _utc(query.from_date) < oldest:
        query = replace(query, from_date=oldest)
    total, events = call.store.access_events(call.node.info.id, query, start=start, count=count)
    if start >= total > 0:
        raise invalid_request(method, f"start={start} is past the last of {total} entries")
    entries = [
        LogEntry(
            entry_id=str(e.entry_id),
            identifier=e.pid,
            ip_address=e.ip_address if full_view else WITHHELD,
            user_agent=e.user_agent,
            subject=e.subject if full_view else WITHHELD,
            event=e.event,
            date_logged=e.date_logged,
            node_id=e.node_id,
        )
        for e in events
    ]
    return Response(200, log_xml(entries, start, total, call.api))


def _record(call: Call, *, with_bytes: bool, who: Caller) -> SyncRecord:
    """The record named in the path, if `who` may read it; on v2 a seriesId gives its head.

    Used by get, describe, getSystemMetadata and getChecksum alike (GMN's
    `resolve_sid` decorator is on the same four); v1 has no seriesIds. An
    object the caller may not read is NotAuthorized (it exists: GMN says so too).
    """
    node_id = call.node.info.id
    identifier = call.identifier or ""
    record = call.store.get_record(node_id, identifier, with_bytes=with_bytes)
    if record is None and call.api == "v2":
        head = call.store.resolve_sid(node_id, identifier)
        if head is not None:
            record = call.store.get_record(node_id, head, with_bytes=with_bytes)
    if record is None:
        raise not_found(call.method, identifier)
    if not call.node.access.may_read(who, call.authority, record.rights_holder):
        raise not_authorized(
            call.method,
            "this object's access policy gives no read to "
            + ("anonymous callers; send a DataONE token" if who.anonymous else who.subject),
            identifier,
        )
    return record


def object_headers(record: SyncRecord) -> list[tuple[str, str]]:
    """describe's headers (D1-API describe.txt, plus GMN's SeriesId/Obsoletes/ObsoletedBy)."""
    headers = [
        ("Content-Length", str(record.size)),
        ("Last-Modified", format_datetime(_utc(record.date_modified), usegmt=True)),
        ("DataONE-FormatId", record.format_id),
        ("DataONE-ObjectFormat", record.format_id),
        ("DataONE-Checksum", f"{record.checksum_algorithm},{record.checksum}"),
        ("DataONE-SerialVersion", str(record.serial_version)),
    ]
    for name, value in (
        ("DataONE-SeriesId", record.series_id),
        ("DataONE-Obsoletes", record.obsoletes),
        ("DataONE-ObsoletedBy", record.obsoleted_by),
    ):
        if value:
            headers.append((name, _header_value(value)))
    if record.file_name:
        headers.append(
            ("Content-Disposition", f"inline; filename*=UTF-8''{quote(record.file_name)}")
        )
    return headers


def _header_value(value: str) -> str:
    """Identifiers are printable; non-ASCII ones go percent-encoded (headers are latin-1)."""
    return value if value.isascii() else quote(value, safe="".join(map(chr, range(33, 127))))


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


HANDLERS: dict[str, Handler] = {
    "ping": ping,
    "getCapabilities": get_capabilities,
    "listObjects": list_objects,
    "get": get_object,
    "describe": describe,
    "getSystemMetadata": get_system_metadata,
    "getChecksum": get_checksum,
    "getLogRecords": get_log_records,
    "synchronizationFailed": synchronization_failed,
}
