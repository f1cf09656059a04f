"""Core statements compiled once per dialect and run on the connection's DBAPI cursor.

Why: a landing page's transaction is about ten small statements, and building
each as a Core construct and executing it through `Connection.execute` cost
about 5 ms of CPU per page (coercions, cache keys, result objects) against a
few microseconds of SQLite work. A `Prepared` statement is still written in
Core (so the tables in `adapter.store.schema` stay the one source of names and
types), compiled once for each dialect, and then run with the dialect's own
bind and result processors (SQLite keeps datetimes as text, booleans as 0/1),
inside the caller's transaction. DBAPI errors are raised as SQLAlchemy's
(`OperationalError`, `IntegrityError` ...) so `Store.write` turns them into
`StoreError` exactly as before, and a lost connection is invalidated as
SQLAlchemy itself would.

Every bound value must be a named `bindparam` without a value (checked at
compile time): the caller gives them all by name.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import ClauseElement

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]
    binds: tuple[Processor, ...]
    positional: bool
    results: tuple[Processor, ...]

    def args(self, params: Mapping[str, Any]) -> Any:
        values = [
            params[name] if proc is None else proc(params[name])
            for name, proc in zip(self.names, self.binds, strict=True)
        ]
        return tuple(values) if self.positional else dict(zip(self.names, values, strict=True))

    def row(self, raw: Any) -> tuple[Any, ...]:
        return tuple(
            value if proc is None or value is None else proc(value)
            for value, proc in zip(raw, self.results, strict=True)
        )


class Prepared:
    """One statement; `build(dialect_name)` gives its Core form for that engine."""

    def __init__(self, build: Callable[[str], ClauseElement]) -> None:
        self._build = build
        self._by_dialect: weakref.WeakKeyDictionary[Dialect, _Compiled] = (
            weakref.WeakKeyDictionary()
        )
        self._last: tuple[Dialect, _Compiled] | None = None  # one store per process, mostly

    def _compiled(self, dialect: Dialect) -> _Compiled:
        last = self._last
        if last is not None and last[0] is dialect:
            return last[1]
        found = self._by_dialect.get(dialect)
        if found is None:
            found = self._by_dialect[dialect] = _compile(self._build(dialect.name), dialect)
        self._last = (dialect, found)
        return found

    def construct(self, dialect_name: str) -> ClauseElement:
        """Its Core form for that engine, as `Connection.execute` would run it (the tests
        run both ways and compare)."""
        return self._build(dialect_name)

    def sql(self, dialect: Dialect) -> str:
        """The SQL text run on this dialect (for tests and logs)."""
        return self._compiled(dialect).sql

    def rowcount(self, conn: Connection, **params: Any) -> int:
        """Run it; the number of rows it changed."""
        compiled = self._compiled(conn.dialect)
        cursor = _run(conn, compiled, params)
        try:
            return int(cursor.rowcount)
        finally:
            cursor.close()

    def many(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run it once for each mapping of `rows`, in one DBAPI executemany."""
        compiled = self._compiled(conn.dialect)
        args = [compiled.args(row) for row in rows]
        cursor = conn.connection.cursor()
        try:
            cursor.executemany(compiled.sql, args)
        except conn.dialect.loaded_dbapi.Error as exc:
            cursor.close()
            _reraise(conn, exc, cursor, compiled.sql, args)
        cursor.close()

    def first(self, conn: Connection, **params: Any) -> tuple[Any, ...] | None:
        """Run it; its first row (processed as SQLAlchemy would), or None."""
        compiled = self._compiled(conn.dialect)
        cursor = _run(conn, compiled, params)
        try:
            raw = cursor.fetchone()
        finally:
            cursor.close()
        return None if raw is None else compiled.row(raw)

    def all(self, conn: Connection, **params: Any) -> list[tuple[Any, ...]]:
        """Run it; every row (processed as SQLAlchemy would)."""
        compiled = self._compiled(conn.dialect)
        cursor = _run(conn, compiled, params)
        try:
            raw = cursor.fetchall()
        finally:
            cursor.close()
        return [compiled.row(r) for r in raw]


@contextmanager
def savepoint(conn: Connection, name: str) -> Iterator[None]:
    """A savepoint of the caller's transaction, on the DBAPI cursor like the statements.

    Released when the block ends, rolled back to when it raises (the exception
    goes on). `Connection.begin_nested` costs about as much as a page's writes.
    """
    _plain(conn, f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        _plain(conn, f"ROLLBACK TO SAVEPOINT {name}")
        raise
    _plain(conn, f"RELEASE SAVEPOINT {name}")


def _plain(conn: Connection, sql: str) -> None:
    cursor = conn.connection.cursor()
    try:
        cursor.execute(sql)
    except conn.dialect.loaded_dbapi.Error as exc:
        cursor.close()
        _reraise(conn, exc, cursor, sql, ())
    cursor.close()


def _compile(statement: ClauseElement, dialect: Dialect) -> _Compiled:
    compiled: Any = statement.compile(dialect=dialect)
    binds = compiled.binds
    fixed = [b.key for b in binds.values() if not b.required or b.value is not None]
    if fixed:
        raise ValueError(f"prepared statements take every value by name; fixed: {fixed}")
    positional = bool(compiled.positional)
    names = tuple(compiled.positiontup) if positional else tuple(binds)
    procs = tuple(binds[n].type.dialect_impl(dialect).bind_processor(dialect) for n in names)
    columns = getattr(statement, "exported_columns", ())
    results = tuple(c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns)
    return _Compiled(str(compiled), names, procs, positional, results)


def _run(conn: Connection, compiled: _Compiled, params: Mapping[str, Any]) -> Any:
    args = compiled.args(params)
    cursor = conn.connection.cursor()
    try:
        cursor.execute(compiled.sql, args)
    except conn.dialect.loaded_dbapi.Error as exc:
        cursor.close()
        _reraise(conn, exc, cursor, compiled.sql, args)
    return cursor


def _reraise(conn: Connection, exc: Any, cursor: Any, sql: str, args: Any) -> NoReturn:
    """As `Connection.execute` would: invalidate a lost connection, raise SQLAlchemy's error."""
    dialect = conn.dialect
    lost = dialect.is_disconnect(exc, conn.connection.dbapi_connection, cursor)
    if lost and not conn.invalidated:
        conn.invalidate(exc)
    raise DBAPIError.instance(
        sql,
        args,
        exc,
        dialect.loaded_dbapi.Error,
        connection_invalidated=lost,
        dialect=dialect,
    ) from exc
