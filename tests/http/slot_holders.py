"""Processes that hold a `StorePacer`'s concurrency slots, for tests/http/test_politeness.py.

Its own module, importing only the store: a spawned interpreter imports the module of the
function it runs, and the test module's imports (the whole sync) cost about a CPU second
more per process. One spawned interpreter imports the store once and forks the holders
(it has no threads, so forking it is safe): three processes for the price of one import.
"""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

from adapter.store.claims import owner_id
from adapter.store.db import Store
from adapter.store.hostrate import StorePacer


def hold_slots(url: str, out: str, rounds: int, ready: Any) -> None:
    """Take a slot of `busy.example:` `rounds` times, 40 ms each; append the spans to `out`."""
    store = Store.open(url)
    pacer = StorePacer(store, owner_id() + ":test", 1000.0, 2)
    spans = []
    ready.wait(60)  # all start together, however slowly each one connected
    for _ in range(rounds):
        with pacer.slot("busy.example:"):
            began = time.time()
            time.sleep(0.04)
            spans.append((began, time.time()))
    pacer.close()
    store.close()
    with open(out, "a") as f:
        f.writelines(f"{a} {b}\n" for a, b in spans)


def fork_holders(url: str, out: str, processes: int, rounds: int) -> None:
    """`processes` forked holders of slots, each its own process (own pid, own connection);
    exits non-zero unless every one did."""
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Barrier(processes)
    procs = [
        ctx.Process(target=hold_slots, args=(url, out, rounds, ready)) for _ in range(processes)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    if any(p.exitcode != 0 for p in procs):
        raise SystemExit(f"a holder failed: {[p.exitcode for p in procs]}")
