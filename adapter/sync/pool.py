"""The sync run's due pages: checked in this process or in several, written by this one.

Checking a landing page costs CPU under the GIL (pyld, lxml), so threads
overlap the fetches but not the checks. When a node's politeness lets pages
arrive faster than one core can check them and enough pages are due, the run
starts child processes (`forkserver`: no threads are forked; see
`adapter.sync.child`) that fetch and check pages and send back what to write.
This process claims the pages (renewing their leases) a hundred at a time,
hands each child a few more rows than it has threads, and writes every
outcome itself, the pages that arrive together in one transaction: SQLite has
one writer per file, and children committing their own pages waited on each
other's locks for a third of the run. The store-backed pacer still holds the
host's rate across all of them. Rows a child took and never answered (it
died) are handed to the others, or checked here when none is left.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adapter.config.settings import CPU_PER_PAGE, NodeSettings
from adapter.http.fetcher import Fetcher
from adapter.store import claims
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow
from adapter.sync import child as checkchild
from adapter.sync.leases import lease_keeper
from adapter.sync.outcome import CheckedPage, PageOutcome, RunSummary
from adapter.sync.page import process_page
from adapter.sync.worker import WorkOptions, process_here
from adapter.sync.write import commit_group

log = logging.getLogger(__name__)

PAGES_PER_PROCESS = 300  # below this many due pages per process, starting one does not pay
AHEAD = 2  # rows handed to a child per thread of it, so none waits for the next
CLAIM = 100  # rows claimed at once: a claim is a transaction, a third of a sync's own CPU when
# it took only the dozen rows the children were short of
GROUP = 32  # checked pages written per look at the results
WAIT = 0.2  # seconds between looks at the children while no result arrives


class ProcessBudget:
    """Checking processes this process may have at once, over every node it runs side by side."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._free = total
        self._lock = threading.Lock()

    def take(self, wanted: int) -> int:
        """Up to `wanted` processes (at least 1: the run's own); give them back with `give`."""
        with self._lock:
            extra = min(wanted - 1, self._free)
            self._free -= max(0, extra)
            return 1 + max(0, extra)

    def give(self, taken: int) -> None:
        with self._lock:
            self._free += taken - 1


# the run's own process checks pages too, so children fill the other cores
PROCESS_BUDGET = ProcessBudget(max(0, (os.cpu_count() or 1) - 1))


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
    if options.checks is not None:  # side by side with other nodes: their pool checks
        _process_due(store, node, fetcher, owner, summary, stop, options, 1, on_progress)
        return
    if processes:  # asked for by name: as many as asked
        _process_due(store, node, fetcher, owner, summary, stop, options, processes, on_progress)
        return
    count = PROCESS_BUDGET.take(choose_processes(node, summary.due))
    try:
        _process_due(store, node, fetcher, owner, summary, stop, options, count, on_progress)
    finally:
        PROCESS_BUDGET.give(count)


def _process_due(
    store: Store,
    node: NodeSettings,
    fetcher: Fetcher,
    owner: str,
    summary: RunSummary,
    stop: threading.Event,
    options: WorkOptions,
    count: int,
    on_progress: Callable[[int], None] | None,
) -> None:

    def here(out: PageOutcome) -> None:
        summary.add(out)
        if on_progress is not None:
            on_progress(1)

    if count > 1 and not stop.is_set():
        log.info("%s: %d due pages in %d processes", node.id, summary.due, count)
        pool = _Children(store, node, owner, summary.run_id, options, count)
        with lease_keeper(store, owner, options.lease):
            left = pool.run(stop, here)
            for row in left if not stop.is_set() else []:  # every child died
                here(process_page(store, node, fetcher, row, owner=owner))
        claims.release_claims(store, node.id, owner)  # rows taken back on a stop
    process_here(store, node, fetcher, owner, stop, options, here)


@dataclass(slots=True)
class _Child:
    process: Any
    tasks: Any
    rows: dict[int, FrontierRow] = field(default_factory=dict)  # handed out, not answered
    done: bool = False  # said goodbye, or died


