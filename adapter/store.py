"""The store: one SQLAlchemy Core schema on SQLite (WAL) or PostgreSQL.

`Store.open(url)` connects (creating or upgrading the schema when asked). The
read side (`list_objects`, `get_record`, `resolve_sid`, sync failures, run
history, the outbox) serves the Member Node API and the CLI; the write side
(`adapter.store_writes`) commits one landing page per transaction, so a crash
loses at most the pages in flight. Every time written is UTC; SQLite keeps
naive text, so values read back get UTC attached.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, or_, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError, SQLAlchemyError

from adapter import schema as t
from adapter.errors import StoreError
from adapter.models import SyncRecord

SQLITE_BUSY_MS = 30_000


def utc(value: datetime) -> datetime:
    """Aware UTC for writing and comparing (naive values are taken as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


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
class OutboxEvent:
    seq: int
    node_id: str
    event: str  # create | update | archive
    pid: str
    series_id: str | None
    created_at: datetime
    acked_at: datetime | None


@dataclass(frozen=True, slots=True)
class SyncFailure:
    id: int
    node_id: str
    pid: str | None
    received_at: datetime
    xml: str


def engine_url(url: str) -> str:
    """`postgresql://` means psycopg 3; `sqlite:///relative.db` stays relative to the cwd."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_MS / 1000})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # writers take the lock up front: a deferred transaction that upgrades to a
        # writer fails at once with "database is locked" instead of waiting.
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


class Store:
    """The database of one adapter installation (any number of nodes)."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url

    # -- opening ----------------------------------------------------------------

    @classmethod
    def connect(cls, url: str) -> Store:
        """An engine for the URL; the schema is not touched (see `open`)."""
        try:
            sa_url = make_url(engine_url(url))
        except ArgumentError as exc:
            raise StoreError(
                f"{url!r} is not a store URL (sqlite:///file.db or "
                f"postgresql://user@host/db): {exc}"
            ) from None
        if sa_url.get_backend_name() == "sqlite":
            if sa_url.database and sa_url.database != ":memory:":
                Path(sa_url.database).parent.mkdir(parents=True, exist_ok=True)
            engine = _sqlite_engine(sa_url.render_as_string(hide_password=False))
        elif sa_url.get_backend_name() == "postgresql":
            engine = create_engine(sa_url, pool_pre_ping=True)
        else:
            raise StoreError(f"{url}: only sqlite:/// and postgresql:// stores are supported")
        return cls(engine, url)

    @classmethod
    def open(cls, url: str, *, create: bool = True) -> Store:
        """Connect; with `create`, make or upgrade the schema, else insist it is current."""
        store = cls.connect(url)
        if create:
            store.upgrade()
            return store
        version = store.version()
        if version != t.LATEST:
            store.close()
            found = "no schema" if version is None else f"schema version {version}"
            raise StoreError(
                f"{url}: {found}, this adapter needs {t.LATEST}; run `adapter db upgrade`"
            )
        return store

    def close(self) -> None:
        self.engine.dispose()

    def upgrade(self) -> list[int]:
        """Apply the migrations this database has not seen; the versions applied."""
        with self.write() as conn:
            return t.upgrade(conn)

    def version(self) -> int | None:
        with self.read() as conn:
            return t.current_version(conn)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except OperationalError as exc:
            raise StoreError(f"store {self.url} cannot be read: {exc.orig}") from exc

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One transaction that commits on success and rolls back on any error."""
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(sqlite_begin="IMMEDIATE")
                with conn.begin():
                    yield conn
        except OperationalError as exc:
            raise StoreError(f"store {self.url} cannot be written: {exc.orig}") from exc
        except SQLAlchemyError as exc:
            raise StoreError(f"store {self.url}: {exc}") from exc

    # -- records (read side, for the Member Node API) ------------------------------

    def list_objects(
        self,
        node_id: str,
        *,
        from_date: datetime | None = None,
        to_date: datetime | None = None,
        format_id: str | None = None,
        identifier: str | None = None,
        start: int = 0,
        count: int = 1000,
    ) -> tuple[int, list[SyncRecord]]:
        """(total, one page) by dateSysMetadataModified then PID; fromDate >=, toDate <.

        `identifier` matches a PID or a seriesId. Object bytes are not loaded.
        """
        r = t.records
        where = [r.c.node_id == node_id]
        if from_date is not None:
            where.append(r.c.date_modified >= utc(from_date))
        if to_date is not None:
            where.append(r.c.date_modified < utc(to_date))
        if format_id is not None:
            where.append(r.c.format_id == format_id)
        if identifier is not None:
            where.append(or_(r.c.pid == identifier, r.c.series_id == identifier))
        cols = [c for c in r.c if c.name != "object_bytes"]
        with self.read() as conn:
            total = conn.execute(select(func.count()).select_from(r).where(*where)).scalar_one()
            rows = (
                conn.execute(
                    select(*cols)
                    .where(*where)
                    .order_by(r.c.date_modified, r.c.pid)
                    .offset(max(0, start))
                    .limit(max(0, count))
                )
                .mappings()
                .all()
            )
        return int(total), [record_from_row(row) for row in rows]

    def get_record(self, node_id: str, pid: str, *, with_bytes: bool = False) -> SyncRecord | None:
        r = t.records
        cols = [c for c in r.c if with_bytes or c.name != "object_bytes"]
        with self.read() as conn:
            row = (
                conn.execute(select(*cols).where(r.c.node_id == node_id, r.c.pid == pid))
                .mappings()
                .first()
            )
        return None if row is None else record_from_row(row)

    def resolve_sid(self, node_id: str, sid: str) -> str | None:
        """The head PID of a series (its newest object, archived or not), or None."""
        s = t.series
        with self.read() as conn:
            return conn.execute(
                select(s.c.head_pid).where(s.c.node_id == node_id, s.c.series_id == sid)
            ).scalar()

    def series_records(self, node_id: str, sid: str) -> list[SyncRecord]:
        """Every object of a series, oldest first (without bytes)."""
        return self.list_objects(node_id, identifier=sid, count=1_000_000)[1]

    def count_records(self, node_id: str) -> int:
        return self.list_objects(node_id, count=0)[0]

    # -- sync failures posted by the CN --------------------------------------------

    def log_sync_failure(self, node_id: str, pid: str | None, xml_text: str) -> int:
        with self.write() as conn:
            result = conn.execute(
                t.sync_failures.insert().values(
                    node_id=node_id, pid=pid, received_at=datetime.now(UTC), xml=xml_text
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
        self, run_id: int, status: str, summary: dict[str, Any], error: str | None = None
    ) -> None:
        with self.write() as conn:
            conn.execute(
                update(t.runs)
                .where(t.runs.c.id == run_id)
                .values(
                    finished_at=datetime.now(UTC),
                    status=status,
                    summary=json.dumps(summary, sort_keys=True),
                    error=error,
                )
            )

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

    def node_ids(self) -> list[str]:
        """Every node with records or frontier rows in this store."""
        with self.read() as conn:
            a = conn.execute(select(t.records.c.node_id).distinct()).scalars().all()
            b = conn.execute(select(t.frontier.c.node_id).distinct()).scalars().all()
        return sorted(set(a) | set(b))


def _new_id(key: Any) -> int:
    if key is None:  # pragma: no cover - every table here has an autoincrement key
        raise StoreError("the database returned no id for a new row")
    return int(key[0])


def record_from_row(row: Any) -> SyncRecord:
    keys = row.keys()
    return SyncRecord(
        pid=row["pid"],
        series_id=row["series_id"],
        node_id=row["node_id"],
        format_id=row["format_id"],
        checksum_algorithm=row["checksum_algorithm"],
        checksum=row["checksum"],
        size=int(row["size"]),
        source_url=row["source_url"],
        date_uploaded=utc(row["date_uploaded"]),
        date_modified=utc(row["date_modified"]),
        media_type=row["media_type"],
        file_name=row["file_name"],
        obsoletes=row["obsoletes"],
        obsoleted_by=row["obsoleted_by"],
        archived=bool(row["archived"]),
        serial_version=int(row["serial_version"]),
        submitter=row["submitter"],
        rights_holder=row["rights_holder"],
        object_bytes=bytes(row["object_bytes"]) if "object_bytes" in keys else None,
        describes_pid=row["describes_pid"],
    )
