"""Store URLs for tests: a SQLite file in tmp_path, or a schema of its own in the real PostgreSQL.

Each PostgreSQL test gets its own schema (search_path in the URL), so tests
and helpers running at the same time never see each other's rows.

`store_url` lends a store already at the current schema and holding no rows,
which is all but a few tests need (they open it first thing): creating the
seventeen tables and twenty indexes of a PostgreSQL store took ~0.3 s of the
server's time a test (130 tests of the quick loop: 40 s of its 164 s of test
wall), where emptying a used one takes ~0.01 s. A lent schema comes back to
the worker's pool only when its tables, columns, indexes, constraints,
triggers, functions and schema_version rows are as lent (a test that migrates,
drops or adds anything gets its schema dropped, as before), and emptied: rows
deleted, sequences restarted. A lent PostgreSQL store also holds the host
schedule's two tables (adapter.store.hostrate_db), as every store a sync has
used does: made on first use, they would change its shape and cost it the pool.
`blank_store_url` is the never-opened store, for the tests of creating and
upgrading one.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from sqlalchemy import Connection

from adapter.store.db import Store
from adapter.store.hostrate_db import ScheduleDb, host_rate, host_slots
from adapter.store.migrations import LOG_TRIGGERS, MIGRATIONS
from adapter.store.schema import metadata, schema_version


def sqlite_url(tmp_path: Path, name: str = "store.db") -> str:
    return f"sqlite:///{tmp_path / name}"


def upgraded(url: str) -> list[int]:
    """`Store.upgrade` on the store at `url` (the versions applied), its connections closed."""
    store = Store.connect(url)
    try:
        return store.upgrade()
    finally:
        store.close()


@contextmanager
def postgres_schema(base_url: str) -> Iterator[str]:
    """A store URL whose tables live in a new schema, dropped afterwards."""
    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield _schema_url(base_url, schema)
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def engine_url(engine: str, folder: Path, name: str = "store.db") -> Iterator[str]:
    """An empty store at the current schema on `engine` (SQLite: `name` in `folder`;
    "postgres": a pooled schema, skipped when ADAPTER_TEST_POSTGRES_URL is unset), as
    `store_url` lends: for fixtures of a wider scope, or tests wanting two stores."""
    if engine == "sqlite":
        yield _sqlite_from_template(folder, name)
        return
    base = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("ADAPTER_TEST_POSTGRES_URL is not set (CI sets it; see .ci/run)")
    with _POOL.lend(base) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def blank_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store never opened (no schema) on each engine: for tests of creating or upgrading
    one. Import it into a test module to parametrize over both."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path)
        return
    with postgres_schema(request.getfixturevalue("postgres_url")) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty store at the current schema on each engine (what `Store.open` makes of a
    blank one); import it into a test module to parametrize over both."""
    if request.param == "sqlite":
        yield _sqlite_from_template(tmp_path)
        return
    with _POOL.lend(request.getfixturevalue("postgres_url")) as url:
        yield url


_SQLITE_TEMPLATE: list[Path] = []  # this process's migrated empty SQLite file, made once


def _sqlite_from_template(folder: Path, name: str = "store.db") -> str:
    """A copy of an empty store at the current schema (closed, so its WAL is folded in)."""
    if not _SQLITE_TEMPLATE:
        template = Path(tempfile.mkdtemp(prefix="adapter-template-"))
        atexit.register(_remove_template, template, os.getpid())
        Store.open(sqlite_url(template)).close()
        _SQLITE_TEMPLATE.append(template / "store.db")
    shutil.copyfile(_SQLITE_TEMPLATE[0], folder / name)
    return sqlite_url(folder, name)


