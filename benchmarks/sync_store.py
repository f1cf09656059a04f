"""Store and sync throughput: frontier upserts, page commits, and a whole sync over HTTP.

Measures, on SQLite (a file, WAL) and on PostgreSQL when ADAPTER_TEST_POSTGRES_URL is set:
- frontier upsert: discovery entries written per second (new pages, then a rerun);
- page commits: pages per second through `apply_candidates` + `finish_page`, one
  transaction per page (the sync run's unit of work), each a new record + outbox event;
- end to end: `run_node` over a local HTTP site of generated landing pages.
Writes the "## Sync store" section of BENCHMARKS.md (only that section).

    .venv/bin/python benchmarks/sync_store.py [--entries 100000] [--pages 2000] [--site 300]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapter.config.load import load_config  # noqa: E402
from adapter.dataone.records import dataset_candidate  # noqa: E402
from adapter.models import SitemapEntry  # noqa: E402
from adapter.store import claims  # noqa: E402
from adapter.store import frontier as fr  # noqa: E402
from adapter.store.db import Store  # noqa: E402
from adapter.store.ledger import RecordDefaults, apply_candidates  # noqa: E402
from adapter.sync.run import run_node  # noqa: E402
from benchmarks.sections import write_section  # noqa: E402
from tests.support import stores  # noqa: E402

SECTION = "## Sync store"
NODE = "urn:node:BENCH"


def engines(tmp: Path, cleanup: ExitStack) -> list[tuple[str, str]]:
    """The stores to measure; a PostgreSQL schema of its own, dropped by `cleanup`."""
    out = [("SQLite (file, WAL)", f"sqlite:///{tmp / 'bench.db'}")]
    base = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if base:
        out.append(("PostgreSQL 15 (local)", cleanup.enter_context(stores.postgres_schema(base))))
    return out


def bench_upsert(url: str, n: int) -> tuple[float, float]:
    store = Store.open(url)
    day = datetime(2024, 1, 1, tzinfo=UTC)
    entries = [
        SitemapEntry(f"https://r.example/d/{i}", "https://r.example/s.xml", day) for i in range(n)
    ]
    t0 = time.perf_counter()
    fr.upsert_entries(store, NODE, 1, entries)
    first = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    fr.upsert_entries(store, NODE, 2, entries)
    second = n / (time.perf_counter() - t0)
    store.close()
    return first, second


def bench_commits(url: str, n: int) -> float:
    store = Store.open(url)
    node = NODE + "C"
    defaults = RecordDefaults(node, "MD5", "s", "r")
    fr.upsert_entries(
        store,
        node,
        10,
        [SitemapEntry(f"https://p.example/{i}", "https://p.example/s.xml") for i in range(n)],
    )
    rows = claims.claim_due(store, node, "bench", batch=n, lease=timedelta(hours=1))
    doc = {"@type": "Dataset", "description": "x" * 1500}
    t0 = time.perf_counter()
    for i, row in enumerate(rows):
        cand = dataset_candidate({**doc, "name": f"d{i}"}, f"10.5072/b{i}", row.url)
        with store.write() as conn:
            apply_candidates(conn, defaults, [cand])
            fr.finish_page(conn, row, "bench", fr.PageUpdate("harvested", 200))
    rate = len(rows) / (time.perf_counter() - t0)
    store.close()
    return rate


def bench_site(tmp: Path, pages: int) -> tuple[float, float]:
    """Whole sync of a generated site over local HTTP (SQLite), pages per second."""
    sys.path.insert(0, str(ROOT))
    import tests.sync.test_sync_kill as kill  # the same site generator, sized here
    from tests.support.fixture_server import start_site, stop

    kill.PAGES = pages
    kill.build_site(tmp)
    servers = start_site("sync-many", tmp / "sites")
    try:
        cfg_path = kill.write_config(tmp / "b.yaml", tmp / "site.db", servers[0])
        text = cfg_path.read_text().replace("requests_per_second: 25", "requests_per_second: 1000")
        cfg_path.write_text(text.replace("concurrency: 2", "concurrency: 4"))
        cfg = load_config(cfg_path)
        t0 = time.perf_counter()
        first = run_node(cfg, cfg.nodes[0])
        full = first.fetched / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        run_node(cfg, cfg.nodes[0])  # nothing due: discovery + frontier only
        rerun = pages / (time.perf_counter() - t0)
    finally:
        stop(servers)
    return full, rerun


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--pages", type=int, default=2_000)
    ap.add_argument("--site", type=int, default=300)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-sync-"))
    rows = []
    try:
        with ExitStack() as cleanup:
            for name, url in engines(tmp, cleanup):
                up1, up2 = bench_upsert(url, args.entries)
                commits = bench_commits(url, args.pages)
                rows.append(f"| {name} | {up1:,.0f} | {up2:,.0f} | {commits:,.0f} |")
                print(rows[-1], flush=True)
        full, rerun = bench_site(tmp, args.site)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    header = (
        f"| engine | upsert, new pages/s ({args.entries:,}) | upsert, rerun pages/s "
        f"| page commits/s ({args.pages:,}) |"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = f"""{SECTION}

`benchmarks/sync_store.py`: the store under the sync run. Frontier upserts take
discovery's entries in batches of {fr.UPSERT_BATCH} per transaction (a multi-row insert
for new pages, one executemany update for the rest); a page commit is one transaction
holding the new record, its outbox event, the node clock and the frontier row.

{header}
| --- | --- | --- | --- |
{chr(10).join(rows)}

Whole sync over local HTTP (`run_node`, SQLite, {args.site} generated landing pages,
politeness 1000 req/s, 4 threads): {full:,.0f} pages/s fetched, checked and committed on
the first run; a rerun with nothing due (discovery + frontier only) {rerun:,.0f} pages/s.

Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()},
load average {load} while measuring (other jobs share the machine);
measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.
"""
    print(text)
    if not args.no_write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
