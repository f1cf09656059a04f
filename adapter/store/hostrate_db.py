"""The store connection and tables of `adapter.store.hostrate`'s cross-process host schedule.

One autocommit DBAPI connection per pacer, so a reservation is one round trip:
on PostgreSQL the store's own database (its clock is every worker's clock), on
SQLite a file beside the store (`store.db-hostrate`), because SQLite has one
writer per file and page commits must not wait for the schedule; there, the
concurrency slots are record locks of another file (`adapter.store.hostslots`).
The tables are coordination state, not data: created on first use, emptied by
`clear`.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, cast

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, inspect
from sqlalchemy.exc import SQLAlchemyError

from adapter.errors import StoreError
from adapter.store.db import Store
from adapter.store.hostslots import SlotFile, close_slots, open_slots

SQLITE_WAIT = 30.0  # seconds SQLite waits for the schedule file's lock
SEND_CLAIM = 5.0  # seconds a claim to send holds, should its process die before giving it back
# the slots of a store on SQLite (one machine) are record locks: adapter.store.hostslots
SQLITE_TABLE = "CREATE TABLE IF NOT EXISTS host_rate (host TEXT PRIMARY KEY, next_at REAL NOT NULL)"
# added since the table first shipped: a request let go and not yet written (`sender`, and
# when its claim lapses, `sending`), and when the host's latest request was written
LATER_COLUMNS = {  # name: its type on SQLite, on PostgreSQL
    "sending": ("REAL", "DOUBLE PRECISION"),
    "sender": ("TEXT", "TEXT"),
    "last_sent": ("REAL", "DOUBLE PRECISION"),
}

_meta = MetaData()  # the tables on PostgreSQL, in the store's own database
host_rate = Table(
    "host_rate",
    _meta,
    Column("host", String(300), primary_key=True),
    Column("next_at", Float, nullable=False),  # epoch seconds
    Column("sending", Float),  # epoch seconds: a claim to send, lapsed after it
    Column("sender", Text),  # the pacer holding that claim
    Column("last_sent", Float),  # epoch seconds: when the host's latest request was written
)
host_slots = Table(
    "host_slots",
    _meta,
    Column("host", String(300), primary_key=True),
    Column("slot", Integer, primary_key=True, autoincrement=False),
    Column("holder", String(200)),
    Column("until", Float),  # epoch seconds; a slot past it is free again
)


class ScheduleDb:
    """One autocommit DBAPI connection of the store, shared by this process's threads."""

    def __init__(self, store: Store) -> None:
        self.url = store.url
        dbapi = store.engine.dialect.dbapi
        # the driver's own errors: this connection is used below SQLAlchemy
        self._errors = (SQLAlchemyError, sqlite3.Error, getattr(dbapi, "Error", sqlite3.Error))
        with self._failing():
            self._open(store)

    @contextmanager
    def _failing(self) -> Iterator[None]:
        """The database's errors as the StoreError every caller of the store handles (the
        store gone mid-run is one expected fault, not a traceback per page)."""
        try:
            yield
        except self._errors as exc:
            raise StoreError(f"store {self.url}: the host schedule: {exc}") from exc

    def _open(self, store: Store) -> None:
        self.pg = store.engine.dialect.name == "postgresql"
        # the database's clock on PostgreSQL; the caller's on SQLite (one machine)
        self.now = "extract(epoch from clock_timestamp())" if self.pg else ":now"
        self._lock = threading.Lock()
        self._raw: Any
        self.slots: SlotFile | None = None  # on SQLite; on PostgreSQL, the `host_slots` rows
        if self.pg:
            _meta.create_all(store.engine, checkfirst=True)
            _add_later_columns_pg(store)
            pooled = store.engine.raw_connection()
            self._raw = cast(Any, pooled.driver_connection)
            pooled.detach()  # ours alone: never handed back to the pool in autocommit mode
            self._raw.autocommit = True
            # coordination state: losing the last instants of it in a crash is harmless
            self._raw.execute("SET synchronous_commit = off")
            return
        # SQLite has one writer per file, and page commits hold it while Python runs:
        # the schedule lives in a file of its own beside the store, so neither waits
        database = store.engine.url.database
        path = f"{database}-hostrate" if database and database != ":memory:" else ":memory:"
        self._raw = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=SQLITE_WAIT
        )
        self._raw.execute("PRAGMA journal_mode=WAL")
        self._raw.execute("PRAGMA synchronous=OFF")
        self._raw.execute(SQLITE_TABLE)
        self._add_later_columns()
        self.slots = open_slots(None if path == ":memory:" else f"{database}-hostslots")

    def _add_later_columns(self) -> None:
        """Columns a schedule file of an earlier version lacks (another process may be adding
        them at the same moment: its "duplicate column" is this one's success)."""
        for name in _missing(self._sqlite_columns()):
            try:
                self._raw.execute(
                    f"ALTER TABLE host_rate ADD COLUMN {name} {LATER_COLUMNS[name][0]}"
                )
            except sqlite3.OperationalError:
                if name not in self._sqlite_columns():
                    raise

    def _sqlite_columns(self) -> set[str]:
        return {row[1] for row in self._raw.execute("PRAGMA table_info(host_rate)")}

    def _sql(self, sql: str) -> str:
        return re.sub(r":(\w+)", r"%(\1)s", sql) if self.pg else sql

    def one(self, sql: str, **params: object) -> tuple[Any, ...] | None:
        params.setdefault("now", time.time())
        with self._lock, self._failing():
            cur = self._raw.cursor()
            try:
                cur.execute(self._sql(sql), params)
                row = cur.fetchone()
            finally:
                cur.close()
        return None if row is None else tuple(row)

    def all(self, sql: str, **params: object) -> list[tuple[Any, ...]]:
        with self._lock, self._failing():
            cur = self._raw.cursor()
            try:
                cur.execute(self._sql(sql), params)
                rows = cur.fetchall()
            finally:
                cur.close()
        return [tuple(r) for r in rows]

    def run(self, sql: str, **params: object) -> None:
        params.setdefault("now", time.time())
        with self._lock, self._failing():
            cur = self._raw.cursor()
            try:
                cur.execute(self._sql(sql), params)
            finally:
                cur.close()

    def insert_rows(self, host: str, concurrency: int) -> None:
        """The host's rate row and (on PostgreSQL) its concurrency slot rows, when not there yet."""
        verb = "INSERT" if self.pg else "INSERT OR IGNORE"
        tail = " ON CONFLICT DO NOTHING" if self.pg else ""
        self.run(f"{verb} INTO host_rate (host, next_at) VALUES (:host, 0){tail}", host=host)
        for slot in range(concurrency if self.pg else 0):
            self.run(
                f"{verb} INTO host_slots (host, slot) VALUES (:host, :slot){tail}",
                host=host,
                slot=slot,
            )

    def claim_send(self, host: str, me: str, interval: float, slack: float, now: float) -> bool:
        """Claim `host` for one request, as `me`: no other claim held (one lapses after
        SEND_CLAIM), and the host's latest request written at least `interval` ago (less
        `slack`). `now`: the caller's clock, on SQLite."""
        row = self.one(
            f"UPDATE host_rate SET sending = {self.now} + :lapse, sender = :me "
            f"WHERE host = :host AND (sending IS NULL OR sending < {self.now}) "
            f"AND (last_sent IS NULL OR last_sent + :interval <= {self.now} + :slack) "
            "RETURNING 1",
            lapse=SEND_CLAIM, me=me, host=host, interval=interval, slack=slack, now=now,
        )  # fmt: skip
        return row is not None

    def give_back_send(self, host: str, me: str, ago: float, now: float) -> None:
        """`me`'s claim on `host` given back (if still held), its request written `ago`
        seconds before `now`; a lapsed claim's request still counts as the latest."""
        greatest, mine = "GREATEST" if self.pg else "MAX", "sender = :me"
        self.run(
            f"UPDATE host_rate SET last_sent = {greatest}(COALESCE(last_sent, 0), "
            f"{self.now} - :ago), sending = CASE WHEN {mine} THEN NULL ELSE sending END, "
            f"sender = CASE WHEN {mine} THEN NULL ELSE sender END WHERE host = :host",
            ago=ago, me=me, host=host, now=now,
        )  # fmt: skip

    def close(self) -> None:
        with self._lock, suppress(*self._errors):  # a connection the outage cut: gone already
            self._raw.close()
        if self.slots is not None:
            close_slots(self.slots)
            self.slots = None


