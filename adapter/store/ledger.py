"""The write side of sync records: objects, their series, the outbox and the node clock.

Every function takes a connection inside the caller's transaction, so one
landing page's records, outbox events and frontier row commit together. The
rules (records.decide) are pure; this module only applies them:
- immutable columns (size, checksum, submitter, obsoletes, dateUploaded, node)
  are written once, at insert; afterwards only obsoleted_by (null -> value),
  archived (false -> true), serial_version and date_modified change;
- date_modified comes from `next_stamp`: the database's clock, strictly
  increasing per node at millisecond precision, never going backwards even when
  the clock does, issued under the node's clock-row lock that the transaction
  holds until it commits, so stamps follow commit order (the change log that
  listObjects pages over relies on it; triggers append to it, see schema);
- nothing is ever deleted;
- every PID and seriesId is claimed in the `identifiers` registry before it is
  written, so none is ever given out twice, across time or nodes (the PID
  scheme is in `adapter.dataone.records`);
- each live Dataset a page owns has a resource map, written through the same
  functions (`adapter.store.packages`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from adapter.dataone.records import (
    Candidate,
    Decision,
    SeriesState,
    decide,
    new_record,
    pid_for,
)
from adapter.models import SyncRecord
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
    reverted: list[str] = field(default_factory=list)  # series whose new head's bytes came back
    archived: list[str] = field(default_factory=list)  # PIDs archived
    restored: list[str] = field(default_factory=list)  # series whose archived head came back
    moved: list[tuple[str, str]] = field(default_factory=list)  # (series id, page it left)
    other_node: list[tuple[str, str]] = field(default_factory=list)  # (series id, its node)


def _now_ms(db_now: object) -> datetime:
    """The database's time, to the millisecond (SQLite gives text, PostgreSQL a timestamp)."""
    now = utc(db_now if isinstance(db_now, datetime) else datetime.fromisoformat(str(db_now)))
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def next_stamp(conn: Connection, node_id: str) -> datetime:
    """A dateSysMetadataModified later than every earlier one of this node (locks the node)."""
    return next_stamps(conn, node_id, 1)[0]


def next_stamps(conn: Connection, node_id: str, count: int) -> list[datetime]:
    """`count` such stamps, each a millisecond after the one before, in two statements."""
    clock = read_clock(conn, node_id)
    stamps = clock.take(count)
    q.CLOCK_WRITE.rowcount(conn, node=node_id, stamp=stamps[-1])
    return stamps


@dataclass(slots=True)
class Clock:
    """The node's clock row as read (and locked) once: stamps taken from it in turn, as
    `next_stamps` would issue them, and written back once (`adapter.store.newpages`)."""

    last: datetime  # the last stamp given out
    db_now: object  # the database's time when it was read

    def take(self, count: int) -> list[datetime]:
        first = max(_now_ms(self.db_now), self.last + MS)
        stamps = [first + n * MS for n in range(count)]
        self.last = stamps[-1]
        return stamps


def read_clock(conn: Connection, node_id: str) -> Clock:
    """The node's clock, locked until the transaction (or its savepoint) ends."""
    row = q.CLOCK_READ.first(conn, node=node_id)
    if row is None:  # the node's first stamp: make its clock row, then lock it
        q.CLOCK_ROW.rowcount(conn, node=node_id, epoch=EPOCH)
        row = q.CLOCK_READ.first(conn, node=node_id)
        assert row is not None
    return Clock(utc(row[0]), row[1])


def write_clock(conn: Connection, node_id: str, clock: Clock) -> None:
    q.CLOCK_WRITE.rowcount(conn, node=node_id, stamp=clock.last)


def _series_state(conn: Connection, node_id: str, sid: str) -> SeriesState | None:
    row = q.SERIES_STATE.first(conn, node=node_id, sid=sid)
    if row is None:
        return None
    sid, source, head, key, archived, left = row
    return SeriesState(sid, source, head, key, bool(archived), bool(left))


