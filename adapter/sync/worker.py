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
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

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


def drain(node_drain: NodeDrain) -> int:
    """Claim and process the node's due pages until none is left to claim; pages done.

    The node's own pool of threads, driven from this thread (`NodeDrain` says
    what to start and when, and writes what finished). Side-by-side nodes are
    driven instead by one loop for them all (`adapter.sync.drains`).
    """
    with PageThreads[FrontierRow, Any](node_drain.size) as pool:
        while True:
            timeout = node_drain.start_ready(pool.submit)
            if node_drain.ended:
                return node_drain.done
            if not node_drain.starts.pending:  # nothing to wait on but the host's next turn
                node_drain.stop.wait(timeout)
                continue
            node_drain.write(node_drain.starts.wait(timeout))


Page = Callable[[FrontierRow], "CheckedPage | Future[CheckedPage]"]
Submit = Callable[[Page, FrontierRow], "Future[CheckedPage]"]


class NodeDrain:
    """One node's claimed pages: which may start now, and writing those that finished.

    Claims are refilled as pages finish, so the pool never waits for the
    slowest page of a batch. Pages that finished together are written in one
    transaction (a savepoint each, `commit_group`): on PostgreSQL a commit per
    page, a WAL flush each, was most of a worker's time. A further page starts
    only when the host's turn for it has come (`_Starts`), so a host that
    answers within its interval is served by one thread, whatever its
    concurrency allows. On `stop`, pages not started go back to the frontier
    (their claims are released by the caller) and those in flight finish and
    are written.
    """

    def __init__(
        self,
        store: Store,
        node: NodeSettings,
        fetchers: ThreadFetchers,
        owner: str,
        stop: threading.Event,
        options: WorkOptions,
        on_outcome: Callable[[PageOutcome], None],
        *,
        hand_off: bool = False,
    ) -> None:
        self.store, self.node, self.fetchers, self.owner = store, node, fetchers, owner
        self.hand_off = hand_off  # a page's check in the pool returns as a future of it
        self.stop, self.options, self.on_outcome = stop, options, on_outcome
        self.size = options.pool_size(node)
        self.starts = _Starts(self.size, fetchers.base.pacer)
        self.batch = claim_batch(node, options)
        self.claimed: deque[FrontierRow] = deque()  # not started yet
        self.exhausted = False
        self.ended = False  # nothing in flight and nothing more to start
        self.done = 0

    def start_ready(self, submit: Submit) -> float | None:
        """Start the pages that may start now; seconds until the next may (None: only once
        one in flight finishes). Sets `ended` when nothing is in flight or left to start."""
        if not self.claimed and not self.exhausted and not self.stop.is_set():
            rows = claims.claim_due(
                self.store, self.node.id, self.owner, batch=self.batch, lease=self.options.lease
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
        """Write the pages that finished, in one transaction. Its own frame (with the
        caller's loop holding nothing of them), so the written pages are freed before the
        node waits again: at 200 nodes side by side, each holding its last pages while it
        waited grew memory with the nodes."""
        pages = [f.result() for f in finished]
        if not pages:
            return
        for out in commit_group(self.store, self.node, self.owner, pages):
            self.on_outcome(out)
        self.done += len(pages)

    def _more(self) -> bool:
        return bool(self.claimed) and not self.stop.is_set()

    def _one(self, row: FrontierRow) -> CheckedPage | Future[CheckedPage]:
        with self.fetchers.borrow() as fetcher:
            checks = self.options.checks
            if checks is not None and self.hand_off:
                return checks.start(self.node, fetcher, row)
            if checks is not None:
                return checks.check(self.node, fetcher, row)
            return check_and_plan(self.node, fetcher, row)


CLAIM_AHEAD = 5.0  # seconds of a node's allowed rate claimed at once (with its batch as most)


def claim_batch(node: NodeSettings, options: WorkOptions) -> int:
    """Pages claimed at once: a few seconds' worth at the node's rate, up to `batch`.

    A node at 1 request/s that claimed 20 held them for 20 s; at 200 nodes
    side by side that was 4,000 rows, each with its URL and links, waiting."""
    ahead = math.ceil(node.politeness.requests_per_second * CLAIM_AHEAD)
    return max(options.pool_size(node), min(options.batch, ahead))


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
    # a page is handed over this long before its host's turn, and waits for the turn at the
    # pacer: handed over at the turn, the time it then took to reach a thread and the host
    # (hundreds of nodes' turns come at once) was added to every interval, 4 % of the rate
    LEAD = 0.05

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
        turn = self.pacer.turn(self._host_of(row.url))
        if turn.interval < self.UNGATED:
            return 0.0
        left = turn.next - time.monotonic()
        # a turn to come (a page of ours in flight not yet asked, or anyone's page waiting at
        # the pacer): look again after it; with none in flight, the host's next turn alone
        # says when, so no page waits at the pacer holding a thread
        if turn.waiting or (self.pending and turn.last < self._newest):
            return max(left, self.POLL)
        return max(left - self.LEAD, 0.0)

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

    def take(self, future: Future[CheckedPage]) -> bool:
        """Take a finished page out of the pending set (False: it was not pending)."""
        if future not in self.pending:
            return False
        self.pending.discard(future)
        return True


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
    node_drain, held = held_drain(store, node, base, owner, stop, options, on_outcome)
    with held:
        return drain(node_drain)


def held_drain(
    store: Store,
    node: NodeSettings,
    base: Fetcher,
    owner: str,
    stop: threading.Event,
    options: WorkOptions,
    on_outcome: Callable[[PageOutcome], None],
    *,
    hand_off: bool = False,
) -> tuple[NodeDrain, ExitStack]:
    """The node's drain and what it holds while it runs: its claims' leases renewed and
    its fetchers. Closing the stack drops the leases, closes the fetchers and releases the
    claims left over (the pages a stop kept from starting)."""
    fetchers = ThreadFetchers(base)
    held = ExitStack()
    held.callback(claims.release_claims, store, node.id, owner)
    held.callback(fetchers.close)
    try:
        held.enter_context(lease_keeper(store, owner, options.lease))
    except BaseException:
        held.close()
        raise
    node_drain = NodeDrain(
        store, node, fetchers, owner, stop, options, on_outcome, hand_off=hand_off
    )
    return node_drain, held


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
