"""The store: one SQLAlchemy Core schema on SQLite (WAL) or PostgreSQL.

`Store.open(url)` connects (creating or upgrading the schema when asked). The
read side here (`list_objects`, `list_changes`, `get_record`, `resolve_sid`), with run history
and sync failures (`adapter.store.history`), the outbox (`adapter.store.outbox`) and the
access log (`adapter.store.accesslog`), serves
the Member Node API and the CLI. The write side (`adapter.store.ledger`,
`adapter.store.frontier`) works inside `Store.write()` transactions, one landing page
per transaction, so a crash loses at most the pages in flight. Every time
written is UTC; SQLite keeps naive text, so values read back get UTC attached.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, or_, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError

from adapter.errors import StoreError
from adapter.extras import require
from adapter.models import SyncRecord
from adapter.shared import Shared
from adapter.store import migrations
from adapter.store import schema as t
from adapter.store.accesslog import AccessLog
from adapter.store.history import History
from adapter.store.latency import WRITES
from adapter.store.listing import ListedObject, Listing, Window
from adapter.store.outbox import Outbox
from adapter.store.reads import Reads
from adapter.store.schema import utc

SQLITE_BUSY_MS = 30_000  # how long a write waits for another connection's lock; ?timeout=SECONDS


def engine_url(url: str) -> str:
    """`postgresql://` means psycopg 3; `sqlite:///relative.db` stays relative to the cwd."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _journal_wal(cur: Any, busy_ms: int = SQLITE_BUSY_MS) -> None:
    """Put the file in WAL mode, waiting out other connections as a busy write would.

    Switching the journal mode does not wait on the busy timeout: two processes
    opening a new store at once (the scheduler and a worker, say) had one fail
    at once with "database is locked" while the other created the schema.
    """
    deadline = time.monotonic() + busy_ms / 1000
    pause = 0.005
    while True:
        try:
            if cur.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def busy_ms(url: str, query: Mapping[str, str | tuple[str, ...]]) -> int:
    """The store URL's `?timeout=SECONDS` (Python's sqlite3 spelling) in milliseconds: how
    long a write waits for a lock another program holds before "database is locked"."""
    given = query.get("timeout")
    if given is None:
        return SQLITE_BUSY_MS
    try:
        seconds = float(given if isinstance(given, str) else given[-1])
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86_400:
        raise StoreError(f"store {url}: timeout={given} is not a number of seconds (0-86400)")
    return round(seconds * 1000)


def _sqlite_engine(url: str, busy: int = SQLITE_BUSY_MS) -> Engine:
    engine = create_engine(url, connect_args={"timeout": busy / 1000})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={busy}")
        _journal_wal(cur, busy)
        cur.execute("PRAGMA synchronous=NORMAL")
        # A write to a table with triggers (records, frontier) keeps a statement journal to
        # undo itself; past 64 KiB it spilled to a file in /var/tmp: 270,000 pwrite calls
        # (560 MB) in the first sync of 1,500 pages, ~20 % of the write path's CPU. In
        # memory it is bounded by one statement.
        cur.execute("PRAGMA temp_store=MEMORY")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # writers take the lock up front: a deferred transaction that upgrades to a
        # writer fails at once with "database is locked" instead of waiting.
        # On the driver's connection: `exec_driver_sql` cost more CPU than the page's
        # statements (see adapter.store.prepared); its errors are wrapped as it would.
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        if mode is None:  # Store.each_statement: every statement commits by itself
            return
        statement = f"BEGIN {mode}"
        try:
            conn.connection.driver_connection.execute(statement)  # type: ignore[union-attr]
        except sqlite3.Error as exc:
            raise DBAPIError.instance(statement, (), exc, sqlite3.Error) from exc

    return engine


def _autocommit_options(engine: Engine) -> dict[str, Any]:
    """No BEGIN on SQLite (see _sqlite_engine: its isolation levels reset the driver's mode)."""
    if engine.dialect.name == "sqlite":
        return {"sqlite_begin": None}
    return {"isolation_level": "AUTOCOMMIT"}


