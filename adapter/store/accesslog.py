"""The access log behind MNCore.getLogRecords: who read which object, when.

A mixin of `adapter.store.db.Store`. Entries arrive in batches from the Member
Node API's buffer (`adapter.api.accesslog`), so a `get` never waits on this
write; each batch also prunes what is past the retention limit (`LogRetention`),
so the table stays bounded however much the node is read. Entries past the age
limit go with every batch (an index range); the cap on entries per node walks
the newest `max_entries` of the node, up to hundreds of milliseconds at a million,
so the caller says when it is applied (`cap`; the API's sink: once a minute).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, delete, func, select

from adapter.store import schema as t
from adapter.store.schema import utc


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

    def write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def append_access_events(
        self,
        events: Sequence[AccessEvent],
        retention: LogRetention,
        now: datetime,
        *,
        cap: bool = True,
    ) -> None:
        """Store a batch in one transaction, then drop what is past `retention` for its nodes.

        Without `cap`, only what is past the age limit; the entry cap waits for a batch with it.
        """
        if not events:
            return
        a = t.access_log
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
        with self.write() as conn:
            conn.execute(a.insert(), rows)
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


def _prune(
    conn: Connection, node_id: str, retention: LogRetention, now: datetime, cap: bool
) -> None:
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
