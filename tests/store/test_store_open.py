"""Connections opening one new SQLite store at the same moment all get it, in WAL mode."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from adapter.store.db import Store

pytestmark = pytest.mark.slow  # over 1 s (tests/support/timing.py)


def _open(url: str, start: threading.Barrier, failures: list[str]) -> None:
    start.wait()
    try:
        Store.open(url).close()
    except Exception as exc:  # the test names it
        failures.append(f"{type(exc).__name__}: {exc}")


def test_concurrent_opens_of_a_new_store_all_succeed(tmp_path: Path) -> None:
    for round_ in range(20):
        db = tmp_path / f"race-{round_}.db"
        start = threading.Barrier(6)
        failures: list[str] = []
        args = (f"sqlite:///{db}", start, failures)
        threads = [threading.Thread(target=_open, args=args) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not failures, failures
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
