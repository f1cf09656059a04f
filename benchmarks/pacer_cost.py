"""CPU the store-backed pacer costs a request, and where it goes.

`threads` threads of one process each take `rounds` turns of one host through a
`StorePacer` (SQLite, a file beside a fresh store; the first sync's politeness:
5000/s, concurrency 8), telling `sent` at once and holding the slot `inside`
seconds (a request's trip), then `between` seconds outside it (the page's other
work). `--others N` runs N more processes doing the same meanwhile (the
checking children of a first sync share the host). Prints one JSON line:
CPU ms per turn of this process (`process_time`), and the schedule's
statements per turn by their first words, with the CPU ms spent in them.

    .venv/bin/python benchmarks/pacer_cost.py [--threads 8] [--rounds 400] [--others 1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapter.http.politeness import HostPacer, NoPacer, Pacer  # noqa: E402
from adapter.store import hostrate_db  # noqa: E402
from adapter.store.claims import owner_id  # noqa: E402
from adapter.store.db import Store  # noqa: E402
from adapter.store.hostrate import StorePacer  # noqa: E402

HOST = "127.0.0.1:8080"
counts: Counter[str] = Counter()
cpu: defaultdict[str, float] = defaultdict(float)


def tally() -> None:
    """Count the schedule's statements and the thread CPU each costs (with its lock)."""
    for name in ("one", "all", "run"):
        plain = getattr(hostrate_db.ScheduleDb, name)

        def counted(self: Any, sql: str, _plain: Any = plain, **params: object) -> Any:
            key = " ".join(sql.split()[:3])
            began = time.thread_time()
            try:
                return _plain(self, sql, **params)
            finally:
                cpu[key] += time.thread_time() - began
                counts[key] += 1

        setattr(hostrate_db.ScheduleDb, name, counted)


def turns(url: str, threads: int, rounds: int, inside: float, between: float, kind: str) -> int:
    store = Store.open(url)
    pacer: Pacer = (
        StorePacer(store, owner_id() + ":bench", 5000.0, 8)
        if kind == "store"
        else HostPacer(5000.0, 8)
        if kind == "host"
        else NoPacer()
    )

    def one() -> None:
        for _ in range(rounds):
            with pacer.slot(HOST):
                pacer.sent(HOST, time.monotonic())
                time.sleep(inside)
            time.sleep(between)

    pool = [threading.Thread(target=one) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    pacer.close()
    store.close()
    return threads * rounds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--inside", type=float, default=0.0005)
    ap.add_argument("--between", type=float, default=0.005)
    ap.add_argument("--others", type=int, default=0)
    ap.add_argument("--pacer", choices=("store", "host", "none"), default="store")
    ap.add_argument("--no-tally", action="store_true", help="no statement counts (less overhead)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="pacer-cost-"))
    url = f"sqlite:///{tmp}/store.db"
    Store.open(url).close()
    turns(
        url, 1, 2, 0.0, 0.0, args.pacer
    )  # the host's rows exist: only the steady state is measured
    if not args.no_tally:
        tally()
    ctx = multiprocessing.get_context("fork")
    work = (url, args.threads, args.rounds, args.inside, args.between, args.pacer)
    others = [ctx.Process(target=turns, args=work) for _ in range(args.others)]
    for p in others:
        p.start()
    began, wall = time.process_time(), time.perf_counter()
    done = turns(*work)
    spent, wall = time.process_time() - began, time.perf_counter() - wall
    for p in others:
        p.join()
    per = {k: round(counts[k] / done, 3) for k in sorted(counts)}
    ms = {k: round(1000 * cpu[k] / done, 4) for k in sorted(cpu)}
    print(
        json.dumps(
            {
                "cpu_ms_per_turn": round(1000 * spent / done, 4),
                "wall_s": round(wall, 2),
                "statements_per_turn": per,
                "statement_cpu_ms_per_turn": ms,
            }
        )
    )


if __name__ == "__main__":
    main()
