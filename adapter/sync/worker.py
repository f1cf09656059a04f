"""Processing due pages: threads for I/O, processes for CPU, any number of workers per store.

Every page is checked by `adapter.sync.page.check_and_plan` in a pool thread
and written by `adapter.sync.page.commit_group` (the pages that finished
together in one transaction, a savepoint each). Around them this module adds:

- a thread pool per node and process, one `Fetcher` (one pool manager,
  kept-alive connections) per thread, all threads sharing the node's pacer,
  host health and robots.txt gate;
- claims in batches (`adapter.store.claims.claim_due`, `FOR UPDATE SKIP LOCKED` on
  PostgreSQL), refilled as pages finish, with leases renewed while a process
  is alive, so a worker killed at any point loses its pages to the others;
- the store-backed pacer (`adapter.store.hostrate`), so per-host rate, concurrency
  and Crawl-delay hold across all processes sharing the store;
- `process_due` for the sync run: in this process, or in several when the
  node's politeness lets pages arrive faster than one core can check them
  (everything after the socket read holds the GIL: threads add no CPU).

`work` is the `adapter worker` loop: it serves the pages that the scheduler
or `adapter sync --enqueue-only` marked due, until stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from adapter.config.settings import NodeSettings
from adapter.http.addresses import host_key
from adapter.http.fetcher import Fetcher
from adapter.http.politeness import Pacer
from adapter.store import claims
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow, due_count
from adapter.store.hostrate import StorePacer
from adapter.sync.fetchers import ThreadFetchers, node_fetcher
from adapter.sync.leases import lease_keeper
from adapter.sync.outcome import CheckedPage, PageOutcome, RunSummary
from adapter.sync.page import check_and_plan
from adapter.sync.pagethreads import PageThreads
from adapter.sync.write import commit_group

if TYPE_CHECKING:  # the pool imports this module's neighbours; only its type is needed here
    from adapter.sync.checkpool import CheckPool

log = logging.getLogger(__name__)

PROGRESS_EVERY = 30.0  # seconds between a worker's progress log lines


@dataclass(frozen=True, slots=True)
class WorkOptions:
    """How a process works through due pages."""

    batch: int = 20  # pages claimed at once
    lease: timedelta = timedelta(minutes=10)  # a claim not renewed for this long is free again
    threads: int | None = None  # pages in flight per node; default: the node's concurrency
    until_idle: bool = False  # return once nothing of the node is due (else wait for more)
    poll_seconds: float = 5.0  # how often an idle worker looks for due pages
    # the process's checking pool shared by side-by-side nodes: pages fetched in the node's
    # threads are checked there (`adapter.sync.checkpool`); None: checked in those threads
    checks: CheckPool | None = None

    def pool_size(self, node: NodeSettings) -> int:
        return max(1, self.threads or node.politeness.concurrency)


def drain(
    store: Store,
    node: NodeSettings,
    fetchers: ThreadFetchers,
    owner: str,
    stop: threading.Event,
    options: WorkOptions,
    on_outcome: Callable[[PageOutcome], None],
) -> int:
    """Claim and process the node's due pages until none is left to claim; pages done.

    Claims are refilled as pages finish, so the pool never waits for the
    slowest page of a batch. The pool's threads check pages; this thread
    writes the pages that finished together in one transaction (a savepoint
    each, `commit_group`): on PostgreSQL a commit per page, a WAL flush each,
    was most of a worker's time. A further page starts only when the host's
    turn for it has come (`_Starts`), so a host that answers within its
    interval is served by one thread, whatever its concurrency allows. On
    `stop`, pages not started go back to the frontier (their claims are
    released by the caller) and those in flight finish and are written.
    """
    size = options.pool_size(node)
    done_count = 0

    def one(row: FrontierRow) -> CheckedPage:
        if options.checks is not None:
            return options.checks.check(node, fetchers.get(), row)
        return check_and_plan(node, fetchers.get(), row)

    with PageThreads[FrontierRow, CheckedPage](size) as pool:
        starts = _Starts(size, fetchers.base.pacer)
        claimed: deque[FrontierRow] = deque()  # not started yet
        exhausted = False
        while True:
            if not claimed and not exhausted and not stop.is_set():
                want = max(options.batch, size)
                rows = claims.claim_due(store, node.id, owner, batch=want, lease=options.lease)
                claimed.extend(rows)
                exhausted = not rows
            while claimed and not stop.is_set() and starts.may_start(claimed[0]):
                starts.add(pool.submit(one, claimed.popleft()))
            if not starts.pending:
                return done_count
            timeout = starts.next_start(claimed[0]) if claimed and not stop.is_set() else None
            done_count += _write_finished(store, node, owner, starts, timeout, on_outcome)


def _write_finished(
    store: Store,
    node: NodeSettings,
    owner: str,
    starts: _Starts,
    timeout: float | None,
    on_outcome: Callable[[PageOutcome], None],
) -> int:
    """Write the pages that finish within `timeout`; how many. Its own frame, so the
    written pages are freed before the node's thread waits again (at 200 nodes side by
    side, each holding its last pages while it waited grew memory with the nodes)."""
    finished = [f.result() for f in starts.wait(timeout)]
    if not finished:
        return 0
    for out in commit_group(store, node, owner, finished):
        on_outcome(out)
    return len(finished)


class _Starts:
    """The pages in flight of one node, and when the next may start.

    Every page waits its turn at the host's pacer inside `one`; starting
    another page before the newest has had its turn, while one waits there,
    or before the host's next turn, would only park another thread at the
    same pacer (at 200 nodes side by side, hundreds of threads, about 40 KB
    each). So a page starts when fewer than `size` are in flight, the newest
    has had its turn, none waits for one and the host's next turn has come:
    a host that answers within its interval is served by one thread, a slow
    one gets as many in flight as its concurrency allows.
    """

    POLL = 0.01  # the shortest wait before looking again
    # at shorter intervals (20 requests/s and more) a page held back would wait longer than
    # a thread parked at the pacer: every page starts at once, as many as `size`
    UNGATED = 0.05

    def __init__(self, size: int, pacer: Pacer) -> None:
        self.size = size
        self.pacer = pacer
        self.pending: set[Future[CheckedPage]] = set()
        self._newest = float("-inf")  # monotonic time the newest page was handed over
        self._host = ("", "")  # the latest row's URL and host key (the next looks' row, mostly)

    def may_start(self, row: FrontierRow) -> bool:
        return self.next_start(row) == 0

    def next_start(self, row: FrontierRow) -> float | None:
        """Seconds until `row` may start if nothing finishes first (None: only once one does)."""
        if len(self.pending) >= self.size:
            return None
        if not self.pending:  # nothing in flight: the pacer alone says when
            return 0.0
        turn = self.pacer.turn(self._host_of(row.url))
        if turn.interval < self.UNGATED:
            return 0.0
        left = turn.next - time.monotonic()
        if turn.waiting or turn.last < self._newest:  # a turn to come: look again after it
            return max(left, self.POLL)
        return max(left, 0.0)

    def _host_of(self, url: str) -> str:
        """`host_key` parses the URL: in a profile of 200 nodes side by side it was 9 % of the
        syncing process's GIL time, every look at a node's next start parsing its row again."""
        if self._host[0] != url:
            self._host = (url, host_key(url))
        return self._host[1]

    def add(self, future: Future[CheckedPage]) -> None:
        self.pending.add(future)
        self._newest = time.monotonic()

    def wait(self, timeout: float | None) -> set[Future[CheckedPage]]:
        """Those finished within `timeout`, taken out of the pending set."""
        finished, self.pending = wait(self.pending, timeout, return_when=FIRST_COMPLETED)
        return finished


def process_here(
    store: Store,
    node: NodeSettings,
    base: Fetcher,
    owner: str,
    stop: threading.Event,
    options: WorkOptions,
    on_outcome: Callable[[PageOutcome], None],
) -> int:
    """Process the node's due pages in this process (threads only); pages done."""
    fetchers = ThreadFetchers(base)
    try:
        with lease_keeper(store, owner, options.lease):
            return drain(store, node, fetchers, owner, stop, options, on_outcome)
    finally:
        fetchers.close()
        claims.release_claims(store, node.id, owner)


