"""The prepared page statements against SQLAlchemy Core running the same statements.

`adapter.store.prepared` compiles each statement of `adapter.store.statements` (Core built from
`adapter.store.schema`) once and runs it on the DBAPI cursor with the dialect's own bind and
result processors. The reference is SQLAlchemy itself: the same random scripts of pages (new
series, new versions, reverts, restores, moves, foreign DOIs, another node's DOIs and bytes,
unlisted series archived, metadata copies, resource maps, archived pages, claims kept and
lost) run through `adapter.store.ledger` + `frontier.finish_page` on one store, and on
another with every prepared statement run as `Connection.execute(statement.construct(...))`,
under the same fake clock (which sometimes goes back); every step must return the same and
every table end up identical. Errors keep SQLAlchemy's classes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import psycopg
import pytest
from sqlalchemy import BindParameter, Connection, Executable, bindparam, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.sql.visitors import ExternallyTraversible, replacement_traverse

from adapter.dataone.records import Candidate, dataset_candidate, metadata_candidate
from adapter.errors import StoreError
from adapter.models import SitemapEntry
from adapter.store import claims, ledger, packages
from adapter.store import frontier as fr
from adapter.store import schema as t
from adapter.store import statements as pagesql
from adapter.store.db import Store
from adapter.store.ledger import RecordDefaults
from adapter.store.prepared import Prepared
from tests.support.stores import engine_url, sqlite_url

NODE = "urn:node:PREP"
DEFAULTS = RecordDefaults(NODE, "SHA-1", "http://orcid.org/0000-0002-1825-0097", "CN=rh")
OTHER = RecordDefaults("urn:node:PREP2", "MD5", "http://orcid.org/0000-0002-1825-0097", "CN=o")
URLS = [f"https://r.example/{i}" for i in range(4)]
KINDS = [  # what a script step does, with its weight
    *["page"] * 3,
    *["finish"] * 2,
    *["maps"] * 2,
    *("gone", "bump", "claim", "other", "unlisted", "missing", "upgrade"),
]
GMD = "http://www.isotc211.org/2005/gmd"


@pytest.fixture(params=["sqlite", "postgres"])
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    """Two fresh, empty stores on one engine: one for the prepared path, one for Core's."""
    engine = request.param  # "postgres" is skipped without ADAPTER_TEST_POSTGRES_URL
    with engine_url(engine, tmp_path, "fast.db") as a, engine_url(engine, tmp_path, "core.db") as b:
        pair = Store.open(a), Store.open(b)
        yield pair
        for s in pair:
            s.close()


PREFIX = "core_"


def _renamed(element: ExternallyTraversible, **_: Any) -> ExternallyTraversible | None:
    if isinstance(element, BindParameter):
        return bindparam(PREFIX + element.key, type_=element.type)
    return None


def renamed(stmt: Prepared, conn: Connection) -> Executable:
    """The statement's construct with its parameters renamed: Core reads an execute parameter
    named as a column of the table an INSERT or UPDATE writes as that column's value."""
    found: Any = replacement_traverse(stmt.construct(conn.dialect.name), {}, _renamed)
    return cast(Executable, found)