class _Children:
    """Child processes that check rows this process claims; this process writes them."""

    def __init__(
        self,
        store: Store,
        node: NodeSettings,
        owner: str,
        run_id: int,
        options: WorkOptions,
        count: int,
    ) -> None:
        self.store, self.node, self.owner, self.options = store, node, owner, options
        self.threads = options.pool_size(node)
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["adapter.sync.child", "adapter.pipeline"])
        self.results: Any = ctx.Queue()
        self.children: list[_Child] = []
        for i in range(count):
            tasks = ctx.Queue()
            args = (i, store.url, node, run_id, self.threads, tasks, self.results)
            proc = ctx.Process(target=checkchild.main, args=args, name=f"sync-{i}")
            self.children.append(_Child(proc, tasks))
        self.backlog: deque[FrontierRow] = deque()  # claimed, not handed out yet
        self.drained = False  # a claim found no due row

    def run(
        self, stop: threading.Event, on_outcome: Callable[[PageOutcome], None]
    ) -> list[FrontierRow]:
        """Check and write every due page; the rows nobody answered (all children died)."""
        for child in self.children:
            child.process.start()
        ended = False
        try:
            while True:
                if not (stop.is_set() or self.exhausted):
                    self._hand_out()
                if not ended and (stop.is_set() or (self.exhausted and not self._pending())):
                    if stop.is_set():
                        self._take_back()
                    self._say_end()
                    ended = True
                if all(c.done for c in self.children):
                    break
                checked = self._receive()
                for out in commit_group(self.store, self.node, self.owner, checked):
                    on_outcome(out)
                if not checked:
                    self._reap()
        finally:
            if not ended:
                self._say_end()
            for child in self.children:
                child.process.join(60)
                if child.process.exitcode not in (0, None):
                    log.warning("%s: sync process %s ended with %s", self.node.id,
                                child.process.pid, child.process.exitcode)  # fmt: skip
            self.results.close()
        return [*(row for c in self.children for row in c.rows.values()), *self.backlog]

    @property
    def exhausted(self) -> bool:
        return self.drained and not self.backlog

    def _pending(self) -> int:
        return sum(len(c.rows) for c in self.children)

    def _hand_out(self) -> None:
        """Top every live child up to AHEAD rows per thread, claiming when the backlog is short."""
        live = [c for c in self.children if not c.done]
        want = sum(self.threads * AHEAD - len(c.rows) for c in live)
        if want < self.threads or not live:
            return
        if len(self.backlog) < want and not self.drained:
            rows = claims.claim_due(self.store, self.node.id, self.owner,
                                    batch=max(CLAIM, want), lease=self.options.lease)  # fmt: skip
            self.backlog.extend(rows)
            self.drained = not rows
        for _ in range(min(want, len(self.backlog))):
            self._give(min(live, key=lambda c: len(c.rows)), self.backlog.popleft())

    def _give(self, child: _Child, row: FrontierRow) -> None:
        child.rows[row.id] = row
        child.tasks.put(row)

    def _receive(self) -> list[CheckedPage]:
        """What the children sent: up to GROUP checked pages, waiting WAIT for the first."""
        got: list[CheckedPage] = []
        timeout: float | None = WAIT
        while len(got) < GROUP:
            try:
                kind, index, item = (
                    self.results.get(timeout=timeout) if timeout else self.results.get_nowait()
                )
            except queue.Empty:
                break
            timeout = None
            child = self.children[index]
            if kind == "bye":
                child.done = True
                self._reassign(child)
            else:
                child.rows.pop(item.row.id, None)
                got.append(item)
        return got

    def _reap(self) -> None:
        """A child that died without goodbye: its rows go to the others."""
        for child in self.children:
            if not child.done and child.process.exitcode is not None:
                child.done = True
                self._reassign(child)

    def _reassign(self, child: _Child) -> None:
        rows, child.rows = list(child.rows.values()), {}
        live = [c for c in self.children if not c.done]
        if not live:
            child.rows = {r.id: r for r in rows}  # nobody left: the caller checks them
            return
        for row in rows:
            self._give(min(live, key=lambda c: len(c.rows)), row)

    def _take_back(self) -> None:
        """On a stop: rows not started yet go back to the frontier (claims released later)."""
        for child in self.children:
            while True:
                try:
                    row = child.tasks.get_nowait()
                except queue.Empty:
                    break
                if row is not None:
                    child.rows.pop(row.id, None)

    def _say_end(self) -> None:
        for child in self.children:
            for _ in range(self.threads):
                child.tasks.put(None)