def claim_identifier(conn: Connection, node_id: str, ident: str, kind: str) -> str | None:
    """Register `ident` for the node; None when it is ours now, else the node holding it.

    The registry's primary key decides: a concurrent claim of the same identifier
    waits for the first (PostgreSQL) or for the write lock (SQLite) and inserts nothing."""
    if q.ID_CLAIM.rowcount(conn, ident=ident, node=node_id, kind=kind):
        return None
    row = q.ID_OWNER.first(conn, ident=ident)
    return str(row[0]) if row is not None else node_id


def claim_identifiers(
    conn: Connection, node_id: str, idents: Sequence[str], kind: str
) -> frozenset[str]:
    """Register each of `idents` for the node in as few statements as the batches allow;
    those that are ours now (the others were given out before, to us or another node)."""
    ours: set[str] = set()
    for start in range(0, len(idents), len(q.ID_CLAIMS)):
        batch = idents[start : start + len(q.ID_CLAIMS)]
        params = {f"ident{n}": ident for n, ident in enumerate(batch)}
        rows = q.ID_CLAIMS[len(batch) - 1].all(conn, node=node_id, kind=kind, **params)
        ours.update(str(ident) for (ident,) in rows)
    return frozenset(ours)


def series_states(conn: Connection, node_id: str, sids: Sequence[str]) -> dict[str, SeriesState]:
    """The series of `sids` that exist (locked), in as few statements as the batches allow."""
    found: dict[str, SeriesState] = {}
    for start in range(0, len(sids), len(q.SERIES_STATES)):
        batch = sids[start : start + len(q.SERIES_STATES)]
        params = {f"sid{n}": sid for n, sid in enumerate(batch)}
        for sid, source, head, key, archived, left in q.SERIES_STATES[len(batch) - 1].all(
            conn, node=node_id, **params
        ):
            found[sid] = SeriesState(sid, source, head, key, bool(archived), bool(left))
    return found


def _new_pids(conn: Connection, node_id: str, cands: Sequence[Candidate]) -> list[str]:
    """Each candidate's first PID of its bytes not yet given out in the store (the first
    PIDs claimed together; same bytes twice: the second takes the next counter)."""
    firsts = [c.pid for c in cands]
    ours = claim_identifiers(conn, node_id, list(dict.fromkeys(firsts)), "pid")
    pids: list[str] = []
    for cand, pid in zip(cands, firsts, strict=True):
        n = 1
        while pid not in ours or pid in pids:  # given out before: the next counter
            n += 1
            pid = pid_for(cand.object_bytes, n)
            if claim_identifier(conn, node_id, pid, "pid") is None:
                break
        pids.append(pid)
    return pids


def _event(
    conn: Connection, node_id: str, event: str, pid: str, sid: str | None, stamp: datetime
) -> None:
    q.EVENT_INSERT.rowcount(conn, **_event_row(node_id, event, pid, sid, stamp))


def _event_row(
    node_id: str, event: str, pid: str, sid: str | None, stamp: datetime
) -> dict[str, Any]:
    return {"node": node_id, "event": event, "pid": pid, "sid": sid, "stamp": stamp}


def _record_row(rec: SyncRecord, stamp: datetime) -> dict[str, Any]:
    """A new record's row: every column given (immutable ones are written only here)."""
    return {
        "node_id": rec.node_id,
        "pid": rec.pid,
        "series_id": rec.series_id,
        "format_id": rec.format_id,
        "checksum_algorithm": rec.checksum_algorithm,
        "checksum": rec.checksum,
        "size": rec.size,
        "source_url": rec.source_url,
        "date_uploaded": stamp,
        "date_modified": stamp,
        "media_type": rec.media_type,
        "file_name": rec.file_name,
        "obsoletes": rec.obsoletes,
        "obsoleted_by": None,
        "archived": False,
        "serial_version": 1,
        "submitter": rec.submitter,
        "rights_holder": rec.rights_holder,
        "describes_pid": rec.describes_pid,
        "object_bytes": rec.object_bytes,
    }


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


