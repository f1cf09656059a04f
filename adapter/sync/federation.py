"""Several nodes at once: each in its own thread, none holding back the others.

A node's pace is set by its hosts' politeness (a request or two per second),
so nodes run side by side rather than one after another: `adapter sync
--config` with several nodes and the scheduler both go through here. A node
that is slow, paused or failing only occupies its own thread; among several,
a node whose run raises is a `failed` summary, and the others go on (a single
node's error reaches the caller, as it always did). Their pages are checked
by one pool of processes shared by them all (`adapter.sync.checkpool`), sized
by `check_processes` or by what the nodes' allowed rates need, so side-by-side
nodes never start a pool each.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime

from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.sync.checkpool import pool_size, shared_checks
from adapter.sync.outcome import RunSummary
from adapter.sync.run import run_node

log = logging.getLogger(__name__)


def run_nodes(
    config: AdapterConfig,
    nodes: Sequence[NodeSettings],
    *,
    stop: threading.Event,
    job: Callable[..., RunSummary] = run_node,
    **options: object,
) -> Iterator[RunSummary]:
    """Each node's summary as its run ends (in that order), `config.nodes_at_once()` at once."""
    if len(nodes) == 1:  # one node: its run in this thread, as before (its bar, its errors)
        yield job(config, nodes[0], stop=stop, **options)
        return
    options = {**options, "progress": False}  # one bar per node would garble the terminal
    workers = min(len(nodes), config.nodes_at_once())
    with (
        shared_checks(config.store_url, pool_size(config, nodes)) as checks,
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="node") as pool,
    ):
        if checks is not None:
            log.info("%d nodes side by side, checked in %d processes", len(nodes), checks.processes)
            options["checks"] = checks
        futures = [pool.submit(_guarded, job, config, node, stop, options) for node in nodes]
        for future in as_completed(futures):
            yield future.result()


def _guarded(
    job: Callable[..., RunSummary],
    config: AdapterConfig,
    node: NodeSettings,
    stop: threading.Event,
    options: dict[str, object],
) -> RunSummary:
    """The node's run; an exception is its own failed summary, never the others' problem."""
    began = datetime.now(UTC)
    try:
        return job(config, node, stop=stop, **options)
    except Exception as exc:
        log.exception("%s: the run failed", node.id)
        summary = RunSummary(node.id, started_at=began.isoformat(timespec="seconds"))
        summary.status, summary.message = "failed", f"{type(exc).__name__}: {exc}"
        summary.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
        return summary
