"""The access log behind MNCore.getLogRecords: who read which object, when.

A mixin of `adapter.store.db.Store`. Entries arrive in batches from the Member
Node API's buffer (`adapter.api.accesslog`), so a `get` never waits on this
write; each batch also prunes what is past the retention limit (`LogRetention`),
so the table stays bounded however much the node is read. Entries past the age
limit go with every batch (an index range); the cap on entries per node walks
the newest `max_entries` of the node, up to hundreds of milliseconds at a million,
so the caller says when it is applied (`cap`; the API's sink: once a minute).

Every write here is one statement that commits by itself (`Store.each_statement`),
and the cap's walk is a read: on SQLite the file's one write lock, which the sync
needs for every page, is never held between statements nor during the walk.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, bindparam, delete, func, select

from adapter.store import schema as t
from adapter.store.prepared import Prepared
from adapter.store.schema import utc

COLUMNS = ("node_id", "pid", "event", "subject", "ip_address", "user_agent", "date_logged")
_a = t.access_log
LARGEST_INSERT = 256  # rows per INSERT at most (SQLite takes 32,766 bound values; 7 a row)


@dataclass(frozen=True, slots=True)
class AccessEvent:
    """One logged event (`entry_id` is 0 until stored)."""

    node_id: str
    pid: str
    event: str
    subject: str
    ip_address: str
    user_agent: str
    date_logged: datetime
    entry_id: int = 0


@dataclass(frozen=True, slots=True)
class LogRetention:
    keep_days: int  # entries older than this are deleted
    max_entries: int  # per node; the oldest beyond it are deleted


@dataclass(frozen=True, slots=True)
class LogQuery:
    """getLogRecords' filters: [from_date, to_date), event, PID prefix or exact PID."""

    from_date: datetime | None = None
    to_date: datetime | None = None
    event: str | None = None
    id_prefix: str | None = None
    pid: str | None = None


class AccessLog:
    """Appending, pruning and paging the access log; needs the store's transactions."""

    def read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def each_statement(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def append_access_events(
        self,
        events: Sequence[AccessEvent],
        retention: LogRetention,
        now: datetime,
        *,
        cap: bool = True,
    ) -> None:
        """Store a batch, then drop what is past `retention` for its nodes.

        Without `cap`, only what is past the age limit; the entry cap waits for a batch with it.
        Entries keep the batch's order; a failure may leave part of a batch stored.
        """
        if not events:
            return
        rows = [
            {
                "node_id": e.node_id,
                "pid": e.pid[:800],
                "event": e.event[:40],
                "subject": e.subject[:1000],
                "ip_address": e.ip_address[:64],
                "user_agent": e.user_agent[:500],
                "date_logged": utc(e.date_logged),
            }
            for e in events
        ]
        with self.each_statement() as conn:
            start = 0
            for size in insert_sizes(len(rows)):  # one statement each: one short lock
                _insert(size).rowcount(conn, **_bound(rows[start : start + size]))
                start += size
            for node_id in sorted({e.node_id for e in events}):
                _prune(conn, node_id, retention, now, cap)

    def access_events(
        self, node_id: str, query: LogQuery, *, start: int = 0, count: int = 100
    ) -> tuple[int, list[AccessEvent]]:
        """(total, one page) in the order logged."""
        a = t.access_log
        where = [a.c.node_id == node_id]
        if query.from_date is not None:
            where.append(a.c.date_logged >= utc(query.from_date))
        if query.to_date is not None:
            where.append(a.c.date_logged < utc(query.to_date))
        if query.event is not None:
            where.append(a.c.event == query.event)
        if query.pid is not None:
            where.append(a.c.pid == query.pid)
        if query.id_prefix is not None:
            where.append(func.substr(a.c.pid, 1, len(query.id_prefix)) == query.id_prefix)
        with self.read() as conn:
            total = conn.execute(select(func.count()).select_from(a).where(*where)).scalar_one()
            rows = (
                conn.execute(
                    select(a)
                    .where(*where)
                    .order_by(a.c.date_logged, a.c.id)
                    .offset(max(0, start))
                    .limit(max(0, count))
                )
                .mappings()
                .all()
            )
        return int(total), [
            AccessEvent(
                node_id=row["node_id"],
                pid=row["pid"],
                event=row["event"],
                subject=row["subject"],
                ip_address=row["ip_address"],
                user_agent=row["user_agent"],
                date_logged=utc(row["date_logged"]),
                entry_id=int(row["id"]),
            )
            for row in rows
        ]


def insert_sizes(rows: int) -> list[int]:
    """`rows` as a few INSERT sizes from a fixed set (powers of two): few statements
    a batch, and few to compile (SQLAlchemy takes ~40 ms to compile 500 rows' VALUES)."""
    sizes = [LARGEST_INSERT] * (rows // LARGEST_INSERT)
    rest = rows % LARGEST_INSERT
    return sizes + [1 << bit for bit in reversed(range(rest.bit_length())) if rest >> bit & 1]


@functools.cache
def _insert(rows: int) -> Prepared:
    """A multi-row INSERT of `rows` entries, compiled once per dialect (each value typed:
    SQLAlchemy gives only the first row the columns' types, and SQLite keeps dates as text)."""
    return Prepared(
        lambda _: t.access_log.insert().values(
            [{c: bindparam(f"{c}_{i}", type_=_a.c[c].type) for c in COLUMNS} for i in range(rows)]
        )
    )


def _bound(rows: Sequence[dict[str, object]]) -> dict[str, object]:
    return {f"{c}_{i}": row[c] for i, row in enumerate(rows) for c in COLUMNS}


def _prune(
    conn: Connection, node_id: str, retention: LogRetention, now: datetime, cap: bool
) -> None:
    """Each statement on its own: the cap's walk reads (WAL readers never block the writer);
    entries added meanwhile are newer than the cutoff it finds, so none beyond it is lost."""
    a = t.access_log
    cutoff = utc(now) - timedelta(days=retention.keep_days)
    conn.execute(delete(a).where(a.c.node_id == node_id, a.c.date_logged < cutoff))
    if not cap:
        return
    newest_dropped = conn.execute(
        select(a.c.id)
        .where(a.c.node_id == node_id)
        .order_by(a.c.id.desc())
        .offset(retention.max_entries)
        .limit(1)
    ).scalar()
    if newest_dropped is not None:
        conn.execute(delete(a).where(a.c.node_id == node_id, a.c.id <= newest_dropped))
