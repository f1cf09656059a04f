"""Writing objects another member node published (an mnlite import) as a node's records.

Unlike a sync's writes (`adapter.store.ledger`), an imported record keeps the
values the coordinating node already holds: its PID, dates, serialVersion,
obsolescence and archived flag are copied, not made. What keeps the store's
rules true:
- every PID and seriesId is claimed in the identifier registry first: one held
  by another node of the store is not written (`Written.held`);
- a PID the node already has is left as it is (a second import changes
  nothing), and so is a series row or a frontier row that exists;
- records are inserted in the order of their dateSysMetadataModified, so the
  change log (filled by the `records` triggers) lists them as the old node did;
- the node clock is moved to the newest imported stamp, so every later change
  is stamped after it (`ledger.next_stamp` never goes below the clock).
No outbox event is written: the coordinating node already holds these objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, func, select, update

from adapter.models import SyncRecord
from adapter.store import schema as t
from adapter.store import statements as q
from adapter.store.ledger import EPOCH, claim_identifier
from adapter.store.schema import utc


@dataclass(frozen=True, slots=True)
class ImportedSeries:
    """A series' row: its head, the page that owns it and the content key of the head."""

    series_id: str
    source_url: str
    head_pid: str
    content_key: str


@dataclass(frozen=True, slots=True)
class ImportedPage:
    """A landing page's frontier row: due at the next sync, with the content it holds now."""

    url: str
    content_checksum: str


@dataclass(slots=True)
class Written:
    """What an import wrote, and what it left as it was."""

    records: list[str] = field(default_factory=list)  # PIDs inserted
    present: list[str] = field(default_factory=list)  # PIDs the node already had, same bytes
    conflicts: list[str] = field(default_factory=list)  # PIDs the node has with other bytes
    held: list[tuple[str, str]] = field(default_factory=list)  # (identifier, node holding it)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (PID, why no bytes)
    series: list[str] = field(default_factory=list)  # series rows inserted
    series_present: list[str] = field(default_factory=list)  # series rows left as they were
    pages: list[str] = field(default_factory=list)  # frontier rows inserted


def node_pids(conn: Connection, node_id: str) -> set[str]:
    """Every PID the node's records hold."""
    r = t.records
    return set(conn.execute(select(r.c.pid).where(r.c.node_id == node_id)).scalars())


def _insert_record(conn: Connection, node_id: str, rec: SyncRecord, data: bytes) -> None:
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
        date_uploaded=utc(rec.date_uploaded),
        date_modified=utc(rec.date_modified),
        media_type=rec.media_type,
        file_name=rec.file_name,
        obsoletes=rec.obsoletes,
        obsoleted_by=rec.obsoleted_by,
        archived=rec.archived,
        serial_version=rec.serial_version,
        submitter=rec.submitter,
        rights_holder=rec.rights_holder,
        describes_pid=rec.describes_pid,
        object_bytes=data,
    )


def write_imported(
    conn: Connection,
    node_id: str,
    records: Sequence[SyncRecord],
    series: Sequence[ImportedSeries],
    pages: Sequence[ImportedPage],
    load: Callable[[SyncRecord], bytes | str],
) -> Written:
    """Write the imported records, their series and pages in the caller's transaction.

    `load` gives a record's bytes (or why it cannot), read as each is written, so an
    import holds one object in memory at a time."""
    out = Written()
    newest: datetime | None = None
    r = t.records
    known = dict(conn.execute(select(r.c.pid, r.c.checksum).where(r.c.node_id == node_id)).all())
    for rec in sorted(records, key=lambda one: (utc(one.date_modified), one.pid)):
        if rec.pid in known:  # the node has it: the same object, or another under its PID
            (out.present if known[rec.pid] == rec.checksum else out.conflicts).append(rec.pid)
            continue
        data = load(rec)
        if isinstance(data, str):
            out.unreadable.append((rec.pid, data))
            continue
        holder = claim_identifier(conn, node_id, rec.pid, "pid")
        if holder is not None:
            out.held.append((rec.pid, holder))
            continue
        _insert_record(conn, node_id, rec, data)
        known[rec.pid] = rec.checksum
        out.records.append(rec.pid)
        stamp = utc(rec.date_modified)
        newest = stamp if newest is None or stamp > newest else newest
    for s in series:
        if s.head_pid not in known:  # its head was not written: no series to continue
            continue
        if q.SERIES_HEAD.first(conn, node=node_id, sid=s.series_id) is not None:
            out.series_present.append(s.series_id)
            continue
        holder = claim_identifier(conn, node_id, s.series_id, "sid")
        if holder is not None and holder != node_id:
            out.held.append((s.series_id, holder))
            continue
        q.SERIES_INSERT.rowcount(
            conn,
            node=node_id,
            sid=s.series_id,
            source_url=s.source_url,
            head_pid=s.head_pid,
            content_key=s.content_key,
            describes_series=None,
        )
        out.series.append(s.series_id)
    out.pages = _insert_pages(conn, node_id, pages)
    if newest is not None:
        _advance_clock(conn, node_id, newest)
    return out


def _insert_pages(conn: Connection, node_id: str, pages: Sequence[ImportedPage]) -> list[str]:
    """Frontier rows for pages the node does not list yet: due, so the next sync checks them."""
    f = t.frontier
    known = set(
        conn.execute(
            select(f.c.url).where(f.c.node_id == node_id, f.c.url.in_([p.url for p in pages]))
        ).scalars()
    )
    new = [p for p in pages if p.url not in known]
    if new:
        conn.execute(
            f.insert(),
            [
                {
                    "node_id": node_id,
                    "url": p.url,
                    "content_checksum": p.content_checksum,
                    "last_status": "imported",
                    "missing_runs": 0,
                    "due": True,
                }
                for p in new
            ],
        )
    return [p.url for p in new]


def _advance_clock(conn: Connection, node_id: str, newest: datetime) -> None:
    """The node clock at least at `newest`: every later stamp comes after the imported ones."""
    c = t.node_clock
    ins = q.insert(c, conn.dialect.name)
    conn.execute(
        ins.values(node_id=node_id, last_stamp=EPOCH).on_conflict_do_nothing(
            index_elements=["node_id"]
        )
    )
    current = conn.execute(
        select(c.c.last_stamp).where(c.c.node_id == node_id).with_for_update()
    ).scalar_one()
    if utc(current) < newest:
        conn.execute(update(c).where(c.c.node_id == node_id).values(last_stamp=newest))


def count_records(conn: Connection, node_id: str) -> int:
    r = t.records
    return int(conn.execute(select(func.count()).where(r.c.node_id == node_id)).scalar_one())
