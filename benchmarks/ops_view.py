"""The operator view at scale: each /ops page's answer time at 1,000 and 100,000 pages.

Run: .venv/bin/python benchmarks/ops_view.py [--pages 100000] [--runs 15] [--postgres URL]

Writes a store as a node of `--pages` pages leaves it (`tests.support.opsstore`:
stored reports with their finding codes, 30 runs, 10,000 queued events, a COAR Notify
request received and a status announcement sent per page) and a
small one of 1,000 pages beside it, then times every /ops page through the
WSGI application in this process (query, template, the whole body; no socket),
as a loopback caller; with --postgres also the CPU the server's backends spent (read from
/proc, so the server must run on this machine), after VACUUM ANALYZE as autovacuum
would run it.
The first and the last page of each list are both timed:
a list must answer as fast at its end as at its start. Prints a Markdown table
for BENCHMARKS.md, the two sizes side by side. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapter.commands.web import operator_view  # noqa: E402
from adapter.store.db import Store  # noqa: E402
from adapter.web.app import WebApp  # noqa: E402
from adapter.web.checking import Checker  # noqa: E402
from tests.support.opsstore import fill  # noqa: E402

NODE = "urn:node:BIG"
EVENTS = 10_000
CODE = "dataone/encoding-missing"


def paths(pages: int) -> list[tuple[str, str]]:
    """(label, path?query) of every /ops page, first and last page of each list."""
    last = (pages - 1) // 100 * 100
    n = {"node": NODE}
    q = lambda **kw: urlencode({**n, **kw})  # noqa: E731
    return [
        ("/ops (nodes, charts, recent runs)", "/ops"),
        ("/ops/node (findings by code)", f"/ops/node?{q()}"),
        ("/ops/pages, first page", f"/ops/pages?{q()}"),
        ("/ops/pages, last page", f"/ops/pages?{q(offset=last)}"),
        (
            "/ops/pages?status=harvested, last page",
            f"/ops/pages?{q(status='harvested', offset=pages // 4 - 100)}",
        ),
        (f"/ops/pages?code={CODE}, first page", f"/ops/pages?{q(code=CODE)}"),
        (
            f"/ops/pages?code={CODE}, last page",
            f"/ops/pages?{q(code=CODE, offset=pages // 4 - 100)}",
        ),
        (
            "/ops/pages?code=…&status=…, last page",
            f"/ops/pages?{q(code=CODE, status='not-harvestable', offset=pages // 4 - 100)}",
        ),
        (
            "/ops/page (one stored report)",
            f"/ops/page?{q(url=f'https://repo.example/ds/{pages - 1}')}",
        ),
        ("/ops/runs", f"/ops/runs?{q()}"),
        ("/ops/runs/ID", "/ops/runs/30"),
        ("/ops/queue, first page", f"/ops/queue?{q()}"),
        ("/ops/queue, last page", f"/ops/queue?{q(offset=EVENTS - 100)}"),
        ("/ops/notify (received), first page", f"/ops/notify?{q()}"),
        ("/ops/notify (received), last page", f"/ops/notify?{q(offset=last)}"),
        ("/ops/notify/sent, first page", f"/ops/notify/sent?{q()}"),
        ("/ops/notify/sent, last page", f"/ops/notify/sent?{q(offset=last)}"),
        ("/ops/failures", f"/ops/failures?{q()}"),
    ]


def call(app: WebApp, target: str) -> tuple[str, int]:
    path, _, query = target.partition("?")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.input": io.BytesIO(b""),
    }
    status: list[str] = []
    body = b"".join(app(environ, lambda s, h: status.append(s)))
    return status[0], len(body)


Timing = tuple[float, float, float, float]  # median wall, median CPU, highest CPU, server CPU


def timed(action: Callable[[], object], runs: int, server: ServerCpu | None = None) -> Timing:
    """Median wall and CPU milliseconds, the highest CPU (this thread's CPU: what an idle
    machine would take, whatever else shares the cores), and the median CPU the database
    server's backends spent on the request (PostgreSQL on this machine; else 0)."""
    action()  # warm: the first read pulls the pages into the cache
    wall, cpu, served = [], [], []
    for _ in range(runs):
        before = server.seconds() if server else 0.0
        began, began_cpu = time.perf_counter(), time.thread_time()
        action()
        wall.append(time.perf_counter() - began)
        cpu.append(time.thread_time() - began_cpu)
        served.append(server.seconds() - before if server else 0.0)
    return (
        statistics.median(wall) * 1000,
        statistics.median(cpu) * 1000,
        max(cpu) * 1000,
        statistics.median(served) * 1000,
    )


class ServerCpu:
    """The CPU time PostgreSQL's backends serving this store have used (user + system, from
    /proc: the server must run on this machine). Its ticks are 10 ms: read medians."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.tick = os.sysconf("SC_CLK_TCK")

    def seconds(self) -> float:
        from sqlalchemy import text

        with self.store.read() as conn:
            pids = conn.execute(
                text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
            ).scalars()
            total = 0
            for pid in pids:
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / self.tick


def build(url: str, pages: int) -> tuple[WebApp, Store, float]:
    store = Store.open(url)
    began = time.perf_counter()
    fill(store, NODE, pages, runs=30, events=EVENTS, notices=pages)
    if store.engine.dialect.name == "postgresql":  # as autovacuum does after a bulk load
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")  # the visibility map: index-only scans
    took = time.perf_counter() - began
    return WebApp(Checker(), None, operator_view(store)), store, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--postgres", help="a PostgreSQL URL to measure too (tables dropped)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engines = [("SQLite", lambda name: f"sqlite:///{tmp}/{name}.db")]
        if args.postgres:
            engines.append(("PostgreSQL", lambda name: args.postgres))
        for engine, url_for in engines:
            results: dict[int, dict[str, Timing]] = {}
            for size in (1000, args.pages):
                if engine == "PostgreSQL":
                    _drop(args.postgres)
                app, store, took = build(url_for(f"ops{size}"), size)
                print(f"{engine}: {size:,} pages written in {took:.1f} s", file=sys.stderr)
                results[size] = {}
                server = ServerCpu(store) if engine == "PostgreSQL" else None
                for label, target in paths(size):
                    status, _ = call(app, target)
                    assert status.startswith("200"), (target, status)
                    results[size][label] = timed(partial(call, app, target), args.runs, server)
                store.close()
            pg = engine == "PostgreSQL"
            print(f"\n{engine}, median ms over {args.runs} requests, wall / CPU:\n")
            print(
                f"| page | {1000:,} pages | {args.pages:,} pages | highest CPU at "
                f"{args.pages:,} | ratio (CPU) |" + (" server CPU (1,000 / big) |" if pg else "")
            )
            print("| --- | --- | --- | --- | --- |" + (" --- |" if pg else ""))
            for label, _ in paths(args.pages):
                small, big = results[1000][label], results[args.pages][label]
                served = f" {small[3]:.0f} / {big[3]:.0f} |" if pg else ""
                print(
                    f"| {label} | {small[0]:.1f} / {small[1]:.1f} | {big[0]:.1f} / {big[1]:.1f} "
                    f"| {big[2]:.1f} | {big[1] / small[1]:.2f} |" + served
                )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nMachine: {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{load}; measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC."
    )


def _drop(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    engine.dispose()


if __name__ == "__main__":
    main()
