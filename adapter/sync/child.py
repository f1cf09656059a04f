"""A child process of a sync run: fetch and check the pages it is handed, write nothing.

Checking a landing page is CPU under the GIL, so a run that wants more than
one core checks pages in child processes (`adapter.sync.pool`). A child never
writes to the store: SQLite has one writer per file, and children that each
committed their own pages spent a third of their time waiting for each
other's locks. It only reads its node's politeness from the store (the
store-backed pacer, which on SQLite lives in a file of its own), fetches and
checks each row in a pool of threads (one `Fetcher` each), and sends
back a `CheckedPage` for the parent to write.

Messages on `results`: ("page", child index, CheckedPage) per page; ("bye",
child index, None) when the child has stopped.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import signal
import threading
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.signals import install
from adapter.store import claims
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow
from adapter.sync.fetchers import ThreadFetchers, node_fetcher
from adapter.sync.page import check_and_plan

log = logging.getLogger(__name__)

POLL = 0.2  # seconds between looks at the stop flag while no page is handed out


def main(
    index: int,
    store_url: str,
    node: NodeSettings,
    run_id: int,
    threads: int,
    tasks: Any,
    results: Any,
) -> None:
    """Check rows from `tasks` until a `None` per thread (or SIGTERM, or the parent's end)."""

    stop = threading.Event()
    install(None, (signal.SIGINT,))  # Ctrl-C reaches the parent, which tells us
    install(lambda _signum: stop.set(), (signal.SIGTERM,))
    parent = multiprocessing.parent_process()
    store = Store.open(store_url, create=False)
    # the pacer's slots carry this process's own id: a killed child's slots free themselves
    fetcher, _robots = node_fetcher(store, node, claims.owner_id(run_id))
    fetchers = ThreadFetchers(fetcher)

    def serve() -> None:
        mine = fetchers.get()
        while not stop.is_set():
            try:
                row: FrontierRow | None = tasks.get(timeout=POLL)
            except queue.Empty:
                if parent is not None and not parent.is_alive():
                    stop.set()
                continue
            if row is None:
                return
            results.put(("page", index, check_and_plan(node, mine, row)))

    pool = [threading.Thread(target=serve, name=f"check-{i}") for i in range(max(1, threads))]
    try:
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    finally:
        fetchers.close()
        fetcher.close()
        fetcher.pacer.close()  # type: ignore[attr-defined]
        store.close()
        results.put(("bye", index, None))