def sqlite_file(url: str, host: str | None, database: str | None, *, create: bool) -> Path:
    """The SQLite file of `url`, or a StoreError naming the value and the fix.

    Refused: a host (`sqlite://harvest.db`, two slashes), an in-memory store (a
    sync into it keeps nothing), a folder that does not exist or is a file, a
    file that is missing when it should be there, one that cannot be written.
    """
    if host:
        raise StoreError(
            f"{url!r} names a host, not a file: a SQLite store is sqlite:///FILE "
            f"(three slashes), e.g. sqlite:///{host}"
        )
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        raise StoreError(
            f"{url!r} is an in-memory store, which keeps nothing once the command ends; "
            "give a file, e.g. sqlite:///harvest.db"
        )
    path = Path(database)
    folder = path.parent
    blocking = next((p for p in (folder, *folder.parents) if p.is_file()), None)
    if blocking is not None:
        raise StoreError(
            f"store {url}: {blocking} is a file, not a folder; choose a path in a folder"
        )
    if not folder.is_dir():
        raise StoreError(
            f"store {url}: the folder {folder} does not exist; create it "
            f"(mkdir -p {folder}) or choose another path"
        )
    if path.is_dir():
        raise StoreError(
            f"store {url}: {path} is a folder; name a file in it, e.g. {path}/harvest.db"
        )
    if not path.exists():
        if not create:
            raise StoreError(
                f"store {url}: no store file at {path}; run `adapter sync` "
                "(or `adapter db upgrade`) to create it"
            )
        if not os.access(folder, os.W_OK):
            raise StoreError(
                f"store {url}: the folder {folder} is not writable; choose another path"
            )
    elif create and not os.access(path, os.W_OK):
        raise StoreError(f"store {url}: {path} is not writable; fix its permissions")
    return path


def store_error(url: str, exc: SQLAlchemyError) -> StoreError:
    """The StoreError a failed write is reported as, caused by `exc` (what `store_gone`
    reads) whether it is raised from it or not."""
    if isinstance(exc, OperationalError):
        error = StoreError(f"store {url} cannot be written: {exc.orig}")
    else:
        error = StoreError(f"store {url}: {exc}")
    error.__cause__ = exc
    return error


def store_gone(store: Store, exc: StoreError) -> bool:
    """Whether the database went away (PostgreSQL stopped, its connection cut), rather
    than refusing one page's writes: then the run fails, once, instead of each page."""
    cause = exc.__cause__
    if store.engine.dialect.name != "postgresql" or not isinstance(cause, OperationalError):
        return False
    state = getattr(cause.orig, "sqlstate", None)  # None: no server said anything
    return cause.connection_invalidated or state is None or state.startswith(("08", "57"))


