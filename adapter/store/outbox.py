"""The outbox: every create, new version and archive, in order, until a consumer acks it.

A mixin of `adapter.store.db.Store`. Events are written by `adapter.store.ledger` in the
same transaction as the record they name; `seq` orders them.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, select, update

from adapter.store import schema as t
from adapter.store.schema import utc, utc_or_none


@dataclass(frozen=True, slots=True)
class OutboxEvent:
    seq: int
    node_id: str
    event: str  # create | update | archive
    pid: str
    series_id: str | None
    created_at: datetime
    acked_at: datetime | None


class Outbox:
    """Reading and acknowledging events; needs the store's `read`/`write` transactions."""

    def read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    # -- the outbox ----------------------------------------------------------------------

    def outbox(
        self,
        node_id: str | None = None,
        *,
        pending_only: bool = True,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[OutboxEvent]:
        """Events in order (`seq` ascending); by default only those not yet acknowledged."""
        o = t.outbox
        q = select(o).where(o.c.seq > after_seq).order_by(o.c.seq)
        if node_id is not None:
            q = q.where(o.c.node_id == node_id)
        if pending_only:
            q = q.where(o.c.acked_at.is_(None))
        if limit is not None:
            q = q.limit(limit)
        with self.read() as conn:
            rows = conn.execute(q).mappings().all()
        return [
            OutboxEvent(
                row["seq"],
                row["node_id"],
                row["event"],
                row["pid"],
                row["series_id"],
                utc(row["created_at"]),
                utc_or_none(row["acked_at"]),
            )
            for row in rows
        ]

    def ack(
        self,
        node_id: str | None = None,
        *,
        up_to_seq: int | None = None,
        seqs: list[int] | None = None,
    ) -> int:
        """Mark pending events done: all, those up to `up_to_seq`, or the listed ones."""
        o = t.outbox
        q = update(o).where(o.c.acked_at.is_(None)).values(acked_at=datetime.now(UTC))
        if node_id is not None:
            q = q.where(o.c.node_id == node_id)
        if up_to_seq is not None:
            q = q.where(o.c.seq <= up_to_seq)
        if seqs is not None:
            q = q.where(o.c.seq.in_(seqs))
        with self.write() as conn:
            return int(conn.execute(q).rowcount)
