"""The Member Node API benchmark's store: N objects as the sync writes them, built in bulk.

Each object is a generated schema.org Dataset (benchmarks/synthrepo.py, about 5 KB)
turned into a sync candidate and record by the sync's own code
(`dataset_candidate`, `new_record`: RFC 8785 bytes, content PID, seriesId,
checksum), then written with the sync's own prepared statements
(`adapter.store.statements`: the record, its series, both identifiers claimed in
the registry, the outbox event, the node clock) in batches of `BATCH` rows per
transaction with DBAPI executemany instead of one transaction per landing page.
dateSysMetadataModified increases by 1 ms per object, as the node clock would.

The SQLite file is cached under benchmarks/out/ (gitignored), keyed by the object
count and the schema version, so reruns skip the build; PostgreSQL is built
fresh in a schema of its own each run.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from adapter.dataone.records import dataset_candidate, new_record
from adapter.store import migrations
from adapter.store import schema as t
from adapter.store import statements as q
from adapter.store.db import Store
from benchmarks import synthrepo

NODE = "urn:node:APIBENCH"
SHORT = "APIBENCH"
ORIGIN = "https://repository.bench.example"
SUBMITTER = "http://orcid.org/0000-0002-1825-0097"
RIGHTS = "CN=bench,DC=dataone,DC=org"
BATCH = 2_000
FIRST_STAMP = datetime(2024, 1, 1, tzinfo=UTC)
CACHE = Path(__file__).resolve().parent / "out"


def cached_sqlite(objects: int) -> Path:
    """Where the cached SQLite store of `objects` objects lives."""
    return CACHE / f"api-{objects}-v{migrations.LATEST}b.db"


def _records(objects: int) -> Iterator[dict[str, object]]:
    """The rows of every statement for each object, in stamp order."""
    for i in range(objects):
        doi = f"10.5072/apibench.{i}"  # not the DOIs of synthrepo, which the sync-cost run syncs
        cand = dataset_candidate(synthrepo.dataset(i, ORIGIN), doi, f"{ORIGIN}/dataset/{i}")
        stamp = FIRST_STAMP + timedelta(milliseconds=i)
        rec = new_record(
            cand,
            node_id=NODE,
            stamp=stamp,
            algorithm="MD5",
            submitter=SUBMITTER,
            rights_holder=RIGHTS,
        )
        yield {
            "node_id": NODE,
            "pid": rec.pid,
            "series_id": rec.series_id,
            "format_id": rec.format_id,
            "checksum_algorithm": rec.checksum_algorithm,
            "checksum": rec.checksum,
            "size": rec.size,
            "source_url": rec.source_url,
            "date_uploaded": stamp,
            "date_modified": stamp,
            "media_type": rec.media_type,
            "file_name": rec.file_name,
            "obsoletes": None,
            "obsoleted_by": None,
            "archived": False,
            "serial_version": 1,
            "submitter": rec.submitter,
            "rights_holder": rec.rights_holder,
            "describes_pid": None,
            "object_bytes": rec.object_bytes,
            "content_key": cand.content_key,
        }


def _write_batch(store: Store, rows: list[dict[str, object]]) -> None:
    with store.write() as conn:
        q.RECORD_INSERT.many(conn, [{k: r[k] for k in q.RECORD_COLUMNS} for r in rows])
        q.SERIES_INSERT.many(
            conn,
            [
                {
                    "node": NODE,
                    "sid": r["series_id"],
                    "source_url": r["source_url"],
                    "head_pid": r["pid"],
                    "content_key": r["content_key"],
                    "describes_series": None,
                }
                for r in rows
            ],
        )
        claims = [{"ident": r["pid"], "node": NODE, "kind": "pid"} for r in rows]
        claims += [{"ident": r["series_id"], "node": NODE, "kind": "sid"} for r in rows]
        q.ID_CLAIM.many(conn, claims)
        q.EVENT_INSERT.many(
            conn,
            [
                {
                    "node": NODE,
                    "event": "create",
                    "pid": r["pid"],
                    "sid": r["series_id"],
                    "stamp": r["date_modified"],
                }
                for r in rows
            ],
        )


def build(url: str, objects: int) -> float:
    """Fill a new store at `url` with `objects` objects; the seconds it took."""
    began = time.perf_counter()
    store = Store.open(url)
    try:
        batch: list[dict[str, object]] = []
        last = FIRST_STAMP
        for row in _records(objects):
            batch.append(row)
            if len(batch) == BATCH:
                _write_batch(store, batch)
                batch = []
            last = row["date_modified"]  # type: ignore[assignment]
        if batch:
            _write_batch(store, batch)
        with store.write() as conn:
            q.CLOCK_ROW.rowcount(conn, node=NODE, epoch=last)
        with store.engine.connect() as conn:  # fresh statistics for the planner
            conn.exec_driver_sql("ANALYZE")
            conn.commit()
    finally:
        store.close()
    return time.perf_counter() - began


def sqlite_store(objects: int, rebuild: bool = False) -> tuple[Path, float | None]:
    """The cached SQLite store (built when missing); the build's seconds, None when cached."""
    path = cached_sqlite(objects)
    if path.exists() and not rebuild:
        return path, None
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".building")
    for leftover in (partial, *partial.parent.glob(partial.name + "-*")):
        leftover.unlink(missing_ok=True)
    seconds = build(f"sqlite:///{partial}", objects)
    shutil.move(partial, path)
    return path, seconds


def sample_pids(url: str, every: int) -> list[str]:
    """Every `every`-th PID of the store, in stamp order (the PIDs the load cycles through)."""
    store = Store.open(url, create=False)
    try:
        with store.read() as conn:
            pids = conn.execute(
                t.records.select()
                .with_only_columns(t.records.c.pid)
                .where(t.records.c.node_id == NODE)
                .order_by(t.records.c.date_modified)
            ).scalars()
            return [pid for n, pid in enumerate(pids) if n % every == 0]
    finally:
        store.close()


def path_of(pid: str) -> str:
    return quote(pid, safe="")