class Store(History, Outbox, AccessLog):
    """The database of one adapter installation (any number of nodes)."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self._writer = engine.execution_options(sqlite_begin="IMMEDIATE")  # see _sqlite_engine
        self._autocommit = engine.execution_options(**_autocommit_options(engine))
        self._reads: Reads | None = None  # the API's by-PID reads, opened on first use
        self._reads_lock = threading.Lock()
        self._listing = Listing()  # listObjects' totals and page anchors, kept per process
        # SQLite has one writer per file: this process's threads queue here, woken in
        # turn, rather than in SQLite's busy handler, which polls and let one of 200
        # node runs wait past its 30 s timeout ("database is locked") on a loaded machine
        self._write_turn = threading.RLock() if engine.dialect.name == "sqlite" else None

    # -- opening ----------------------------------------------------------------

    @classmethod
    def connect(cls, url: str, *, create: bool = True) -> Store:
        """An engine for the URL; the schema is not touched (see `open`).

        A SQLite file is created only with `create`, and never its folder: a
        mistyped path must not leave folders (or an empty store) behind.
        """
        try:
            sa_url = make_url(engine_url(url))
        except ArgumentError as exc:
            raise StoreError(
                f"{url!r} is not a store URL (sqlite:///file.db or "
                f"postgresql://user@host/db): {exc}"
            ) from None
        if sa_url.get_backend_name() == "sqlite":
            sqlite_file(url, sa_url.host, sa_url.database, create=create)
            busy = busy_ms(url, sa_url.query)
            engine = _sqlite_engine(sa_url.render_as_string(hide_password=False), busy)
        elif sa_url.get_backend_name() == "postgresql":
            require("psycopg", "a postgresql:// store")
            engine = create_engine(sa_url, pool_pre_ping=True)
        else:
            raise StoreError(f"{url}: only sqlite:/// and postgresql:// stores are supported")
        return cls(engine, url)

    @classmethod
    def open(cls, url: str, *, create: bool = True) -> Store:
        """Connect; with `create`, make or upgrade the schema, else insist it is current."""
        store = cls.connect(url, create=create)
        try:
            if create:
                store.upgrade()
                return store
            version = store.version()
            if version != migrations.LATEST:
                found = "no schema" if version is None else f"schema version {version}"
                raise StoreError(
                    f"{url}: {found}, this adapter needs {migrations.LATEST}; "
                    "run `adapter db upgrade`"
                )
        except BaseException:  # refused or gone: its pool's connections go with it
            store.close()
            raise
        return store

    def close(self) -> None:
        if self._reads is not None:
            self._reads.close()
            self._reads = None
        self.engine.dispose()

    def _reader(self) -> Reads:
        reads = self._reads
        if reads is None:
            with self._reads_lock:
                if self._reads is None:
                    self._reads = Reads(self.engine, self.url)
                reads = self._reads
        return reads

    def upgrade(self) -> list[int]:
        """Apply the migrations this database has not seen; the versions applied."""
        with self.write() as conn:
            return migrations.upgrade(conn)

    def version(self) -> int | None:
        with self.read() as conn:
            return migrations.current_version(conn)

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
        start = time.perf_counter()
        try:
            with self._turn(), self._writer.connect() as conn, conn.begin():
                yield conn
        except SQLAlchemyError as exc:
            raise store_error(self.url, exc) from exc
        finally:
            WRITES.observe(self.engine.dialect.name, time.perf_counter() - start)

    @contextmanager
    def each_statement(self) -> Iterator[Connection]:
        """A connection on which every statement commits by itself, for writes that need
        no transaction around them (the access log).

        Why: SQLite has one write lock per file. Held by a transaction, it stays held
        while this thread waits for the GIL between statements, which a busy API
        process stretched to hundreds of milliseconds while the sync's writer queued.
        Taken by one statement, it is held only inside SQLite's own code.
        """
        try:
            with self._autocommit.connect() as conn:
                yield conn
        except SQLAlchemyError as exc:
            raise store_error(self.url, exc) from exc

    def _turn(self) -> AbstractContextManager[Any]:
        return self._write_turn if self._write_turn is not None else nullcontext()

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

    def list_changes(
        self, window: Window, *, start: int = 0, count: int = 1000
    ) -> tuple[int, list[SyncRecord]]:
        """listObjects: (total, one page) of the objects changed in [from_date, to_date).

        Each object once, at its first change in the window (the record's
        `date_modified` here is that change's time), in the order of the change
        log: a later change appends to the log and never moves a listed row, so
        `start` offsets hold while syncs write (docs/sync-and-api.md).
        """
        lg, r = t.sysmeta_log, t.records
        node_id, from_date, to_date = window.node_id, window.from_date, window.to_date
        format_id, identifier = window.format_id, window.identifier
        where = [lg.c.node_id == node_id]
        if from_date is not None:  # the object's first change at or after fromDate
            since = utc(from_date)
            where += [lg.c.stamp >= since, or_(lg.c.prev_stamp.is_(None), lg.c.prev_stamp < since)]
        else:  # its first change ever
            where.append(lg.c.prev_stamp.is_(None))
        if to_date is not None:
            where.append(lg.c.stamp < utc(to_date))
        source: Any = lg
        if format_id is not None or identifier is not None:
            source = lg.join(r, (r.c.node_id == lg.c.node_id) & (r.c.pid == lg.c.pid))
            if format_id is not None:
                where.append(r.c.format_id == format_id)
            if identifier is not None:
                where.append(or_(r.c.pid == identifier, r.c.series_id == identifier))
        page = (
            select(lg.c.pid, lg.c.stamp)
            .select_from(source)
            .where(*where)
            .order_by(lg.c.stamp, lg.c.pid)
            .offset(max(0, start))
            .limit(max(0, count))
            .subquery()
        )
        cols = [c for c in r.c if c.name != "object_bytes"]
        with self.read() as conn:
            total = conn.execute(
                select(func.count()).select_from(source).where(*where)
            ).scalar_one()
            rows = (
                conn.execute(
                    select(*cols, page.c.stamp.label("listed"))
                    .select_from(page.join(r, (r.c.node_id == node_id) & (r.c.pid == page.c.pid)))
                    .order_by(page.c.stamp, page.c.pid)
                )
                .mappings()
                .all()
            )
        return int(total), [
            replace(record_from_row(row), date_modified=utc(row["listed"])) for row in rows
        ]

    def list_entries(
        self, window: Window, *, start: int = 0, count: int = 1000
    ) -> tuple[int, list[ListedObject]]:
        """listObjects' page as `list_changes` gives it, only the ObjectInfo fields, faster.

        On the API's per-thread connection, with the window's total and the
        page anchors kept between requests (adapter.store.listing).
        """
        return self._reader().run(
            lambda conn: self._listing.page(conn, window, max(0, start), max(0, count))
        )

    def get_record(self, node_id: str, pid: str, *, with_bytes: bool = False) -> SyncRecord | None:
        """One record by PID (adapter.store.reads: prepared, on a connection per thread)."""
        row = self._reader().record_row(node_id, pid, with_bytes)
        return None if row is None else record_from_row(row)

    def resolve_sid(self, node_id: str, sid: str) -> str | None:
        """The head PID of a series (its newest object, archived or not), or None."""
        return self._reader().series_head(node_id, sid)

    def series_records(self, node_id: str, sid: str) -> list[SyncRecord]:
        """Every object of a series, oldest first (without bytes)."""
        return self.list_objects(node_id, identifier=sid, count=1_000_000)[1]

    def count_records(self, node_id: str) -> int:
        return self.list_objects(node_id, count=0)[0]

    def node_ids(self) -> list[str]:
        """Every node with records or frontier rows in this store."""
        with self.read() as conn:
            a = conn.execute(select(t.records.c.node_id).distinct()).scalars().all()
            b = conn.execute(select(t.frontier.c.node_id).distinct()).scalars().all()
        return sorted(set(a) | set(b))


def record_from_row(row: Any) -> SyncRecord:
    """A SyncRecord from a mapping of the record's columns (object_bytes when selected)."""
    if not isinstance(row, dict):
        row = dict(row)  # one conversion: a RowMapping's lookups cost more than the dict
    body = row.get("object_bytes")  # NOT NULL: None only when not selected
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
        object_bytes=None if body is None else bytes(body),
        describes_pid=row["describes_pid"],
    )


_SHARED: Shared[str, Store] = Shared(Store.open, Store.close)


def shared_store(url: str) -> AbstractContextManager[Store]:
    """One `Store` per URL for every node run of this process at once, closed by the last.

    Hundreds of node runs side by side, each with its own engine, opened
    hundreds of connection pools (and, on SQLite, as many writers fighting over
    one file's lock); sharing one engine keeps connections to its pool's size.
    """
    return _SHARED.use(url)