def work(
    store: Store,
    nodes: list[NodeSettings],
    stop: threading.Event,
    options: WorkOptions = WorkOptions(),  # frozen, so safe to share
    *,
    owner: str | None = None,
) -> dict[str, RunSummary]:
    """The `adapter worker` loop: serve the nodes' due pages until `stop` (or idle).

    One thread per node, each with its own page pool, so a node with a
    million due pages does not starve the others. Returns what was done per node.
    """
    owner = owner or claims.owner_id() + ":worker"
    summaries = {node.id: RunSummary(node.id) for node in nodes}
    threads = [
        threading.Thread(
            target=_serve_node,
            args=(store, node, owner, stop, options, summaries[node.id]),
            name=f"node-{node.short_name}",
        )
        for node in nodes
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return summaries


def _serve_node(
    store: Store,
    node: NodeSettings,
    owner: str,
    stop: threading.Event,
    options: WorkOptions,
    summary: RunSummary,
) -> None:
    fetcher, _robots = node_fetcher(store, node, owner)
    lock = threading.Lock()
    began = time.monotonic()
    last_log = [began]

    def on_outcome(out: PageOutcome) -> None:
        with lock:
            summary.add(out)
            if time.monotonic() - last_log[0] >= PROGRESS_EVERY:
                last_log[0] = time.monotonic()
                log.info("%s: %s", node.id, _counts(summary))

    try:
        while not stop.is_set():
            claims.release_stale_claims(store, node.id)  # leases of dead workers run out
            done = process_here(store, node, fetcher, owner, stop, options, on_outcome)
            if done:
                continue
            if options.until_idle and due_count(store, node.id) == 0:
                break
            # nothing to claim: wait for the scheduler, or for another worker's lease
            stop.wait(
                min(options.poll_seconds, 1.0) if options.until_idle else options.poll_seconds
            )
    except Exception:
        log.exception("%s: worker stopped by an error", node.id)
        summary.status, summary.message = "failed", "worker stopped by an error (see log)"
    else:
        summary.status = "interrupted" if stop.is_set() else "ok"
    finally:
        fetcher.close()
        pacer = fetcher.pacer
        if isinstance(pacer, StorePacer):
            pacer.close()
        summary.duration_s = round(time.monotonic() - began, 3)
    log.info("%s: worker done, %s", node.id, _counts(summary))


def _counts(s: RunSummary) -> str:
    return (
        f"pages {s.fetched}, not modified {s.not_modified}, unchanged {s.unchanged}, "
        f"new objects {s.new_objects}, new versions {s.new_versions}, gone {s.gone}, "
        f"not harvestable {s.pages_not_harvestable}, errors {s.errors}"
    )
