"""Store URLs for tests: a SQLite file in tmp_path, or a fresh schema in the real PostgreSQL.

Each PostgreSQL test gets its own schema (search_path in the URL), so tests
and helpers running at the same time never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from sqlalchemy import Connection

from adapter.store.migrations import LOG_TRIGGERS, MIGRATIONS
from adapter.store.schema import schema_version


def sqlite_url(tmp_path: Path, name: str = "store.db") -> str:
    return f"sqlite:///{tmp_path / name}"


@contextmanager
def postgres_schema(base_url: str) -> Iterator[str]:
    """A store URL whose tables live in a new schema, dropped afterwards."""
    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base_url else "?"
    try:
        yield f"{base_url}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def engine_url(engine: str, folder: Path) -> Iterator[str]:
    """A fresh store URL on `engine` ("sqlite" in `folder`, or "postgres", skipped when
    ADAPTER_TEST_POSTGRES_URL is unset): for fixtures of a wider scope than `store_url`."""
    if engine == "sqlite":
        yield sqlite_url(folder)
        return
    base = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("ADAPTER_TEST_POSTGRES_URL is not set (CI sets it; see .ci/run)")
    with postgres_schema(base) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store on each engine; import it into a test module to parametrize over both."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path)
        return
    with postgres_schema(request.getfixturevalue("postgres_url")) as url:
        yield url


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
