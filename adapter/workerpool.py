"""The sync run's due pages, processed in this process or in several.

Checking a landing page costs about 5 to 8 ms of CPU (pyld, lxml, the store),
all of it under the GIL, so threads overlap the fetches but not the checks.
When a node's politeness lets pages arrive faster than one core can check
them and enough pages are due, the run starts child processes (`forkserver`:
no threads are forked) that claim pages from the same frontier as any
`adapter worker` would, with the store-backed pacer holding the host's rate
across all of them. The parent then finishes whatever is left (the pages of
a child that died), adds up the children's counts and reports progress.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Callable
from typing import Any

from adapter import claims
from adapter.fetch import Fetcher
from adapter.harvest import PageOutcome
from adapter.settings import NodeSettings
from adapter.store import Store
from adapter.sync import RunSummary
from adapter.worker import WorkOptions, node_fetcher, process_here

log = logging.getLogger(__name__)

CPU_PER_PAGE = 0.008  # seconds of one core per landing page, measured (BENCHMARKS.md)
PAGES_PER_PROCESS = 300  # below this many due pages per process, starting one does not pay
PROGRESS_BATCH = 20  # a child reports progress every this many pages
COUNTED = (
    "fetched",
    "not_modified",
    "unchanged",
    "new_objects",
    "new_versions",
    "archived",
    "gone",
    "pages_not_harvestable",
    "errors",
)


def choose_processes(node: NodeSettings, due: int, cpus: int | None = None) -> int:
    """How many processes pay for `due` pages: as many cores as the node's rate can feed."""
    cpus = cpus or os.cpu_count() or 1
    feedable = math.ceil(node.politeness.requests_per_second * CPU_PER_PAGE)
    return max(1, min(cpus, feedable, due // PAGES_PER_PROCESS))


def process_due(
    store: Store,
    node: NodeSettings,
    fetcher: Fetcher,
    owner: str,
    summary: RunSummary,
    stop: threading.Event,
    options: WorkOptions,
    *,
    processes: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> None:
    """Process every due page of `node` (see the module docstring) into `summary`."""
    count = processes or choose_processes(node, summary.due)

    def here(out: PageOutcome) -> None:
        summary.add(out)
        if on_progress is not None:
            on_progress(1)

    if count > 1 and not stop.is_set():
        log.info("%s: %d due pages in %d processes", node.id, summary.due, count)
        _in_children(store.url, node, summary, stop, options, count, on_progress)
        claims.release_stale_claims(store, node.id)  # a child that died leaves its claims
    process_here(store, node, fetcher, owner, stop, options, here)


def _in_children(
    store_url: str,
    node: NodeSettings,
    summary: RunSummary,
    stop: threading.Event,
    options: WorkOptions,
    count: int,
    on_progress: Callable[[int], None] | None,
) -> None:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["adapter.workerpool", "adapter.pipeline"])
    child_stop = ctx.Event()
    results: Any = ctx.Queue()
    args = (store_url, node, summary.run_id, child_stop, results, options)
    children = [ctx.Process(target=child_main, args=args, name=f"sync-{i}") for i in range(count)]
    for child in children:
        child.start()
    try:
        while True:
            if stop.is_set():
                child_stop.set()
            try:
                kind, value = results.get(timeout=0.2)
            except queue.Empty:
                if not any(c.is_alive() for c in children):
                    break
                continue
            if kind == "progress" and on_progress is not None:
                on_progress(int(value))
            elif kind == "done":
                for name in COUNTED:
                    setattr(summary, name, getattr(summary, name) + int(value[name]))
                for name in ("not_harvestable", "error_codes"):
                    mine: dict[str, int] = getattr(summary, name)
                    for code, n in value[name].items():
                        mine[code] = mine.get(code, 0) + int(n)
    finally:
        child_stop.set()
        for child in children:
            child.join(60)
            if child.exitcode not in (0, None):
                log.warning("%s: sync process %s ended with %s", node.id, child.pid, child.exitcode)
        results.close()


def child_main(
    store_url: str,
    node: NodeSettings,
    run_id: int,
    parent_stop: Any,
    results: Any,
    options: WorkOptions,
) -> None:
    """One child process of a sync run: claim and process due pages until none is left."""
    stop = threading.Event()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which tells us
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def watch_parent() -> None:
        # polled: a process that dies inside Event.wait() would block the parent's set()
        while not parent_stop.is_set():
            if stop.wait(0.2):
                return
        stop.set()

    threading.Thread(target=watch_parent, daemon=True).start()
    store = Store.open(store_url, create=False)
    owner = claims.owner_id(run_id)
    fetcher, _robots = node_fetcher(store, node, owner)
    mine = RunSummary(node.id)
    unreported = 0

    def on_outcome(out: PageOutcome) -> None:
        nonlocal unreported
        mine.add(out)
        unreported += 1
        if unreported >= PROGRESS_BATCH:
            results.put(("progress", unreported))
            unreported = 0

    try:
        process_here(store, node, fetcher, owner, stop, options, on_outcome)
    finally:
        fetcher.close()
        results.put(("progress", unreported))
        results.put(("done", mine.as_dict()))
        store.close()
