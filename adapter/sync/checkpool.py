"""One pool of checking processes for every node this process syncs.

Checking is CPU under one GIL (200 nodes at 1 request/s kept one core busy), so page
threads fetch and this pool's children check, sending back what to write. A child never
writes: children committing their own pages spent a third of their time on each other's
locks. Nodes are served in turn (`FairQueue`). A dead child's pages go to the others and
it is replaced (`RESTARTS`); a page two children died holding is an error outcome. With no
child left, pages are checked in the fetching thread; should the pool stop reading
results, every page waiting is an error outcome, never a thread waiting forever.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import queue
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.errors import FetchError, StoreError
from adapter.fairqueue import FairQueue
from adapter.http.connections import fork_safe
from adapter.http.fetcher import Fetcher
from adapter.models import Fetched
from adapter.shared import Shared
from adapter.signals import install
from adapter.store import claims
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow, PageUpdate
from adapter.sync.fetchers import ThreadFetchers, node_fetcher
from adapter.sync.outcome import CheckedPage, PageOutcome
from adapter.sync.page import check_and_plan, fetch_landing_page

log = logging.getLogger(__name__)

THREADS = 8  # per child: a check that fetches a linkset or copy waits on its host's pace
AHEAD = 2  # pages handed to a child per thread of it, so none waits for the next
RESTARTS = 3  # replacements per child before the pool runs with fewer
DEATHS = 2  # children a page may see die before it is an error outcome
POLL = 0.2  # seconds between looks at the children while no result arrives

Response = Fetched | FetchError


@dataclass(slots=True)
class _Task:
    id: int
    node: NodeSettings
    row: FrontierRow
    response: Response
    deaths: int = 0  # children that died with it in hand
    future: Future[CheckedPage] = field(default_factory=Future)

    def finish(self, result: CheckedPage | StoreError | None = None) -> None:
        """Its result; none: the last child died holding it, an error outcome (checked again
        by the next run); a StoreError: the pacer's store is gone, the run fails."""
        if self.future.done():
            return
        if isinstance(result, StoreError):
            self.future.set_exception(result)
        else:
            self.future.set_result(result or _error(self.row, "adapter/check-process-died"))


@dataclass(slots=True)
class _Child:
    index: int
    process: Any
    tasks: Any
    nodes: set[str] = field(default_factory=set)  # node settings it was sent
    held: dict[int, _Task] = field(default_factory=dict)  # handed out, not answered
    restarts: int = 0
    gone: bool = False  # died past its restarts, or said goodbye