def _decision(
    conn: Connection,
    node_id: str,
    cand: Candidate,
    states: dict[str, SeriesState],
    claimed: frozenset[str],
) -> tuple[Decision, SeriesState | None, str | None]:
    """The rule for the candidate's series (read, and a new one claimed, beforehand).

    The third value is the node holding the seriesId when it is not ours to write."""
    state = states.get(cand.series_id)
    if state is not None:
        return decide(state, cand), state, None
    if cand.series_id in claimed:
        return Decision.CREATE, None, None
    row = q.ID_OWNER.first(conn, ident=cand.series_id)
    holder = str(row[0]) if row is not None else node_id
    if holder == node_id:  # another page of ours created it meanwhile (concurrent workers)
        state = _series_state(conn, node_id, cand.series_id)
        if state is not None:
            return decide(state, cand), state, None
    return Decision.FOREIGN, None, holder


def apply_candidates(
    conn: Connection, defaults: RecordDefaults, candidates: list[Candidate]
) -> Applied:
    """Write what changed among a page's candidates (Datasets first, then metadata copies).

    Set-based: the candidates' series are read (and locked) together, the new ones claimed
    together, then the PIDs, and the objects written one statement per kind of row. A
    series named twice is written in turns, each turn seeing the one before."""
    out = Applied()
    sids = [c.series_id for c in candidates]
    if len(set(sids)) < len(sids):
        for cand in candidates:
            _apply(conn, defaults, [cand], out)
    elif candidates:
        _apply(conn, defaults, candidates, out)
    return out


def _apply(
    conn: Connection, defaults: RecordDefaults, candidates: list[Candidate], out: Applied
) -> None:
    node_id = defaults.node_id
    states = series_states(conn, node_id, [c.series_id for c in candidates])
    new = [c.series_id for c in candidates if c.series_id not in states]
    claimed = claim_identifiers(conn, node_id, new, "sid") if new else frozenset()
    chosen: list[tuple[Candidate, SeriesState | None]] = []
    for cand in candidates:
        decision, state, holder = _decision(conn, node_id, cand, states, claimed)
        if holder is not None:  # another node's series (or a PID): never ours
            out.other_node.append((cand.series_id, holder))
            continue
        if decision is Decision.UNCHANGED:
            out.unchanged.append(cand.series_id)
            continue
        if decision is Decision.FOREIGN:
            assert state is not None
            out.foreign.append((cand.series_id, state.source_url))
            continue
        if decision is Decision.RESTORE:
            out.restored.append(cand.series_id)
        elif decision is Decision.MOVE:
            assert state is not None
            out.moved.append((cand.series_id, state.source_url))
        chosen.append((cand, state))
    if not chosen:
        return
    pids = _new_pids(conn, node_id, [cand for cand, _ in chosen])
    heads: dict[str, str] = {}  # series -> its head once the candidates before are written
    writes = []
    for (cand, state), pid in zip(chosen, pids, strict=True):
        if pid != cand.pid and state is not None:  # these bytes were published before
            out.reverted.append(cand.series_id)
        describes = None
        if cand.describes_series is not None:  # the described series' head at this point
            describes = _head(conn, node_id, cand.describes_series, heads, states)
        heads[cand.series_id] = pid
        writes.append(NewObject(cand, state, describes, pid))
    write_new(conn, defaults, writes, out)


def _head(
    conn: Connection,
    node_id: str,
    sid: str,
    written: dict[str, str],
    states: dict[str, SeriesState],
) -> str | None:
    if sid in written:
        return written[sid]
    if sid in states:
        return states[sid].head_pid
    found = q.SERIES_HEAD.first(conn, node=node_id, sid=sid)
    return None if found is None else str(found[0])


@dataclass(frozen=True, slots=True)
class NewObject:
    """A new object to write: its candidate, its series as it is, what it describes, its PID."""

    cand: Candidate
    state: SeriesState | None  # None: a new series
    describes: str | None
    pid: str


def write_new(
    conn: Connection, defaults: RecordDefaults, writes: Sequence[NewObject], out: Applied
) -> None:
    """The new objects' records, the heads they obsolete, their series (new, or moved to
    them) and their outbox events: one statement per kind of row.

    Stamps go to the new records first, then to the heads they obsolete: stamps in the
    order the rows change, so the change log (appended by triggers) grows in stamp order."""
    stamps = next_stamps(conn, defaults.node_id, len(writes) + sum(1 for w in writes if w.state))
    rows = NewRows()
    rows.add(defaults, writes, stamps, out)
    rows.insert(conn)


