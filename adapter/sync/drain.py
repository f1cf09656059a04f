"""One node's due pages: the run they belong to, which may start now, and their writes.

A sync run and an `adapter worker` both hand a `Run` to a `NodeDrain`, driven by the
process's loop (`adapter.sync.loop`; ARCHITECTURE.md draws the path).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from adapter.config.settings import NodeSettings
from adapter.http.fetcher import Fetcher
from adapter.http.starts import Starts
from adapter.store import claims
from adapter.store.claims import lease_keeper
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow
from adapter.sync.fetchers import ThreadFetchers
from adapter.sync.outcome import CheckedPage, PageOutcome, RunSummary
from adapter.sync.page import check_and_plan, fetch_landing_page
from adapter.sync.write import commit_group

if TYPE_CHECKING:  # the pool imports this module's neighbours; only its type is needed here
    from adapter.sync.checkpool import CheckPool

CLAIM_AHEAD = 5.0  # seconds of a node's allowed rate claimed at once (with its batch as most)


@dataclass(frozen=True, slots=True)
class WorkOptions:
    """How a process works through due pages."""

    batch: int = 20  # pages claimed at once
    lease: timedelta = timedelta(minutes=10)  # a claim not renewed for this long is free again
    threads: int | None = None  # pages in flight per node; default: the node's concurrency
    until_idle: bool = False  # `adapter worker`: return once nothing of the node is due
    poll_seconds: float = 5.0  # how often an idle worker looks for due pages
    # the process's checking pool: pages fetched in the page threads are checked there
    # (`adapter.sync.checkpool`); None: checked in those threads
    checks: CheckPool | None = None
    # pages in flight beyond `threads`, checking in the pool: a run's own pool is fed as
    # much as its children hold, or it checked a third slower than its processes could
    ahead: int = 0
    # claim only these pages (None: any due page of the node): a COAR Notify request's page,
    # checked at once by `adapter serve` without taking the node's other due pages
    only: frozenset[str] | None = None


@dataclass(slots=True)
class Run:
    """What one node's pages need while they are processed: a sync run's or a worker's."""

    store: Store
    node: NodeSettings
    stop: threading.Event
    summary: RunSummary
    owner: str  # of the claims, and of the pacer's slots
    fetcher: Fetcher  # the node's: its pacer, host health and robots.txt gate
    options: WorkOptions = WorkOptions()  # frozen, so safe to share
    robots: Any = None
    began: float = field(default_factory=time.monotonic)
    on_outcome: Callable[[PageOutcome], None] | None = None  # default: `summary.add`

    def outcome(self, out: PageOutcome) -> None:
        (self.on_outcome or self.summary.add)(out)

    def close(self) -> None:
        """Close the node's fetcher and its pacer; the run's duration taken."""
        self.fetcher.close()
        self.fetcher.pacer.close()
        self.summary.duration_s = round(time.monotonic() - self.began, 3)


Page = Callable[[FrontierRow], "CheckedPage | Future[CheckedPage]"]
Submit = Callable[[Page, FrontierRow], "Future[CheckedPage]"]


class NodeDrain:
    """One node's claimed pages: which may start now (`Starts`), and writing those that
    finished, together in one transaction (a commit a page, a WAL flush each, was most of a
    worker's time). Claims are refilled as pages finish. On `stop`, pages not started go
    back to the frontier at `close`; those in flight are written."""

    def __init__(self, run: Run) -> None:
        self.run, self.node = run, run.node
        self.fetchers = ThreadFetchers(run.fetcher)
        self.size = max(1, run.options.threads or run.node.politeness.concurrency)
        self.starts = Starts(self.size + run.options.ahead, run.fetcher.pacer)
        # a few seconds' worth at the node's rate, up to `batch`: a node at 1 request/s that
        # claimed 20 held them for 20 s, at 200 nodes 4,000 rows waiting
        ahead = math.ceil(run.node.politeness.requests_per_second * CLAIM_AHEAD)
        self.batch = max(self.size, min(run.options.batch, ahead))
        self.claimed: deque[FrontierRow] = deque()  # not started yet
        self.exhausted = False
        self.ended = False  # nothing in flight and nothing more to start
        self.done = 0
        self._lease = lease_keeper(run.store, run.owner, run.options.lease)
        self._lease.__enter__()

    def close(self) -> None:
        """Drop the leases, close the fetchers, release the claims a stop kept from starting."""
        self._lease.__exit__(None, None, None)
        self.fetchers.close()
        claims.release_claims(self.run.store, self.node.id, self.run.owner)

    def start_ready(self, submit: Submit) -> float | None:
        """Start the pages that may start now; seconds until the next may (None: only once
        one in flight finishes). Sets `ended` when nothing is in flight or left to start."""
        run = self.run
        if not self.claimed and not self.exhausted and not run.stop.is_set():
            rows = claims.claim_due(
                run.store,
                self.node.id,
                run.owner,
                batch=self.batch,
                lease=run.options.lease,
                urls=run.options.only,
            )
            self.claimed.extend(rows)
            self.exhausted = not rows
        while self._more() and self.starts.may_start(self.claimed[0]):
            self.starts.add(submit(self._one, self.claimed.popleft()))
        if self._more():
            return self.starts.next_start(self.claimed[0])
        self.ended = not self.starts.pending
        return None

    def write(self, finished: Iterable[Future[CheckedPage]]) -> None:
        """Write the pages that finished, in one transaction. Its own frame (the caller's
        loop holding nothing of them), so the written pages are freed before the node waits
        again: at 200 nodes side by side, each holding its last pages grew memory."""
        pages = [f.result() for f in finished]
        if not pages:
            return
        for out in commit_group(self.run.store, self.node, self.run.owner, pages):
            self.run.outcome(out)
        self.done += len(pages)

    def _more(self) -> bool:
        return bool(self.claimed) and not self.run.stop.is_set()

    def _one(self, row: FrontierRow) -> CheckedPage | Future[CheckedPage]:
        """In a page thread: fetch and check here, or fetch here and check in the pool
        (the future of that check: the thread goes on to the next page meanwhile)."""
        with self.fetchers.borrow() as fetcher:
            checks = self.run.options.checks
            if checks is not None:
                return checks.start(self.node, fetcher, row)
            page = fetch_landing_page(self.node, fetcher, row)
            return check_and_plan(self.node, fetcher, row, prefetched=page)