def as_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every prepared statement run by SQLAlchemy Core: its construct through `Connection.execute`
    (SQLAlchemy's own coercions, processors, executemany and rowcount)."""

    # each statement's construct built and renamed once per engine, as a caller of Core that
    # keeps its statements would (building them per execution was most of this path's CPU)
    built: dict[tuple[int, str], tuple[Prepared, Executable]] = {}

    def core_of(stmt: Prepared, conn: Connection) -> Executable:
        key = (id(stmt), conn.dialect.name)
        if key not in built:
            built[key] = (stmt, renamed(stmt, conn))  # the statement kept: its id stays its own
        return built[key][1]

    def execute(stmt: Prepared, conn: Connection, params: dict[str, Any]) -> Any:
        named = {PREFIX + k: v for k, v in params.items()}
        options = {"preserve_rowcount": True}
        return conn.execute(core_of(stmt, conn), named, execution_options=options)

    def rowcount(self: Prepared, conn: Connection, **params: Any) -> int:
        return int(execute(self, conn, params).rowcount)

    def first(self: Prepared, conn: Connection, **params: Any) -> tuple[Any, ...] | None:
        row = execute(self, conn, params).first()
        return None if row is None else tuple(row)

    def every(self: Prepared, conn: Connection, **params: Any) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in execute(self, conn, params)]

    def many(self: Prepared, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        conn.execute(core_of(self, conn), [{PREFIX + k: v for k, v in row.items()} for row in rows])

    for name, method in (("rowcount", rowcount), ("first", first), ("all", every), ("many", many)):
        monkeypatch.setattr(Prepared, name, method)


def fake_clock(seed: int) -> Callable[..., datetime]:
    """Milliseconds that mostly move on by 0-2 ms, and now and then go back an hour."""
    rnd = random.Random(seed)
    now = [datetime(2025, 1, 1, tzinfo=UTC)]

    def tick(*_db_now: object) -> datetime:  # the database's time, replaced
        step = rnd.choice([0, 0, 1, 2, 2, -3_600_000]) if rnd.random() < 0.9 else 5
        now[0] += timedelta(milliseconds=step)
        return now[0]

    return tick


def script(seed: int, steps: int = 60) -> list[tuple[Any, ...]]:
    """A random sequence of page writes, archives, bumps and finishes."""
    rnd = random.Random(seed)
    ops: list[tuple[Any, ...]] = []
    for _ in range(steps):
        kind = rnd.choice(KINDS)
        url = rnd.choice(URLS)
        if kind in ("page", "other"):
            ops.append((kind, list(_candidates(rnd, url))))
        elif kind == "unlisted":
            sids = [f"doi:10.5072/d{URLS.index(url)}.{i}" for i in range(3)]
            ops.append(("unlisted", url, frozenset(rnd.sample(sids, rnd.randrange(3)))))
        elif kind == "missing":
            ops.append(("missing", URLS.index(url), rnd.randrange(2)))
        elif kind == "bump":
            ops.append(("bump", rnd.randrange(40), rnd.random() < 0.5, rnd.random() < 0.5))
        elif kind == "finish":
            ops.append(("finish", URLS.index(url), rnd.choice(["me", "other"]), _update(rnd)))
        elif kind == "maps":
            ops.append(("maps", url, rnd.random() < 0.2))  # now and then, another node's
        elif kind == "upgrade":
            ops.append(("upgrade", rnd.choice(["", URLS[1]]), rnd.randrange(1, 3)))
        else:
            ops.append((kind, url))
    return ops


def _candidates(rnd: random.Random, url: str) -> Iterator[Candidate]:
    home = URLS.index(url) if rnd.random() < 0.85 else rnd.randrange(len(URLS))  # else: foreign
    for doi in rnd.sample([f"10.5072/d{home}.{i}" for i in range(3)], rnd.choice([1, 1, 2])):
        doc = {"@type": "Dataset", "name": f"v{rnd.randrange(3)}", "views": rnd.randrange(3)}
        volatile = ("views",) if rnd.random() < 0.5 else ()
        cand = dataset_candidate(doc, doi, url, volatile)
        yield cand
        if rnd.random() < 0.4:
            body = f"<gmd:MD_Metadata v='{rnd.randrange(2)}' d='{doi}'/>".encode()
            yield metadata_candidate(body, GMD, cand.series_id, url, url + ".xml")


def _update(rnd: random.Random) -> fr.PageUpdate:
    return fr.PageUpdate(
        status=rnd.choice(["harvested", "unchanged", "not-modified", "error", "gone"]),
        http_status=rnd.choice([None, 200, 304, 500]),
        etag=rnd.choice([None, '"e1"']),
        last_modified=rnd.choice([None, "Tue, 01 Jan 2025 00:00:00 GMT"]),
        content_checksum=rnd.choice([None, "ab" * 32]),
        report=rnd.choice([None, {"url": "x", "findings": [], "n": rnd.randrange(9)}]),
        keep_validators=rnd.random() < 0.5,
    )


def play(store: Store, finish: Any, ops: list[tuple[Any, ...]]) -> list[Any]:
    """Run the script on a store; what each step returned (None: nothing)."""
    entries = [SitemapEntry(u, "https://r.example/s.xml") for u in URLS]
    fr.upsert_entries(store, NODE, 1, entries)
    rows = claims.claim_due(store, NODE, "me", batch=10, lease=timedelta(hours=1))
    said: list[Any] = []
    for op in ops:
        with store.write() as conn:
            if op[0] == "page":
                said.append(ledger.apply_candidates(conn, DEFAULTS, op[1]))
            elif op[0] == "other":  # another node of the store: its DOIs and bytes
                said.append(ledger.apply_candidates(conn, OTHER, op[1]))
            elif op[0] == "unlisted":
                said.append(ledger.archive_unlisted(conn, NODE, op[1], op[2]))
            elif op[0] == "maps":
                said.append(packages.refresh_packages(conn, OTHER if op[2] else DEFAULTS, op[1]))
            elif op[0] == "upgrade":  # a store's pages without maps, in batches
                said.append(packages.pages_without_packages(conn, NODE, op[1], op[2]))
            elif op[0] == "missing":  # the page missed discoveries: its series may move
                f = t.frontier
                conn.execute(update(f).where(f.c.id == rows[op[1]].id).values(missing_runs=op[2]))
                said.append(None)
            elif op[0] == "gone":
                said.append(ledger.archive_page(conn, NODE, op[1]))
            elif op[0] == "bump":
                found = conn.execute(select(t.records.c.pid).order_by(t.records.c.id))
                pids = list(found.scalars()) or ["sha256:none"]
                pid = pids[op[1] % len(pids)]
                obsoleted_by = "sha256:" + "f" * 64 if op[2] else None
                said.append(
                    ledger._bump(conn, NODE, pid, obsoleted_by=obsoleted_by, archived=op[3])
                )
            elif op[0] == "finish":
                said.append(finish(conn, rows[op[1]], op[2], op[3]))
            else:  # claim every page again
                conn.execute(update(t.frontier).values(claimed_by="me"))
                said.append(None)
    return said


def tables(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the page writes touch (the frontier's check time: only whether it is set)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with store.read() as conn:
        for table in (t.records, t.series, t.identifiers, t.outbox, t.node_clock, t.frontier):
            order = list(table.primary_key.columns)
            rows = conn.execute(select(table).order_by(*order)).all()
            out[table.name] = [tuple(_plain(k, v) for k, v in r._mapping.items()) for r in rows]
    return out


def _plain(key: str, value: Any) -> Any:
    if key in ("last_checked_at", "lease_until"):  # times of the run, not of the writes
        return value is not None
    if isinstance(value, datetime):
        return t.utc(value)
    return bytes(value) if isinstance(value, memoryview) else value


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@pytest.mark.parametrize("seed", range(6))
def test_page_writes_equal_sqlalchemy_core_running_the_same_statements(
    two_stores: tuple[Store, Store], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, core = two_stores
    ops = script(seed)
    monkeypatch.setattr(ledger, "_now_ms", fake_clock(seed))
    got = play(fast, fr.finish_page, ops)
    as_core(monkeypatch)
    monkeypatch.setattr(ledger, "_now_ms", fake_clock(seed))
    want = play(core, fr.finish_page, ops)
    assert got == want
    assert tables(fast) == tables(core)
    kinds = {type(x).__name__ for x in got}
    assert {"Applied", "bool", "list"} <= kinds
    assert any(isinstance(x, ledger.Applied) and x.versions for x in got)  # the script is varied


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_core_mode_runs_every_hot_statement_through_sqlalchemy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above is not of one path with itself: under `as_core` no prepared
    statement reaches the DBAPI cursor, and the scripts run every hot statement."""
    used: set[int] = set()
    real = Prepared.construct

    def counted(self: Prepared, dialect_name: Any) -> Any:
        used.add(id(self))
        return real(self, dialect_name)

    as_core(monkeypatch)
    monkeypatch.setattr(Prepared, "construct", counted)
    monkeypatch.setattr("adapter.store.prepared._run", None)  # would fail if still reached
    for seed in range(6):
        store = Store.open(sqlite_url(tmp_path, f"s{seed}.db"))
        play(store, fr.finish_page, script(seed))
        store.close()
    hot = {
        id(v)
        for name, v in vars(pagesql).items()
        if isinstance(v, Prepared) and not name.startswith(("FRONTIER_", "ID_CLAIMS"))
    }
    hot |= {id(v) for v in pagesql.BUMP.values()} | {id(pagesql.FINISH[True, True, True])}
    hot |= {id(pagesql.SERIES_STATES[0]), id(pagesql.SERIES_STATES[1]), id(pagesql.ID_CLAIMS[0])}
    hot -= {id(pagesql.PID_EXISTS)}  # unused by the ledger
    # only when another worker made a series meanwhile, or a copy's Dataset is not on its page
    hot -= {id(pagesql.SERIES_STATE), id(pagesql.SERIES_HEAD)}
    assert len(hot) > 15 and hot <= used


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_the_scripts_reach_every_version_rule(tmp_path: Path) -> None:
    """The seeds above exercise reverts, restores, moves, foreign and other-node DOIs, and
    resource maps made, versioned and moved."""
    seen: set[str] = set()
    maps: set[str] = set()
    for seed in range(6):
        store = Store.open(sqlite_url(tmp_path, f"s{seed}.db"))
        ops = script(seed)
        for op, x in zip(ops, play(store, fr.finish_page, ops), strict=True):
            if isinstance(x, ledger.Applied):
                names = {name for name in ledger.Applied.__slots__ if getattr(x, name)}
                (maps if op[0] == "maps" else seen).update(names)
        store.close()
    assert {"reverted", "restored", "moved", "foreign", "other_node"} <= seen
    assert {"created", "versions"} <= maps


def test_statements_refuse_fixed_values(tmp_path: Path) -> None:
    from adapter.store.prepared import Prepared

    store = Store.open(sqlite_url(tmp_path))
    bad = Prepared(lambda _: update(t.records).values(archived=True))
    with store.write() as conn, pytest.raises(ValueError, match="every value by name"):
        bad.rowcount(conn)
    store.close()


def test_errors_are_sqlalchemys_and_the_store_says_store_error(two_stores: Any) -> None:
    store = two_stores[0]
    cand = dataset_candidate({"@type": "Dataset"}, "10.5072/x", URLS[0])
    with store.write() as conn:
        ledger.apply_candidates(conn, DEFAULTS, [cand])
    for write in (
        lambda conn: pagesql.EVENT_INSERT.rowcount(
            conn, node=None, event="x", pid="p", sid=None, stamp=None
        ),  # NOT NULL
        lambda conn: ledger.write_new(
            conn, DEFAULTS, [ledger.NewObject(cand, None, None, cand.pid)], ledger.Applied()
        ),
    ):  # the second: the same PID again
        with pytest.raises(StoreError), store.write() as conn:
            with pytest.raises(IntegrityError):
                write(conn)
            raise IntegrityError("again", None, Exception("for Store.write"))
    assert store.count_records(NODE) == 1


@pytest.mark.postgres
def test_a_lost_connection_is_invalidated_and_the_next_page_reconnects(
    postgres_url: str, two_stores: Any
) -> None:
    store = two_stores[0]
    if store.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL ends sessions; a SQLite file does not")
    with pytest.raises(StoreError), store.write() as conn:
        backend = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
        try:
            pagesql.PID_EXISTS.first(conn, node=NODE, pid="sha256:x")
        except OperationalError as exc:
            assert exc.connection_invalidated and conn.invalidated
            raise
    with store.write() as conn:
        assert pagesql.PID_EXISTS.first(conn, node=NODE, pid="sha256:x") is None
