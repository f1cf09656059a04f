"""Several nodes at once, none holding back the others: `adapter sync` of a configuration.

Each node is a run of its own (`start_node`), so a slow, paused or failing node holds only
its own pages back; among several, a run that raises is a `failed` summary and the others
go on. Their pages share one checking pool (`adapter.config.settings.pool_size`).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime

from adapter import signals
from adapter.config.settings import AdapterConfig, NodeSettings, pool_size
from adapter.errors import AdapterError
from adapter.sync.checkpool import shared_checks
from adapter.sync.outcome import RunSummary
from adapter.sync.run import start_node

log = logging.getLogger(__name__)


def run_nodes(
    config: AdapterConfig,
    nodes: Sequence[NodeSettings],
    *,
    stop: threading.Event,
    job: Callable[..., RunSummary | Future[RunSummary]] = start_node,
    **options: object,
) -> Iterator[RunSummary]:
    """Each node's summary as its run ends (in that order), `config.nodes_at_once()` at once.

    Runs start in `config.discoveries_at_once()` threads; a job may return its summary or a
    future of it (`start_node`: the pages in the process's loop), which frees the
    thread for the next node's start."""
    if len(nodes) == 1:  # one node: its discovery in this thread (its bar, its errors)
        outcome = job(config, nodes[0], stop=stop, **options)
        yield signals.result(outcome) if isinstance(outcome, Future) else outcome
        return
    options = {**options, "progress": False}  # one bar per node would garble the terminal
    ends: queue.SimpleQueue[RunSummary] = queue.SimpleQueue()  # summaries as runs end
    going = threading.BoundedSemaphore(min(len(nodes), config.nodes_at_once()))
    starts = min(len(nodes), config.discoveries_at_once())
    with (
        shared_checks(config.store_url, pool_size(config, nodes)) as checks,
        ThreadPoolExecutor(max_workers=starts, thread_name_prefix="node") as pool,
    ):
        if checks is not None:
            log.info("%d nodes side by side, checked in %d processes", len(nodes), checks.processes)
            options["checks"] = checks
        for node in nodes:
            pool.submit(_start, job, config, node, stop, options, going, ends.put)
        left = len(nodes)
        try:
            while left:
                summary = signals.get(ends)  # in slices, as every wait of the main thread
                left -= 1
                yield summary
        finally:  # the pool of checks and the store outlive every run
            for _ in range(left):
                signals.get(ends)


def _start(
    job: Callable[..., RunSummary | Future[RunSummary]],
    config: AdapterConfig,
    node: NodeSettings,
    stop: threading.Event,
    options: dict[str, object],
    going: threading.BoundedSemaphore,
    end: Callable[[RunSummary], None],
) -> None:
    """Start the node's run once fewer than `nodes_at_once` are going; `end` its summary."""
    going.acquire()
    began = datetime.now(UTC)

    def ended(summary: RunSummary) -> None:
        going.release()
        end(summary)

    try:
        outcome = job(config, node, stop=stop, **options)
    except Exception as exc:
        outcome = _failed(node, began, exc)
    if not isinstance(outcome, Future):
        ended(outcome)
    else:
        outcome.add_done_callback(
            lambda f: ended(_failed(node, began, f.exception()) if f.exception() else f.result())
        )


def _failed(node: NodeSettings, began: datetime, exc: BaseException | None) -> RunSummary:
    """An exception is the node's own failed summary, never the others' problem."""
    # the adapter's own errors (a store gone away) are one line; anything else, a bug's trace
    log.error("%s: the run failed: %s", node.id, exc,
              exc_info=None if isinstance(exc, AdapterError) else exc)  # fmt: skip
    summary = RunSummary(node.id, started_at=began.isoformat(timespec="seconds"))
    summary.status, summary.message = "failed", f"{type(exc).__name__}: {exc}"
    summary.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    return summary
