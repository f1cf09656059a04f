"""The sync run of one member node: discover -> upsert the frontier -> process due pages.

Each page commits on its own (adapter.sync.page), so a crash loses at most the
pages in flight and a rerun picks up the pages still due. Pages leave the
node by a 404/410 (archived when processed) or by missing from a complete
discovery `archive_after_missing_runs` times in a row; a discovery that hit
errors (a sitemap that failed) does not count anyone as missing.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.dataone.records import DUPLICATE_DOI
from adapter.discovery.walk import discover
from adapter.findings import Finding, FindingType, Severity
from adapter.http.fetcher import Fetcher
from adapter.models import SitemapEntry
from adapter.store import claims
from adapter.store import frontier as fr
from adapter.store.db import Store
from adapter.store.frontier import due_count
from adapter.store.ledger import archive_page
from adapter.sync.fetchers import node_fetcher
from adapter.sync.outcome import RunSummary
from adapter.sync.pool import process_due
from adapter.sync.worker import WorkOptions

CLAIM_BATCH = 20
LEASE = timedelta(minutes=10)

DISCOVERY_INCOMPLETE = FindingType(
    "sync/discovery-incomplete",
    Severity.WARNING,
    "Discovery hit errors, so pages missing from the sitemaps in this run are not counted "
    "as removed (nothing is archived for being absent this time).",
)


def _discover(
    node: NodeSettings, fetcher: Fetcher, robots: Any
) -> Iterator[SitemapEntry | Finding]:
    return discover(
        node.start.urls(),
        fetcher,
        limits=node.limits(),
        robots=robots,
        allowed_hosts=node.scope.allowed_hosts,
        include=node.scope.include_patterns,
        exclude=node.scope.exclude_patterns,
    )


def run_node(
    config: AdapterConfig,
    node: NodeSettings,
    *,
    stop: threading.Event | None = None,
    progress: bool = False,
    enqueue_only: bool = False,
    processes: int | None = None,
) -> RunSummary:
    """One sync run of `node` into `config.store_url`; the summary is also stored.

    `enqueue_only` (or the node's `sync.enqueue_only`): discover and mark pages
    due, leave them to `adapter worker`s.
    `processes`: how many processes check pages (default: as many as pay, see
    `adapter.sync.pool.choose_processes`).
    """
    store = Store.open(config.store_url)
    try:
        return run_with_store(
            store,
            node,
            stop=stop,
            progress=progress,
            enqueue_only=enqueue_only,
            processes=processes,
        )
    finally:
        store.close()


def run_with_store(
    store: Store,
    node: NodeSettings,
    *,
    stop: threading.Event | None = None,
    progress: bool = False,
    enqueue_only: bool = False,
    processes: int | None = None,
) -> RunSummary:
    stop = stop or threading.Event()
    began = time.monotonic()
    summary = RunSummary(node.id, started_at=datetime.now(UTC).isoformat(timespec="seconds"))
    store.close_dead_runs(node.id, claims.dead_local_owner)
    summary.run_id = store.start_run(node.id, claims.owner_id())
    owner = claims.owner_id(summary.run_id)
    fetcher, robots = node_fetcher(store, node, owner)  # politeness shared with every worker
    try:
        complete = _discover_into(store, node, fetcher, robots, summary, stop)
        if complete and not stop.is_set():
            _archive_missing(store, node, summary)
        fr.mark_stale_due(store, node.id, timedelta(hours=node.sync.recheck_after_hours))
        claims.release_stale_claims(store, node.id)
        summary.due = due_count(store, node.id)
        if not (enqueue_only or node.sync.enqueue_only):
            _process_due(store, node, fetcher, owner, summary, stop, progress, processes)
        summary.status = "interrupted" if stop.is_set() else "ok"
    except Exception as exc:
        summary.status, summary.message = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        fetcher.close()
        fetcher.pacer.close()  # type: ignore[attr-defined]
        summary.duration_s = round(time.monotonic() - began, 3)
        summary.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
        store.finish_run(summary.run_id, summary.status, summary.as_dict(), summary.message)
    return summary


def _discover_into(
    store: Store,
    node: NodeSettings,
    fetcher: Fetcher,
    robots: Any,
    summary: RunSummary,
    stop: threading.Event,
) -> bool:
    """Upsert every entry discovery yields; True when discovery finished without errors."""
    codes: Counter[str] = Counter()
    errors = 0

    def entries() -> Iterator[SitemapEntry]:
        nonlocal errors
        for item in _discover(node, fetcher, robots):
            if stop.is_set():
                return
            if isinstance(item, Finding):
                codes[item.code] += 1
                errors += item.severity is Severity.ERROR
            else:  # discover applied the node's scope (hosts, include, exclude)
                yield item

    summary.pages_seen = fr.upsert_entries(store, node.id, summary.run_id, entries())
    complete = errors == 0 and not stop.is_set()
    if not complete and not stop.is_set():
        codes[DISCOVERY_INCOMPLETE.code] += 1
    summary.discovery_findings = dict(sorted(codes.items()))
    return complete and summary.pages_seen > 0


def _archive_missing(store: Store, node: NodeSettings, summary: RunSummary) -> None:
    threshold = node.sync.archive_after_missing_runs
    for row in fr.count_missing(store, node.id, summary.run_id, threshold):
        with store.write() as conn:
            summary.archived += len(archive_page(conn, node.id, row.url))
            fr.mark_removed(conn, row.id)
            # a page refused for one of its DOIs may take the series now
            fr.mark_due_with_finding(conn, node.id, DUPLICATE_DOI.code, row.url)


def _process_due(
    store: Store,
    node: NodeSettings,
    fetcher: Fetcher,
    owner: str,
    summary: RunSummary,
    stop: threading.Event,
    progress: bool,
    processes: int | None,
) -> None:
    """Threads per process, one Session each; processes when the node's rate can feed them."""

    bar = _bar(summary.due, node.id) if progress else None
    options = WorkOptions(batch=CLAIM_BATCH, lease=LEASE)
    try:
        process_due(
            store,
            node,
            fetcher,
            owner,
            summary,
            stop,
            options,
            processes=processes,
            on_progress=bar.update if bar is not None else None,
        )
    finally:
        if bar is not None:
            bar.close()


def _bar(total: int, node_id: str) -> Any:
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=node_id, unit="page", file=sys.stderr, leave=False)
