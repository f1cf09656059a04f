"""The write side of sync records: objects, their series, the outbox and the node clock.

Every function takes a connection inside the caller's transaction, so one
landing page's records, outbox events and frontier row commit together. The
rules (records.decide) are pure; this module only applies them:
- immutable columns (size, checksum, submitter, obsoletes, dateUploaded, node)
  are written once, at insert; afterwards only obsoleted_by (null -> value),
  archived (false -> true), serial_version and date_modified change;
- date_modified comes from `next_stamp`: strictly increasing per node at
  millisecond precision, never going backwards even when the clock does;
- nothing is ever deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, select

from adapter.dataone.records import Candidate, Decision, SeriesState, decide, new_record
from adapter.store import schema as t
from adapter.store import statements as q
from adapter.store.schema import utc

MS = timedelta(milliseconds=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class RecordDefaults:
    """The node's values for every new record."""

    node_id: str
    algorithm: str  # MD5 | SHA-1
    submitter: str
    rights_holder: str


@dataclass(slots=True)
class Applied:
    """What writing a page's candidates did."""

    created: list[str] = field(default_factory=list)  # PIDs of new series
    versions: list[str] = field(default_factory=list)  # PIDs of new versions
    unchanged: list[str] = field(default_factory=list)  # series ids
    foreign: list[tuple[str, str]] = field(default_factory=list)  # (series id, owning page)
    reverted: list[str] = field(default_factory=list)  # series whose content went back
    archived: list[str] = field(default_factory=list)  # PIDs archived


def _now_ms() -> datetime:
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def next_stamp(conn: Connection, node_id: str) -> datetime:
    """A dateSysMetadataModified later than every earlier one of this node (locks the node)."""
    row = q.CLOCK_READ.first(conn, node=node_id)
    if row is None:  # the node's first stamp: make its clock row, then lock it
        q.CLOCK_ROW.rowcount(conn, node=node_id, epoch=EPOCH)
        row = q.CLOCK_READ.first(conn, node=node_id)
        assert row is not None
    stamp = max(_now_ms(), utc(row[0]) + MS)
    q.CLOCK_WRITE.rowcount(conn, node=node_id, stamp=stamp)
    return stamp


def _series_state(conn: Connection, node_id: str, sid: str) -> SeriesState | None:
    row = q.SERIES_STATE.first(conn, node=node_id, sid=sid)
    return None if row is None else SeriesState(*row)


def _pid_exists(conn: Connection, node_id: str, pid: str) -> bool:
    return q.PID_EXISTS.first(conn, node=node_id, pid=pid) is not None


def _event(
    conn: Connection, node_id: str, event: str, pid: str, sid: str | None, stamp: datetime
) -> None:
    q.EVENT_INSERT.rowcount(conn, node=node_id, event=event, pid=pid, sid=sid, stamp=stamp)


def _bump(
    conn: Connection,
    node_id: str,
    pid: str,
    *,
    obsoleted_by: str | None = None,
    archived: bool = False,
) -> bool:
    """Set obsoletedBy (null -> value) or archived (false -> true) with a new stamp.

    The only changes DataONE accepts on an existing object; the WHERE clause makes
    them one-way, so a second call changes nothing. True when the record changed.
    """
    if obsoleted_by is None and not archived:
        return False
    stamp = next_stamp(conn, node_id)
    changed = q.BUMP[obsoleted_by is not None, archived].rowcount(
        conn, node=node_id, pid=pid, stamp=stamp, obsoleted_by=obsoleted_by
    )
    return bool(changed)


def apply_candidates(
    conn: Connection, defaults: RecordDefaults, candidates: list[Candidate]
) -> Applied:
    """Write what changed among a page's candidates (Datasets first, then metadata copies)."""
    out = Applied()
    node_id = defaults.node_id
    for cand in candidates:
        state = _series_state(conn, node_id, cand.series_id)
        decision = decide(state, cand)
        if decision is Decision.UNCHANGED:
            out.unchanged.append(cand.series_id)
            continue
        if decision is Decision.FOREIGN:
            assert state is not None
            out.foreign.append((cand.series_id, state.source_url))
            continue
        if _pid_exists(conn, node_id, cand.pid):  # content went back to an older version
            out.reverted.append(cand.series_id)
            continue
        describes = None
        if cand.describes_series is not None:
            found = q.SERIES_HEAD.first(conn, node=node_id, sid=cand.describes_series)
            describes = None if found is None else found[0]
        _write_object(conn, defaults, cand, state, describes, out)
    return out


def _write_object(
    conn: Connection,
    defaults: RecordDefaults,
    cand: Candidate,
    state: SeriesState | None,
    describes: str | None,
    out: Applied,
) -> None:
    """The new object's record, its series (new, or moved to it) and its outbox event."""
    node_id = defaults.node_id
    obsoletes = state.head_pid if state is not None else None
    stamp = next_stamp(conn, node_id)
    rec = new_record(
        cand,
        node_id=node_id,
        stamp=stamp,
        algorithm=defaults.algorithm,
        submitter=defaults.submitter,
        rights_holder=defaults.rights_holder,
        obsoletes=obsoletes,
        describes_pid=describes,
    )
    q.RECORD_INSERT.rowcount(
        conn,
        node_id=node_id,
        pid=rec.pid,
        series_id=rec.series_id,
        format_id=rec.format_id,
        checksum_algorithm=rec.checksum_algorithm,
        checksum=rec.checksum,
        size=rec.size,
        source_url=rec.source_url,
        date_uploaded=stamp,
        date_modified=stamp,
        media_type=rec.media_type,
        file_name=rec.file_name,
        obsoletes=obsoletes,
        obsoleted_by=None,
        archived=False,
        serial_version=1,
        submitter=rec.submitter,
        rights_holder=rec.rights_holder,
        describes_pid=describes,
        object_bytes=rec.object_bytes,
    )
    series = {"node": node_id, "sid": cand.series_id, "content_key": cand.content_key}
    if state is None:
        q.SERIES_INSERT.rowcount(
            conn,
            **series,
            source_url=cand.source_url,
            head_pid=rec.pid,
            describes_series=cand.describes_series,
        )
        _event(conn, node_id, "create", rec.pid, rec.series_id, stamp)
        out.created.append(rec.pid)
    else:
        _bump(conn, node_id, state.head_pid, obsoleted_by=rec.pid)
        q.SERIES_MOVE.rowcount(conn, **series, head_pid=rec.pid)
        _event(conn, node_id, "update", rec.pid, rec.series_id, stamp)
        out.versions.append(rec.pid)


def archive_page(conn: Connection, node_id: str, source_url: str) -> list[str]:
    """Archive the head of every series the landing page owns; the PIDs archived."""
    s, r = t.series, t.records
    heads = conn.execute(
        select(s.c.head_pid, s.c.series_id)
        .select_from(s.join(r, (r.c.node_id == s.c.node_id) & (r.c.pid == s.c.head_pid)))
        .where(s.c.node_id == node_id, s.c.source_url == source_url, r.c.archived.is_(False))
        .order_by(s.c.series_id)
    ).all()
    archived = []
    for pid, sid in heads:
        if not _bump(conn, node_id, pid, archived=True):
            continue
        stamp = conn.execute(
            select(r.c.date_modified).where(r.c.node_id == node_id, r.c.pid == pid)
        ).scalar_one()
        _event(conn, node_id, "archive", pid, sid, utc(stamp))
        archived.append(pid)
    return archived
