"""The `adapter worker` loop: serve the nodes' due pages until stopped (or idle).

Pages marked due are processed exactly as a sync run's are, through the process's loop;
workers anywhere share one PostgreSQL frontier, and a killed worker's pages go to the
others once their leases run out.
"""

from __future__ import annotations

import logging
import threading
import time

from adapter import signals
from adapter.config.settings import NodeSettings
from adapter.errors import StoreError
from adapter.render.rendered import require as require_rendering
from adapter.store import claims
from adapter.store.db import Store
from adapter.store.frontier import due_count
from adapter.sync.drain import Run, WorkOptions
from adapter.sync.fetchers import node_fetcher
from adapter.sync.loop import drive
from adapter.sync.outcome import PageOutcome, RunSummary

log = logging.getLogger(__name__)

PROGRESS_EVERY = 30.0  # seconds between a worker's progress log lines


def work(
    store: Store,
    nodes: list[NodeSettings],
    stop: threading.Event,
    options: WorkOptions | None = None,
    *,
    owner: str | None = None,
) -> dict[str, RunSummary]:
    """Serve the nodes' due pages until `stop` (or idle); what was done per node.

    A thread per node waits for its pages, so a node with a million due pages
    does not starve the others (their pages share the loop's page threads)."""
    owner, options = owner or claims.owner_id() + ":worker", options or WorkOptions()
    for node in nodes:  # one line saying what to install, before any page is claimed
        if node.rendering.mode != "never":
            require_rendering(node.rendering.browser)
    summaries = {node.id: RunSummary(node.id) for node in nodes}

    def serve(node: NodeSettings) -> None:
        fetcher, _robots = node_fetcher(store, node, owner)
        _serve(Run(store, node, stop, summaries[node.id], owner, fetcher, options))

    threads = [
        threading.Thread(target=serve, args=(n,), name=f"node-{n.short_name}") for n in nodes
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        signals.join(thread)  # in slices: a stop signal is handled however it lands
    return summaries


def _serve(run: Run) -> None:
    """One node's pages, driven while any is due (or until `stop`)."""
    store, node, stop, summary, options = run.store, run.node, run.stop, run.summary, run.options
    last_log = [run.began]

    def on_outcome(out: PageOutcome) -> None:  # in the loop's thread only
        summary.add(out)
        if time.monotonic() - last_log[0] >= PROGRESS_EVERY:
            last_log[0] = time.monotonic()
            log.info("%s: %s", node.id, _counts(summary))

    run.on_outcome = on_outcome
    try:
        while not stop.is_set():
            claims.release_stale_claims(store, node.id)  # leases of dead workers run out
            if drive(run).result():
                continue
            if options.until_idle and due_count(store, node.id) == 0:
                break
            # nothing to claim: wait for the scheduler, or for another worker's lease
            poll = options.poll_seconds
            stop.wait(min(poll, 1.0) if options.until_idle else poll)
    except Exception as exc:
        # the store gone is an expected fault (one line); anything else, a bug of ours
        log.error("%s: worker stopped by an error: %s", node.id, exc,
                  exc_info=not isinstance(exc, StoreError))  # fmt: skip
        summary.status, summary.message = "failed", f"worker stopped by an error: {exc}"
    else:
        summary.status = "interrupted" if stop.is_set() else "ok"
    finally:
        run.close()
    log.info("%s: worker done, %s", node.id, _counts(summary))


def _counts(s: RunSummary) -> str:
    return (
        f"pages {s.fetched}, not modified {s.not_modified}, unchanged {s.unchanged}, "
        f"new objects {s.new_objects}, new versions {s.new_versions}, gone {s.gone}, "
        f"not harvestable {s.pages_not_harvestable}, errors {s.errors}"
    )