@dataclass(slots=True)
class NewRows:
    """The rows of new objects, gathered (in the order written) to be inserted together."""

    records: list[dict[str, Any]] = field(default_factory=list)
    bumps: list[dict[str, Any]] = field(default_factory=list)
    created: list[dict[str, Any]] = field(default_factory=list)
    moved: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        defaults: RecordDefaults,
        writes: Sequence[NewObject],
        stamps: Sequence[datetime],
        out: Applied,
    ) -> None:
        """`writes` stamped in turn (the first `len(writes)` stamps), then the heads they
        obsolete (the rest); what they did added to `out`."""
        node_id = defaults.node_id
        bump_stamps = iter(stamps[len(writes) :])
        for w, stamp in zip(writes, stamps, strict=False):
            sid = w.cand.series_id
            obsoletes = w.state.head_pid if w.state is not None else None
            rec = new_record(
                w.cand,
                node_id=node_id,
                stamp=stamp,
                algorithm=defaults.algorithm,
                submitter=defaults.submitter,
                rights_holder=defaults.rights_holder,
                obsoletes=obsoletes,
                describes_pid=w.describes,
                pid=w.pid,
            )
            self.records.append(_record_row(rec, stamp))
            series = {
                "node": node_id,
                "sid": sid,
                "content_key": w.cand.content_key,
                "head_pid": w.pid,
                "source_url": w.cand.source_url,
            }
            if w.state is None:
                self.created.append({**series, "describes_series": w.cand.describes_series})
                self.events.append(_event_row(node_id, "create", w.pid, sid, stamp))
                out.created.append(w.pid)
            else:
                bump = {"node": node_id, "pid": obsoletes, "obsoleted_by": w.pid}
                self.bumps.append({**bump, "stamp": next(bump_stamps)})
                self.moved.append(series)
                self.events.append(_event_row(node_id, "update", w.pid, sid, stamp))
                out.versions.append(w.pid)

    def insert(self, conn: Connection) -> None:
        """One statement per kind of row (none for a kind without rows)."""
        if self.records:
            q.RECORD_INSERT.many(conn, self.records)
        if self.bumps:
            q.BUMP[True, False].many(conn, self.bumps)
        if self.created:
            q.SERIES_INSERT.many(conn, self.created)
        if self.moved:
            q.SERIES_MOVE.many(conn, self.moved)
        if self.events:
            q.EVENT_INSERT.many(conn, self.events)


def archive_page(conn: Connection, node_id: str, source_url: str) -> list[str]:
    """Archive the head of every series the landing page owns; the PIDs archived."""
    return [pid for pid, _ in archive_unlisted(conn, node_id, source_url, frozenset())]


def live_heads(conn: Connection, node_id: str, source_url: str) -> list[tuple[str, str]]:
    """The live (unarchived) heads of the page's series: (PID, seriesId)."""
    return sorted(_page_heads(conn, node_id, source_url), key=lambda head: head[1])


def _page_heads(conn: Connection, node_id: str, source_url: str) -> list[tuple[str, str]]:
    rows = q.PAGE_HEADS.all(conn, node=node_id, url=source_url)
    return [(str(pid), str(sid)) for pid, sid in rows]


def archive_unlisted(
    conn: Connection, node_id: str, source_url: str, listed: frozenset[str]
) -> list[tuple[str, str]]:
    """Archive the live heads of the page's series that it no longer lists: (PID, seriesId).

    No live head without a source: a Dataset removed from a live page, the old
    series of a DOI that changed, a metadata copy the Dataset no longer links."""
    archived = []
    for pid, sid in sorted(_page_heads(conn, node_id, source_url), key=lambda h: h[1]):
        if sid in listed:
            continue
        stamp = next_stamp(conn, node_id)
        if not q.BUMP[False, True].rowcount(conn, node=node_id, pid=pid, stamp=stamp):
            continue
        _event(conn, node_id, "archive", pid, sid, stamp)
        archived.append((pid, sid))
    return archived
