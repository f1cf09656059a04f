"""The page-write code as it was before `adapter.store.statements`: Core constructs built per call.

Kept verbatim (ledger.py and frontier.finish_page at commit 30e3cb7, only the
imports joined) as the reference the prepared statements are compared with in
tests/store/test_pagesql.py. Not used by the adapter.

Changed on purpose since (issue 15, "Versions and identity"), still per-call Core:
the series state also reads whether the head is archived and whether its page
left; a revert, a restore and a move write a new head (no more "content went
back: nothing written"); every PID and seriesId is claimed in the `identifiers`
registry (`_claim`, `_new_pid`); `archive_unlisted` is `archive_page` with a
list of series to keep.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from adapter.dataone.records import (
    Candidate,
    Decision,
    SeriesState,
    decide,
    new_record,
    pid_for,
)
from adapter.store import schema as t
from adapter.store.frontier import FrontierRow, PageUpdate
from adapter.store.ledger import Applied, RecordDefaults
from adapter.store.schema import utc

MS = timedelta(milliseconds=1)


def _now_ms() -> datetime:
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def next_stamp(conn: Connection, node_id: str) -> datetime:
    """A dateSysMetadataModified later than every earlier one of this node (locks the node)."""
    c = t.node_clock
    ins = postgresql.insert(c) if conn.dialect.name == "postgresql" else sqlite.insert(c)
    conn.execute(
        ins.values(
            node_id=node_id, last_stamp=datetime(1970, 1, 1, tzinfo=UTC)
        ).on_conflict_do_nothing(index_elements=["node_id"])
    )
    last = conn.execute(
        select(c.c.last_stamp).where(c.c.node_id == node_id).with_for_update()
    ).scalar_one()
    stamp = max(_now_ms(), utc(last) + MS)
    conn.execute(update(c).where(c.c.node_id == node_id).values(last_stamp=stamp))
    return stamp


def _series_state(conn: Connection, node_id: str, sid: str) -> SeriesState | None:
    s, r, f = t.series, t.records, t.frontier.alias("owner")
    left = f.c.last_status.in_(("gone", "removed")) | (f.c.missing_runs > 0)
    row = conn.execute(
        select(s, r.c.archived, func.coalesce(left, False).label("left"))
        .select_from(
            s.join(r, and_(r.c.node_id == s.c.node_id, r.c.pid == s.c.head_pid)).outerjoin(
                f, and_(f.c.node_id == s.c.node_id, f.c.url == s.c.source_url)
            )
        )
        .where(s.c.node_id == node_id, s.c.series_id == sid)
        .with_for_update(of=s)
    ).first()
    if row is None:
        return None
    m = row._mapping
    return SeriesState(
        m["series_id"],
        m["source_url"],
        m["head_pid"],
        m["content_key"],
        bool(m["archived"]),
        bool(m["left"]),
    )


def _claim(conn: Connection, node_id: str, ident: str, kind: str) -> str | None:
    i = t.identifiers
    ins = postgresql.insert(i) if conn.dialect.name == "postgresql" else sqlite.insert(i)
    done = conn.execute(
        ins.values(identifier=ident, node_id=node_id, kind=kind)
        .on_conflict_do_nothing(index_elements=["identifier"])
        .returning(i.c.identifier)
    ).first()
    if done is not None:
        return None
    holder = conn.execute(select(i.c.node_id).where(i.c.identifier == ident)).scalar()
    return node_id if holder is None else str(holder)


def _new_pid(conn: Connection, node_id: str, cand: Candidate) -> str:
    n = 1
    while _claim(conn, node_id, pid := pid_for(cand.object_bytes, n), "pid"):
        n += 1
    return pid


def _event(
    conn: Connection, node_id: str, event: str, pid: str, sid: str | None, stamp: datetime
) -> None:
    conn.execute(
        insert(t.outbox).values(
            node_id=node_id, event=event, pid=pid, series_id=sid, created_at=stamp
        )
    )


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
    r = t.records
    where = [r.c.node_id == node_id, r.c.pid == pid]
    values: dict[str, object] = {}
    if obsoleted_by is not None:
        where.append(r.c.obsoleted_by.is_(None))
        values["obsoleted_by"] = obsoleted_by
    if archived:
        where.append(r.c.archived.is_(False))
        values["archived"] = True
    if not values:
        return False
    stamp = next_stamp(conn, node_id)
    result = conn.execute(
        update(r)
        .where(*where)
        .values(date_modified=stamp, serial_version=r.c.serial_version + 1, **values)
    )
    return bool(result.rowcount)


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
        if decision is Decision.CREATE:
            holder = _claim(conn, node_id, cand.series_id, "sid")
            if holder is not None:
                out.other_node.append((cand.series_id, holder))
                continue
        elif decision is Decision.RESTORE:
            out.restored.append(cand.series_id)
        elif decision is Decision.MOVE:
            assert state is not None
            out.moved.append((cand.series_id, state.source_url))
        describes = None
        if cand.describes_series is not None:
            describes = conn.execute(
                select(t.series.c.head_pid).where(
                    t.series.c.node_id == node_id, t.series.c.series_id == cand.describes_series
                )
            ).scalar()
        obsoletes = state.head_pid if state is not None else None
        pid = _new_pid(conn, node_id, cand)
        if pid != cand.pid and state is not None:
            out.reverted.append(cand.series_id)
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
            pid=pid,
        )
        conn.execute(
            insert(t.records).values(
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
        )
        if state is None:
            conn.execute(
                insert(t.series).values(
                    node_id=node_id,
                    series_id=cand.series_id,
                    source_url=cand.source_url,
                    head_pid=rec.pid,
                    content_key=cand.content_key,
                    describes_series=cand.describes_series,
                )
            )
            _event(conn, node_id, "create", rec.pid, rec.series_id, stamp)
            out.created.append(rec.pid)
        else:
            _bump(conn, node_id, state.head_pid, obsoleted_by=rec.pid)
            conn.execute(
                update(t.series)
                .where(t.series.c.node_id == node_id, t.series.c.series_id == cand.series_id)
                .values(head_pid=rec.pid, content_key=cand.content_key, source_url=cand.source_url)
            )
            _event(conn, node_id, "update", rec.pid, rec.series_id, stamp)
            out.versions.append(rec.pid)
    return out


def archive_page(conn: Connection, node_id: str, source_url: str) -> list[str]:
    """Archive the head of every series the landing page owns; the PIDs archived."""
    return [pid for pid, _ in archive_unlisted(conn, node_id, source_url, frozenset())]


def archive_unlisted(
    conn: Connection, node_id: str, source_url: str, listed: frozenset[str]
) -> list[tuple[str, str]]:
    s, r = t.series, t.records
    heads = conn.execute(
        select(s.c.head_pid, s.c.series_id)
        .select_from(s.join(r, (r.c.node_id == s.c.node_id) & (r.c.pid == s.c.head_pid)))
        .where(s.c.node_id == node_id, s.c.source_url == source_url, r.c.archived.is_(False))
        .order_by(s.c.series_id)
    ).all()
    archived = []
    for pid, sid in heads:
        if sid in listed:
            continue
        if not _bump(conn, node_id, pid, archived=True):
            continue
        stamp = conn.execute(
            select(r.c.date_modified).where(r.c.node_id == node_id, r.c.pid == pid)
        ).scalar_one()
        _event(conn, node_id, "archive", pid, sid, utc(stamp))
        archived.append((pid, sid))
    return archived


def finish_page(conn: Connection, row: FrontierRow, owner: str, page: PageUpdate) -> bool:
    """Write the page's outcome and free its claim; False when the claim was lost meanwhile."""
    f = t.frontier
    values: dict[str, Any] = {
        "last_status": page.status,
        "http_status": page.http_status,
        "last_checked_at": datetime.now(UTC),
        "due": False,
        "claimed_by": None,
        "lease_until": None,
    }
    if not page.keep_validators:
        values |= {"etag": page.etag, "last_modified": page.last_modified}
    if page.content_checksum is not None:
        values["content_checksum"] = page.content_checksum
    if page.report is not None:  # a 304 keeps the report of the body it confirms
        values["last_report"] = json.dumps(page.report)
    result = conn.execute(
        update(f).where(f.c.id == row.id, and_(f.c.claimed_by == owner)).values(**values)
    )
    return bool(result.rowcount)
