"""At most N checks a minute per client address, counted in a SQLite file.

Every check makes outgoing requests on a stranger's behalf, so a client that
asks too often is answered 429 with a Retry-After. The counter lives in a
file, not in process memory, so every server process on the machine (waitress
threads, several `adapter web` behind one proxy) shares one budget per client.
The table is a log of recent checks (client, time), pruned as it is read: a
sliding window, so a burst at the end of one minute does not double at the
start of the next.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PER_MINUTE = 30
WINDOW = 60.0  # seconds
SQLITE_WAIT = 10.0  # seconds a process waits for another's write lock

_TABLE = (
    "CREATE TABLE IF NOT EXISTS web_checks (client TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS web_checks_client ON web_checks (client, at)",
)


def default_path() -> Path:
    """One file per user on this machine, shared by all of that user's server processes."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"adapter-web-ratelimit-{uid}.db"


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    retry_after: int = 0  # seconds until the oldest counted check leaves the window


class RateLimit:
    """`admit(client)` counts one check, or refuses it when the client used its budget."""

    def __init__(self, path: str | Path, per_minute: int = DEFAULT_PER_MINUTE) -> None:
        if per_minute < 1:
            raise ValueError(f"the rate limit must be at least 1 check a minute, not {per_minute}")
        self.path = Path(path)
        self.per_minute = per_minute
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, timeout=SQLITE_WAIT, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        for statement in _TABLE:
            self._db.execute(statement)

    def admit(self, client: str, now: float | None = None) -> Decision:
        at = time.time() if now is None else now
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")  # one writer: count and insert as one step
            try:
                db.execute("DELETE FROM web_checks WHERE at <= ?", (at - WINDOW,))
                count, oldest = db.execute(
                    "SELECT count(*), min(at) FROM web_checks WHERE client = ?", (client,)
                ).fetchone()
                if count >= self.per_minute:
                    db.execute("COMMIT")
                    wait = max(1, int(oldest + WINDOW - at + 0.999))
                    return Decision(False, wait)
                db.execute("INSERT INTO web_checks (client, at) VALUES (?, ?)", (client, at))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return Decision(True)

    def close(self) -> None:
        with self._lock:
            self._db.close()
