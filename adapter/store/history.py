"""Run history and the sync failures DataONE posts: the store's record of what happened.

A mixin of `adapter.store.db.Store` (use it through a Store): `start_run`,
`finish_run`, `runs` (what `adapter runs` and `adapter status` show), `previous_pages_seen`,
`close_dead_runs`, `log_sync_failure`, `keep_sync_failure` and `sync_failures`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, or_, select, update

from adapter.errors import StoreError
from adapter.store import schema as t
from adapter.store.prepared import Prepared
from adapter.store.schema import utc, utc_or_none


@dataclass(frozen=True, slots=True)
class RunInfo:
    id: int
    node_id: str
    started_at: datetime
    finished_at: datetime | None
    status: str  # running | ok | failed | interrupted
    summary: dict[str, Any]
    error: str | None


@dataclass(frozen=True, slots=True)
class SyncFailure:
    id: int
    node_id: str
    pid: str | None
    received_at: datetime
    xml: str


@dataclass(frozen=True, slots=True)
class FailureCaps:
    """How much of what anyone may POST to /error a node keeps (see adapter.api.syncfailed).

    Days are UTC calendar days. A report naming an identifier this node does
    not hold counts as naming no object, so made-up identifiers cannot each
    open a quota of their own.
    """

    per_object_per_day: int
    unnamed_per_day: int  # reports naming no object of this node, together
    per_node_per_day: int  # every report of a node, together
    keep_days: int  # older reports are deleted when a new one is kept
    max_chars: int  # of one report's text


class History:
    """Runs and sync failures; needs the store's `read`/`write` transactions."""

    def read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    # -- sync failures posted by the CN --------------------------------------------

    def log_sync_failure(self, node_id: str, pid: str | None, xml_text: str) -> int:
        with self.write() as conn:
            result = conn.execute(
                t.sync_failures.insert().values(
                    node_id=node_id, pid=pid, received_at=datetime.now(UTC), xml=xml_text
                )
            )
            return _new_id(result.inserted_primary_key)

    def keep_sync_failure(
        self,
        node_id: str,
        pid: str | None,
        text: str,
        caps: FailureCaps,
        now: datetime | None = None,
    ) -> int | None:
        """Store one report within `caps`: its id, or None when a cap says drop it.

        One write transaction counts and inserts, so the caps hold across threads
        on SQLite (one writer at a time); on PostgreSQL concurrent posts may pass
        a cap by at most the number of server threads.
        """
        f, r = t.sync_failures, t.records
        moment = now or datetime.now(UTC)
        day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        with self.write() as conn:
            known = pid is not None and (
                conn.execute(
                    select(r.c.id)
                    .where(r.c.node_id == node_id, or_(r.c.pid == pid, r.c.series_id == pid))
                    .limit(1)
                ).first()
                is not None
            )
            kept_pid = pid if known else None
            today = [f.c.node_id == node_id, f.c.received_at >= day]
            if _count(conn, today) >= caps.per_node_per_day:
                return None
            same = f.c.pid == kept_pid if kept_pid is not None else f.c.pid.is_(None)
            cap = caps.per_object_per_day if known else caps.unnamed_per_day
            if _count(conn, [*today, same]) >= cap:
                return None
            conn.execute(
                delete(f).where(
                    f.c.node_id == node_id,
                    f.c.received_at < moment - timedelta(days=caps.keep_days),
                )
            )
            result = conn.execute(
                f.insert().values(
                    node_id=node_id, pid=kept_pid, received_at=moment, xml=text[: caps.max_chars]
                )
            )
            return _new_id(result.inserted_primary_key)

    def sync_failures(self, node_id: str, *, limit: int = 100) -> list[SyncFailure]:
        f = t.sync_failures
        with self.read() as conn:
            rows = (
                conn.execute(
                    select(f).where(f.c.node_id == node_id).order_by(f.c.id.desc()).limit(limit)
                )
                .mappings()
                .all()
            )
        return [
            SyncFailure(row["id"], row["node_id"], row["pid"], utc(row["received_at"]), row["xml"])
            for row in rows
        ]

    # -- run history -----------------------------------------------------------------

    def start_run(self, node_id: str, owner: str | None = None) -> int:
        with self.write() as conn:
            result = conn.execute(
                t.runs.insert().values(
                    node_id=node_id, started_at=datetime.now(UTC), status="running", owner=owner
                )
            )
            return _new_id(result.inserted_primary_key)

    def finish_run(
        self,
        run_id: int,
        status: str,
        summary: dict[str, Any],
        error: str | None = None,
        *,
        counted: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """Close the run; the summary written (the `counted` keys as the row has them).

        The `counted` keys are the page counts that `add_to_run` kept in the row as
        pages committed (this run's and any worker's): the row's values win.
        """
        with self.write() as conn:
            stored = _stored_summary(conn, run_id)
            merged = {**summary, **{k: v for k, v in stored.items() if k in counted}}
            conn.execute(
                update(t.runs)
                .where(t.runs.c.id == run_id)
                .values(
                    finished_at=datetime.now(UTC),
                    status=status,
                    summary=json.dumps(merged, sort_keys=True),
                    error=error,
                )
            )
        return merged

    def note_run(self, run_id: int, values: dict[str, Any]) -> None:
        """Set summary fields of a running run (pages seen, due), so a kill keeps them."""
        with self.write() as conn:
            stored = _stored_summary(conn, run_id)
            _write_summary(conn, run_id, {**stored, **values})

    def close_dead_runs(self, node_id: str, is_dead: Callable[[str], bool]) -> int:
        """Runs left "running" by a process that died (killed, crashed) become "interrupted"."""
        r = t.runs
        with self.write() as conn:
            rows = conn.execute(
                select(r.c.id, r.c.owner).where(r.c.node_id == node_id, r.c.status == "running")
            ).all()
            dead = [run_id for run_id, owner in rows if owner and is_dead(owner)]
            if dead:
                conn.execute(
                    update(r)
                    .where(r.c.id.in_(dead))
                    .values(status="interrupted", error="the process running it died")
                )
        return len(dead)

    def runs(self, node_id: str | None = None, limit: int = 20) -> list[RunInfo]:
        """The newest runs first (all nodes when `node_id` is None): for `adapter runs|status`."""
        q = select(t.runs).order_by(t.runs.c.id.desc()).limit(limit)
        if node_id is not None:
            q = q.where(t.runs.c.node_id == node_id)
        with self.read() as conn:
            rows = conn.execute(q).mappings().all()
        return [
            RunInfo(
                row["id"],
                row["node_id"],
                utc(row["started_at"]),
                utc_or_none(row["finished_at"]),
                row["status"],
                json.loads(row["summary"]) if row["summary"] else {},
                row["error"],
            )
            for row in rows
        ]

    def previous_pages_seen(self, node_id: str) -> int:
        """How many pages the node's newest finished run listed (0 without one)."""
        for run in self.runs(node_id, limit=5):
            if run.status != "running" and "pages_seen" in run.summary:
                return int(run.summary["pages_seen"])
        return 0


def _count(conn: Connection, where: list[Any]) -> int:
    return int(
        conn.execute(select(func.count()).select_from(t.sync_failures).where(*where)).scalar_one()
    )


# the statements of `add_to_run`, run once per page written: compiled once (see
# adapter.store.prepared; as Core constructs they were a third of a 200-node sync's writes)
_r = t.runs
_NEWEST_RUN = Prepared(lambda _: select(func.max(_r.c.id)).where(_r.c.node_id == bindparam("node")))
_SUMMARY_LOCKED = Prepared(
    lambda _: select(_r.c.summary).where(_r.c.id == bindparam("run")).with_for_update()
)
_SUMMARY_WRITE = Prepared(
    lambda _: update(_r).where(_r.c.id == bindparam("run")).values(summary=bindparam("summary"))
)


def add_to_run(conn: Connection, node_id: str, counts: dict[str, Any]) -> int | None:
    """Add page counts to the node's newest run, in the caller's transaction; its id.

    Called in the transaction that writes the pages, so the run history holds
    exactly the pages committed, whether a sync run or an `adapter worker`
    wrote them, and a killed process loses none of them. The newest run is the
    one whose discovery last marked the node's pages due.
    """
    found = _NEWEST_RUN.first(conn, node=node_id)
    run_id = found[0] if found else None
    if run_id is None:
        return None
    _write_summary(conn, run_id, merge_counts(_stored_summary(conn, run_id), counts))
    return int(run_id)


def merge_counts(into: dict[str, Any], counts: dict[str, Any]) -> dict[str, Any]:
    """`into` plus `counts`: numbers add up, {code: n} maps add up per code."""
    out = dict(into)
    for key, value in counts.items():
        if isinstance(value, dict):
            merged = dict(out.get(key) or {})
            for code, n in value.items():
                merged[code] = merged.get(code, 0) + n
            out[key] = dict(sorted(merged.items()))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = out.get(key, 0) + value
        else:
            out[key] = value
    return out


def _stored_summary(conn: Connection, run_id: int) -> dict[str, Any]:
    """The run's summary, its row locked until the caller's transaction ends."""
    row = _SUMMARY_LOCKED.first(conn, run=run_id)
    return json.loads(row[0]) if row and row[0] else {}


def _write_summary(conn: Connection, run_id: int, summary: dict[str, Any]) -> None:
    _SUMMARY_WRITE.rowcount(conn, run=run_id, summary=json.dumps(summary, sort_keys=True))


def _new_id(key: Any) -> int:
    if key is None:  # pragma: no cover - every table here has an autoincrement key
        raise StoreError("the database returned no id for a new row")
    return int(key[0])