class CheckPool:
    """Child processes that check the pages page threads fetched; see the module docstring."""

    def __init__(self, store_url: str, processes: int, threads: int = THREADS) -> None:
        self.store_url, self.threads = store_url, threads
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(["adapter.sync.checkpool", "adapter.pipeline"])
        self._results: Any = self._ctx.Queue()
        self._cond = threading.Condition()
        self._waiting: FairQueue[_Task] = FairQueue()  # per node, for a child
        self._ids = itertools.count()
        self._closing = False
        self._children = [self._start(i) for i in range(processes)]
        self._threads = [
            threading.Thread(target=self._dispatch, name="checkpool-dispatch", daemon=True),
            threading.Thread(target=self._receive, name="checkpool-receive", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def room(self) -> int:
        """Pages the children hold at most at once."""
        return self.processes * self.threads * AHEAD

    @property
    def processes(self) -> int:
        with self._cond:
            return sum(1 for c in self._children if not c.gone)

    def start(
        self, node: NodeSettings, fetcher: Fetcher, row: FrontierRow
    ) -> CheckedPage | Future[CheckedPage]:
        """Fetch the page here (the node's pace); the future of its check in a child, so
        the fetching thread is free for the next page (checked here when no child is left)."""
        response = fetch_landing_page(node, fetcher, row)  # rendered here when it needs it
        task = _Task(next(self._ids), node, row, response)
        with self._cond:
            pooled = not self._closing and any(not c.gone for c in self._children)
            if pooled:
                self._queue(task)
        if not pooled:
            return check_and_plan(node, fetcher, row, prefetched=response)
        return task.future

    def close(self) -> None:
        """Let every child finish what it holds, then stop them."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            live = [c for c in self._children if not c.gone]
        for child in live:
            for _ in range(self.threads):
                child.tasks.put(None)
        for child in live:
            child.process.join(30)
            if child.process.is_alive():
                child.process.terminate()
                child.process.join(5)
        for thread in self._threads:
            thread.join(5)
        self._fail_left("adapter/check-pool-closed")
        self._let_go_of_queues()

    def _let_go_of_queues(self) -> None:
        """Close the queues and drop them here, so their named semaphores are unlinked, and
        the resource tracker told, by the closing thread. Left to whoever dropped the pool
        last (the drain loop's daemon thread), interpreter shutdown could stop that thread
        between the two: "leaked semaphore objects" at the end of a good `adapter sync`."""
        if self._results is None:  # closed before
            return
        queues = [self._results]
        for child in self._children:
            if child.process.exitcode != 0:  # what it left unread may fill the pipe for good
                child.tasks.cancel_join_thread()
            queues.append(child.tasks)
            child.tasks = None
        self._results = None
        for each in queues:
            each.close()
            each.join_thread()  # the feeder thread holds two of the semaphores

    # -- feeding ------------------------------------------------------------------------

    def _queue(self, task: _Task, *, front: bool = False) -> None:
        """Under the lock: the task waits for a child, in its node's turn."""
        self._waiting.put(task.node.id, task, front=front)
        self._cond.notify_all()

    def _dispatch(self) -> None:
        """Give the next node in turn's oldest page to the least busy child with room."""
        room = self.threads * AHEAD
        while True:
            with self._cond:
                while not self._closing:
                    live = [c for c in self._children if not c.gone and len(c.held) < room]
                    if self._waiting and live:
                        break
                    self._cond.wait()
                if self._closing:
                    return
                task = self._waiting.take()
                child = min(live, key=lambda c: len(c.held))
                child.held[task.id] = task
                first = task.node.id not in child.nodes
                child.nodes.add(task.node.id)
            if first:
                child.tasks.put(("node", task.node))
            child.tasks.put(("check", task.id, task.node.id, task.row, task.response))

    def _receive(self) -> None:
        """Results to their tasks; dead children's pages to the others."""
        reaped, results = time.monotonic(), self._results  # `close` lets go of the queue
        try:
            while True:
                if time.monotonic() - reaped >= POLL:  # also while results flow
                    reaped = time.monotonic()
                    if self._reap():
                        return
                try:
                    kind, index, task_id, checked = results.get(timeout=POLL)
                except queue.Empty:
                    continue
                with self._cond:
                    child = self._children[index]
                    child.gone |= kind == "bye"
                    task = child.held.pop(task_id, None)
                    # the last goodbye: nothing more can come, so `close` is not kept
                    # waiting for the next look at the children (up to 2 x POLL, the
                    # run's last 0.2-0.4 s with every core idle)
                    over = self._closing and all(c.gone for c in self._children)
                    self._cond.notify_all()
                if task is not None:
                    task.finish(checked)
                if over:
                    return
        except (EOFError, OSError):
            pass
        finally:
            with self._cond:
                broken, self._closing = not self._closing, True
                self._cond.notify_all()
            if broken:  # no result can arrive now: nobody waits forever
                log.error("the checking pool stopped reading its processes' results")
                self._fail_left("adapter/check-pool-failed")

    def _reap(self) -> bool:
        """Replace children that died; True once closing and none is left."""
        with self._cond:
            for child in self._children:
                if child.gone or child.process.exitcode is None:
                    continue
                log.warning("check process %s ended with %s; its %d pages go to the others",
                            child.process.pid, child.process.exitcode, len(child.held))  # fmt: skip
                held, child.held, child.nodes = list(child.held.values()), {}, set()
                if self._closing or child.restarts >= RESTARTS:
                    child.gone = True
                else:
                    self._children[child.index] = self._start(child.index, child.restarts + 1)
                for task in held:
                    self._retry(task)
            self._cond.notify_all()
            return self._closing and all(c.gone for c in self._children)

    def _retry(self, task: _Task) -> None:
        """Under the lock: a dead child's page to another child, or an error outcome."""
        task.deaths += 1
        if task.deaths >= DEATHS or self._closing or all(c.gone for c in self._children):
            task.finish()  # an error outcome
        else:
            self._queue(task, front=True)

    def _fail_left(self, code: str) -> None:
        """On close: pages never answered are error outcomes, so no thread waits forever."""
        with self._cond:
            left = self._waiting.drain() + [t for c in self._children for t in c.held.values()]
        for task in left:
            task.finish(_error(task.row, code))

    def _start(self, index: int, restarts: int = 0) -> _Child:
        tasks = self._ctx.Queue()
        args = (index, self.store_url, self.threads, tasks, self._results)
        ctx = multiprocessing.get_context("fork") if fork_safe() else self._ctx  # no re-import
        process = ctx.Process(target=child_main, args=args, name=f"check-{index}")
        process.start()
        return _Child(index, process, tasks, restarts=restarts)


def _error(row: FrontierRow, code: str) -> CheckedPage:
    out = PageOutcome(row.url, "error", error=code)
    return CheckedPage(row, out, PageUpdate("error", keep_validators=True), [])


_SHARED: Shared[tuple[str, int], CheckPool] = Shared(lambda key: CheckPool(*key), CheckPool.close)


@contextmanager
def shared_checks(store_url: str, processes: int) -> Iterator[CheckPool | None]:
    """This process's pool for `store_url` (None for 0 processes), closed by its last user."""
    if processes < 1:
        yield None
        return
    with _SHARED.use((store_url, processes)) as pool:
        yield pool


# -- the child --------------------------------------------------------------------------


def child_main(index: int, store_url: str, threads: int, tasks: Any, results: Any) -> None:
    """Check what `tasks` brings until a `None` per thread (or SIGTERM, or the parent's end).

    Messages in: ("node", NodeSettings) before a node's first page; ("check", task id,
    node id, FrontierRow, response). Out per page: ("done", index, task id, CheckedPage),
    or ("failed", ..., StoreError) when the pacer's store is gone; ("bye", index, None,
    None) at the end.
    """
    stop = threading.Event()
    install(None, (signal.SIGINT,))  # Ctrl-C reaches the parent, which closes the pool
    install(lambda _signum: stop.set(), (signal.SIGTERM,))
    owner = claims.owner_id()  # the pacer's slots: a killed child's free themselves
    parent = multiprocessing.parent_process()
    stores: list[Store] = []  # the pacer's, opened on the first node's first page
    nodes: dict[str, NodeSettings] = {}
    fetchers: dict[str, ThreadFetchers] = {}
    known = threading.Condition()

    def fetchers_of(node_id: str) -> tuple[NodeSettings, ThreadFetchers]:
        with known:  # a node's settings come before its pages, maybe to another thread
            known.wait_for(lambda: node_id in nodes)
            if not stores:
                stores.append(Store.open(store_url, create=False))
            if node_id not in fetchers:
                base, _robots = node_fetcher(stores[0], nodes[node_id], owner)
                fetchers[node_id] = ThreadFetchers(base)
            return nodes[node_id], fetchers[node_id]

    def serve() -> None:
        while not stop.is_set():
            try:
                message = tasks.get(timeout=POLL)
            except queue.Empty:
                if parent is not None and not parent.is_alive():
                    return
                continue
            if message is None:
                return
            if message[0] == "node":
                with known:
                    nodes[message[1].id] = message[1]
                    known.notify_all()
                continue
            _check, task_id, node_id, row, response = message
            try:
                node, per_node = fetchers_of(node_id)
                with per_node.borrow() as fetcher:
                    checked = check_and_plan(node, fetcher, row, prefetched=response)
                results.put(("done", index, task_id, checked))
            except StoreError as exc:  # the store is gone: one line, from the run that fails
                results.put(("failed", index, task_id, exc))
            except Exception as exc:  # a bug of ours: the page is an error, the run goes on
                log.exception("checking %s failed", row.url)
                results.put(("done", index, task_id, _error(row, f"adapter/{type(exc).__name__}")))

    pool = [threading.Thread(target=serve, name=f"check-{i}") for i in range(max(1, threads))]
    try:
        for thread in pool:
            thread.start()
    finally:
        for thread in pool:
            thread.join()
        for per_node in fetchers.values():
            per_node.close()
            per_node.base.close()
            per_node.base.pacer.close()
        for store in stores:
            store.close()
        results.put(("bye", index, None, None))
