"""The store going away mid-run: PostgreSQL sessions ended by the server. The run must
end with a clear error or finish, never with a traceback or a half-written store, and
the next run must resume. (A SQLite file locked by another connection runs beside the
corpus, in test_hostile.py.)"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.support.fixture_server import SiteServer
from tests.support.hostile import start_corpus, stop
from tests.support.hostile_fixtures import SLOW_PAGE, SLOW_PAGES, start_sync, wait_for_request
from tests.support.zygote import WarmProcess

pytestmark = pytest.mark.slow


def finish(proc: WarmProcess, timeout: float = 120) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode is not None
    return proc.returncode, out


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    servers = start_corpus()
    yield servers[0]
    stop(servers)


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[tuple[str, str]]:
    """A database of our own on the shared server, and the application name our sync uses."""
    name = f"hostile_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = postgres_url.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}?application_name={name}", name
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')


def _terminate(postgres_url: str, name: str) -> int:
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = %s AND datname = %s",
            (name, name),
        ).fetchall()
    return len(rows)


def _records(url: str) -> list[tuple[str, str]]:
    plain = url.split("?", 1)[0]
    with psycopg.connect(plain) as conn:
        return [(str(a), str(b)) for a, b in conn.execute("SELECT pid, source_url FROM records")]


@pytest.mark.postgres
def test_postgres_connection_terminated_mid_run(
    site: SiteServer, tmp_path: Path, postgres_url: str, pg_database: tuple[str, str]
) -> None:
    store, name = pg_database
    code, out = finish(start_sync(site, store, tmp_path, "/good/sitemap.xml"))
    assert code == 0, out
    before = _records(store)
    assert len(before) == 4  # 2 Datasets and their resource maps

    since = len(site.log)
    proc = start_sync(site, store, tmp_path, SLOW_PAGES)
    wait_for_request(site, SLOW_PAGE, since)
    killed = _terminate(postgres_url, name)  # the server ends our sessions, as a restart would
    code, out = finish(proc)
    assert killed >= 1
    assert "Traceback" not in out, out
    # either the pool reconnected and the run finished, or it ended with a clear store error
    assert code == 0 or ("store" in out.lower() and name in out), out

    after = _records(store)
    assert set(before) <= set(after)
    assert len(after) == len(set(after))  # no duplicates

    code, out = finish(start_sync(site, store, tmp_path, SLOW_PAGES))  # the next run resumes
    assert code == 0 and "Traceback" not in out, out
    final = _records(store)
    assert set(before) <= set(final) and len(final) == len(set(final))