def _add_later_columns_pg(store: Store) -> None:
    """Columns a table of an earlier version lacks; altered only then (ALTER locks the table
    every worker's reservations use)."""
    missing = _missing({c["name"] for c in inspect(store.engine).get_columns("host_rate")})
    if missing:
        with store.engine.begin() as conn:
            for name in missing:
                kind = LATER_COLUMNS[name][1]
                conn.exec_driver_sql(
                    f"ALTER TABLE host_rate ADD COLUMN IF NOT EXISTS {name} {kind}"
                )


def _missing(have: set[str]) -> list[str]:
    return [name for name in LATER_COLUMNS if name not in have]


_SHARED: dict[Store, tuple[ScheduleDb, int]] = {}  # store -> (its schedule, pacers using it)
_SHARED_LOCK = threading.Lock()


def shared_schedule(store: Store) -> ScheduleDb:
    """The store's schedule connection for this process; give it back with `release`.

    One per store, not one per pacer: two hundred node runs side by side each
    held a connection of their own (on PostgreSQL, past its default of 100).
    A statement is one short round trip under the connection's lock.
    """
    with _SHARED_LOCK:
        db, users = _SHARED.get(store) or (ScheduleDb(store), 0)
        _SHARED[store] = (db, users + 1)
        return db


def release(store: Store) -> None:
    with _SHARED_LOCK:
        db, users = _SHARED[store]
        if users > 1:
            _SHARED[store] = (db, users - 1)
            return
        del _SHARED[store]
    db.close()


def clear(store: Store) -> None:
    """Forget every host's schedule and slots (tests, or after changing politeness)."""
    db = ScheduleDb(store)
    try:
        if db.pg:  # on SQLite, slots are record locks, which their processes give back
            db.run("DELETE FROM host_slots")
        db.run("DELETE FROM host_rate")
    finally:
        db.close()
