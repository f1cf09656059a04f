"""The Member Node API's per-request reads: prepared statements on one connection per thread.

Why: `get`, `describe`, `getSystemMetadata` and `getChecksum` each read one row
by PID. Building a Core select for it, checking a pooled connection out (a
`BEGIN` on SQLite, a `SELECT 1` ping on PostgreSQL) and back in, and turning
the result into mappings cost about half a millisecond of CPU per request,
against tens of microseconds of database work (benchmarks/api.py). Here each
serving thread keeps one connection of its own, in autocommit (every SELECT
sees what was committed before it, and no transaction stays open between
requests), and runs statements compiled once (`adapter.store.prepared`).

The connections come from an engine of their own without a pool, so a server
with many threads never starves the store's pool that the writers (the access
log, synchronizationFailed) and the metrics use. A connection that fails is
dropped and the next request opens a new one; the failure is a `StoreError`,
which the API answers as ServiceFailure.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, bindparam, create_engine, event, select
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from adapter.errors import StoreError
from adapter.store import schema as t
from adapter.store.prepared import Prepared

T = TypeVar("T")
_r, _s = t.records, t.series


def _record_columns(with_bytes: bool) -> list[Any]:
    return [c for c in _r.c if c.name != "id" and (with_bytes or c.name != "object_bytes")]


def _record_by_pid(with_bytes: bool) -> Prepared:
    return Prepared(
        lambda _: select(*_record_columns(with_bytes)).where(
            _r.c.node_id == bindparam("node"), _r.c.pid == bindparam("pid")
        )
    )


RECORD_BY_PID = {flag: _record_by_pid(flag) for flag in (True, False)}
RECORD_NAMES = {flag: [c.name for c in _record_columns(flag)] for flag in (True, False)}


def _series_head(_: str) -> Any:
    return select(_s.c.head_pid).where(
        _s.c.node_id == bindparam("node"), _s.c.series_id == bindparam("sid")
    )


SERIES_HEAD = Prepared(_series_head)


def reader_engine(engine: Engine) -> Engine:
    """An engine on the same database whose connections read in autocommit, unpooled."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        readers = create_engine(
            url, poolclass=NullPool, connect_args={"timeout": 30, "check_same_thread": False}
        )

        @event.listens_for(readers, "connect")
        def _sqlite(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # each SELECT is its own snapshot
            dbapi_conn.execute("PRAGMA query_only=1")

        return readers
    readers = create_engine(url, poolclass=NullPool)

    @event.listens_for(readers, "connect")
    def _autocommit(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.autocommit = True  # no transaction left open between requests

    return readers


def _lost(exc: Exception, conn: Connection) -> bool:
    """Whether `exc` says the database ended the connection (SQLAlchemy's disconnect test)."""
    return isinstance(exc, DBAPIError) and (exc.connection_invalidated or conn.invalidated)


class Reads:
    """One autocommit connection per thread, opened on first use; `close` ends them all."""

    def __init__(self, engine: Engine, url: str) -> None:
        self._engine = reader_engine(engine)
        self._url = url
        self._local = threading.local()
        self._open: set[Connection] = set()
        self._lock = threading.Lock()

    def run(self, read: Callable[[Connection], T]) -> T:
        """`read` on this thread's connection, and once more on a new one when the database
        had ended the kept one (a restart): else each thread answered one more failure after
        the database was back. A StoreError when the database cannot be read."""
        kept: Connection | None = getattr(self._local, "conn", None)
        if kept is not None:
            try:
                return read(kept)
            except (SQLAlchemyError, sqlite3.Error) as exc:
                self._drop(kept)
                if not _lost(exc, kept):
                    raise self._error(exc) from exc
        conn: Connection | None = None
        try:
            conn = self._engine.connect()
            self._local.conn = conn
            with self._lock:
                self._open.add(conn)
            return read(conn)
        except (SQLAlchemyError, sqlite3.Error) as exc:
            self._drop(conn)
            raise self._error(exc) from exc

    def _error(self, exc: Exception) -> StoreError:
        return StoreError(f"store {self._url} cannot be read: {exc}")

    def _drop(self, conn: Connection | None) -> None:
        self._local.conn = None
        if conn is None:
            return
        with self._lock:
            self._open.discard(conn)
        with suppress(SQLAlchemyError, sqlite3.Error):  # already broken
            conn.close()

    def close(self) -> None:
        with self._lock:
            conns, self._open = list(self._open), set()
        for conn in conns:
            with suppress(SQLAlchemyError, sqlite3.Error):
                conn.close()
        self._engine.dispose()

    def record_row(self, node_id: str, pid: str, with_bytes: bool) -> dict[str, Any] | None:
        """The record's columns by name, or None."""
        row = self.run(lambda conn: RECORD_BY_PID[with_bytes].first(conn, node=node_id, pid=pid))
        return None if row is None else dict(zip(RECORD_NAMES[with_bytes], row, strict=True))

    def series_head(self, node_id: str, sid: str) -> str | None:
        row = self.run(lambda conn: SERIES_HEAD.first(conn, node=node_id, sid=sid))
        return None if row is None else str(row[0])