def _remove_template(folder: Path, owner: int) -> None:
    """At the exit of the process that made it; a forked child that runs atexit leaves it."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


# Everything a test could change in a schema but its rows: compared before a schema is lent
# again. Names are schema-qualified in these definitions, so the schema's name is masked.
_FINGERPRINT = """
SELECT string_agg(item, E'\n' ORDER BY item) FROM (
  SELECT 'rel ' || relname || ' ' || relkind::text AS item FROM pg_class WHERE relnamespace = %(ns)s
  UNION ALL
  SELECT 'col ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
    || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  WHERE c.relnamespace = %(ns)s AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'idx ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c
    ON c.oid = i.indexrelid WHERE c.relnamespace = %(ns)s
  UNION ALL
  SELECT 'con ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
  WHERE connamespace = %(ns)s
  UNION ALL
  SELECT 'trg ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c
    ON c.oid = t.tgrelid WHERE c.relnamespace = %(ns)s AND NOT t.tgisinternal
  UNION ALL
  SELECT 'fn ' || proname || ' ' || md5(prosrc) FROM pg_proc WHERE pronamespace = %(ns)s
) AS items
"""


class _SchemaPool:
    """This process's migrated PostgreSQL schemas, each lent to one test at a time."""

    def __init__(self) -> None:
        self._free: list[str] = []
        self._made: set[str] = set()
        self._shape: str | None = None  # the fingerprint of a schema as `Store.open` makes it
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._conn_url = ""

    def _connection(self, base_url: str) -> psycopg.Connection[tuple[object, ...]]:
        """The pool's one connection: a new one costs the server a process (~4 ms of its CPU
        each time a test gives a schema back). Made again when closed or broken."""
        conn = self._conn
        if conn is None or conn.closed or conn.broken or self._conn_url != base_url:
            if conn is not None:
                conn.close()
            conn = self._conn = psycopg.connect(base_url, autocommit=True)
            self._conn_url = base_url
        return conn

    @contextmanager
    def lend(self, base_url: str) -> Iterator[str]:
        schema = self._free.pop() if self._free else self._make(base_url)
        try:
            yield _schema_url(base_url, schema)
        finally:
            if self._empty(base_url, schema):
                self._free.append(schema)
            else:
                self._drop(base_url, schema)

    def _make(self, base_url: str) -> str:
        schema = "t_" + uuid.uuid4().hex[:12]
        self._connection(base_url).execute(f"CREATE SCHEMA {schema}")
        self._made.add(schema)
        store = Store.open(_schema_url(base_url, schema))
        try:
            ScheduleDb(store).close()  # the host schedule's tables, as a sync's first use makes
        finally:
            store.close()
        if self._shape is None:
            self._shape = _fingerprint(self._connection(base_url), schema)
        return schema

    def _empty(self, base_url: str, schema: str) -> bool:
        """Delete the rows and restart the sequences of a schema still as lent; False (and
        nothing done) when its shape changed or a leftover session holds its rows.

        One round trip for the emptying, and only the sequences a test drew from are set
        back (a RESTART of each gives it a new file: with a new connection each time, this
        cost the server 31 ms of CPU a test against 8)."""
        try:
            conn = self._connection(base_url)
            if _fingerprint(conn, schema) != self._shape:
                return False
            tables = [*reversed(metadata.sorted_tables), host_rate, host_slots]
            deletes = "".join(
                f"DELETE FROM {schema}.{table.name};"
                for table in tables
                if table.name != schema_version.name
            )
            with conn.transaction():
                # the store's trigger functions name their tables unqualified
                conn.execute(
                    f"SET LOCAL lock_timeout = '2s'; SET LOCAL search_path = {schema};{deletes}"
                    "SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false)"
                    f" FROM pg_sequences WHERE schemaname = '{schema}' AND last_value IS NOT NULL"
                )
        except psycopg.Error:
            return False
        return True

    def _drop(self, base_url: str, schema: str) -> None:
        self._made.discard(schema)
        self._connection(base_url).execute(f"DROP SCHEMA {schema} CASCADE")

    def drop_all(self, base_url: str) -> None:
        """At the end of the session: the pooled schemas go like any test's."""
        for schema in sorted(self._made):
            self._drop(base_url, schema)
        self._free.clear()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


_POOL = _SchemaPool()


def drop_pooled_schemas() -> None:
    """The pool's schemas, dropped (conftest calls it once the session ends)."""
    base = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if base:
        _POOL.drop_all(base)


def _schema_url(base_url: str, schema: str) -> str:
    sep = "&" if "?" in base_url else "?"
    return f"{base_url}{sep}options={quote(f'-csearch_path={schema}')}"


def _fingerprint(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> str:
    """The schema's shape and its schema_version rows, with its own name masked."""
    (namespace,) = conn.execute(
        "SELECT oid FROM pg_namespace WHERE nspname = %s", (schema,)
    ).fetchone() or (None,)
    row = conn.execute(_FINGERPRINT, {"ns": namespace}).fetchone()
    versions = conn.execute(
        f"SELECT version, description FROM {schema}.schema_version ORDER BY version"
    ).fetchall()
    return f"{row[0] if row else ''}\n{versions}".replace(schema, "<schema>")


def drop_change_log(conn: Connection) -> None:
    """Make a store look as it was before the change log (schema step "sysmeta_log"):
    no triggers on records, no sysmeta_log, no node_policy."""
    on = " ON records" if conn.dialect.name == "postgresql" else ""
    for trigger in LOG_TRIGGERS:
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {trigger}{on}")
    conn.exec_driver_sql("DROP TABLE sysmeta_log")
    conn.exec_driver_sql("DROP TABLE node_policy")


def stamp_version(conn: Connection, version: int) -> None:
    """Mark the store as written by schema `version`."""
    conn.execute(schema_version.delete())
    conn.execute(
        schema_version.insert().values(
            version=version, description=f"v{version}", applied_at=datetime.now(UTC)
        )
    )


def version_of(step: str) -> int:
    """The schema version of the migration whose description starts with `step`."""
    return next(n for n, description, _ in MIGRATIONS if description.startswith(step))
