"""How long a SQLite store's writes wait for a lock another program holds: 30 s, or the
store URL's `?timeout=SECONDS` (Python's sqlite3 spelling)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from adapter.errors import StoreError
from adapter.store.db import SQLITE_BUSY_MS, Store


def busy_timeout(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(text("PRAGMA busy_timeout")).scalar_one())


def test_the_default_wait_and_the_urls(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path}/a.db")
    assert busy_timeout(store) == SQLITE_BUSY_MS == 30_000
    store.close()
    store = Store.open(f"sqlite:///{tmp_path}/a.db?timeout=2.5")
    assert busy_timeout(store) == 2500
    store.close()


@pytest.mark.parametrize("value", ["soon", "-1", "1e9"])
def test_a_timeout_that_is_no_number_of_seconds_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(StoreError, match=f"timeout={value} is not a number of seconds"):
        Store.open(f"sqlite:///{tmp_path}/a.db?timeout={value}")


def test_a_write_gives_up_on_a_held_lock_after_the_timeout(tmp_path: Path) -> None:
    db = tmp_path / "held.db"
    store = Store.open(f"sqlite:///{db}?timeout=0.3")
    locker = sqlite3.connect(db, timeout=0, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        start = time.monotonic()
        with (
            pytest.raises(OperationalError, match="database is locked"),
            store.engine.connect() as conn,
        ):
            conn.execute(text("PRAGMA user_version = 7"))
        waited = time.monotonic() - start
    finally:
        locker.execute("ROLLBACK")
        locker.close()
        store.close()
    assert 0.25 <= waited < 10, waited
