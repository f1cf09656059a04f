"""A node's sync run: begin -> discover into the frontier -> drain the due pages -> finish.

The one lifecycle of every node run (ARCHITECTURE.md, "From a due page to a committed
record"). Pages leave the node by a 404/410 or by missing from a complete discovery
`archive_after_missing_runs` times in a row; a discovery that hit errors counts none missing.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any

from adapter import signals
from adapter.config.load import placeholder_notices
from adapter.config.settings import AdapterConfig, NodeSettings, choose_processes
from adapter.discovery.findings import SITEMAP_READ
from adapter.discovery.graphs import discover_sitegraphs
from adapter.discovery.sitegraph import GraphRead
from adapter.discovery.walk import discover, start_failure
from adapter.errors import StoreError
from adapter.findings import Finding, FindingType, Severity
from adapter.models import SitemapEntry
from adapter.render.rendered import require as require_rendering
from adapter.store import claims
from adapter.store import frontier as fr
from adapter.store.db import Store, shared_store
from adapter.store.frontier import due_count
from adapter.store.policy import apply_policy
from adapter.store.sitegraphs import graph_states, keep_state, left_graph, seen_again
from adapter.store.upkeep import archive_left, publish_missing_packages
from adapter.sync.checkpool import CheckPool, shared_checks
from adapter.sync.drain import Run
from adapter.sync.fetchers import node_fetcher
from adapter.sync.loop import drive
from adapter.sync.outcome import PAGE_COUNTS, PageOutcome, RunSummary
from adapter.sync.write import defaults_for

log = logging.getLogger(__name__)

DISCOVERY_INCOMPLETE = FindingType(
    "sync/discovery-incomplete",
    Severity.WARNING,
    "Discovery hit errors, so pages missing from the sitemaps in this run are not counted "
    "as removed (nothing is archived for being absent this time).",
)


START_FAILED = FindingType(
    "sync/start-unreachable",
    Severity.ERROR,
    "The run could not reach its start: robots.txt or every sitemap could not be read, or "
    "discovery listed no page where the node's previous run listed some. The run is failed "
    "and no page was processed.",
)


def run_node(config: AdapterConfig, node: NodeSettings, **options: Any) -> RunSummary:
    """`start_node`, waited for: its summary, or the error that failed it."""
    return signals.result(start_node(config, node, **options))


def start_node(
    config: AdapterConfig,
    node: NodeSettings,
    *,
    stop: threading.Event | None = None,
    progress: bool = False,
    enqueue_only: bool = False,
    processes: int | None = None,
    checks: CheckPool | None = None,
    held: ExitStack | None = None,
) -> Future[RunSummary]:
    """One sync run of `node`: discovery in this thread, pages in the process's loop; the
    future of the summary (also stored) or of the run's error. The store engine and `held`
    are kept until the run ends. `enqueue_only`: only mark pages due, for `adapter worker`s;
    `processes`: checking processes (default `choose_processes`); `checks`: a shared pool."""
    if node.rendering.mode != "never":  # one line saying what to install, before anything
        require_rendering(node.rendering.browser)
    held = held or ExitStack()
    try:
        store = held.enter_context(shared_store(config.store_url))
        run = _begin(store, node, stop or threading.Event())
    except BaseException:
        held.close()
        raise
    result: Future[RunSummary] = Future()
    own = ExitStack()  # the run's own checking pool and progress bar

    def end(error: BaseException | None) -> None:
        try:
            own.close()
        except Exception as exc:
            error = error or exc
        failed = _finish(run, error)
        held.close()
        if failed is None:
            result.set_result(run.summary)
        else:
            result.set_exception(failed)

    try:
        if not _prepare(run, progress, enqueue_only):
            end(None)
            return result
        _drain(run, own, progress, processes, checks).add_done_callback(
            lambda done: end(done.exception())
        )
    except Exception as exc:  # not handed over: nobody else will end the run
        end(exc)
    return result


# runs whose end the store missed (it had gone away), by (store URL, run id)
_MISSED_ENDS: dict[tuple[str, int], RunSummary] = {}
_MISSED_LOCK = threading.Lock()


def _write_end(store: Store, summary: RunSummary) -> dict[str, Any]:
    return store.finish_run(
        summary.run_id, summary.status, summary.as_dict(), summary.message, counted=PAGE_COUNTS
    )


def _write_missed_ends(store: Store) -> None:
    """The runs of this process that ended while the store was away: recorded as they
    ended (failed), their claims released, so no run stays "running" and no page waits
    for a lease to run out in a process that is still alive."""
    with _MISSED_LOCK:
        missed = [(key, s) for key, s in _MISSED_ENDS.items() if key[0] == store.url]
    for key, summary in missed:
        _write_end(store, summary)
        claims.release_claims(store, summary.node_id, claims.owner_id(summary.run_id))
        with _MISSED_LOCK:
            _MISSED_ENDS.pop(key, None)
        log.info("%s: run %d recorded as %s", summary.node_id, summary.run_id, summary.status)


def _begin(store: Store, node: NodeSettings, stop: threading.Event) -> Run:
    """The run's row in the store, its policy applied and its fetcher."""
    _write_missed_ends(store)
    summary = RunSummary(node.id, started_at=datetime.now(UTC).isoformat(timespec="seconds"))
    summary.notices = placeholder_notices(node)
    store.close_dead_runs(node.id, claims.dead_local_owner)
    summary.run_id = store.start_run(node.id, claims.owner_id())
    owner = claims.owner_id(summary.run_id)
    fetcher, robots = node_fetcher(store, node, owner)
    run = Run(store, node, stop, summary, owner, fetcher, robots=robots)  # default options
    try:
        summary.policy_updates = _apply_policy(store, node)
    except Exception as exc:
        _finish(run, exc)
        raise
    return run


def _prepare(run: Run, progress: bool, enqueue_only: bool) -> bool:
    """Discover, archive what went missing, mark pages due; whether to process them now."""
    store, node, summary, stop = run.store, run.node, run.summary, run.stop
    previous_seen = store.previous_pages_seen(node.id)
    complete, first_error, whole = _discover_into(run, progress)
    # pages are fetched by fetchers of their own: discovery's keep-alive connection
    # would idle, open at the host and held here, for the rest of the run
    run.fetcher.close()
    codes = summary.discovery_findings
    why = start_failure(summary.pages_seen, codes, first_error, previous_seen)
    if why is not None and not stop.is_set():
        summary.discovery_findings = dict(sorted({**codes, START_FAILED.code: 1}.items()))
        summary.status, summary.message = "failed", f"could not reach the node's start: {why}"
        return False
    if not stop.is_set():
        _settle_graphs(run, whole)
    if complete and not stop.is_set():
        threshold = node.sync.archive_after_missing_runs
        missing = fr.count_missing(store, node.id, summary.run_id, threshold)
        for archived in archive_left(store, node.id, missing):
            summary.archived += archived
    if not stop.is_set() and node.dataone.resource_maps:
        for created in publish_missing_packages(store, defaults_for(node)):
            summary.new_objects += created
    fr.mark_stale_due(store, node.id, timedelta(hours=node.sync.recheck_after_hours))
    claims.release_stale_claims(store, node.id)
    summary.due = due_count(store, node.id)
    store.note_run(summary.run_id, {"pages_seen": summary.pages_seen, "due": summary.due})
    return not (enqueue_only or node.sync.enqueue_only)


def _drain(
    run: Run, held: ExitStack, progress: bool, processes: int | None, checks: CheckPool | None
) -> Future[int]:
    """The due pages in the loop, checked in `checks` (the pool of the nodes side by side),
    else in a pool of the run's own when its rate can feed more than one core."""
    wanted, ahead = processes or choose_processes(run.node, run.summary.due), 0
    if checks is None and wanted > 1 and not run.stop.is_set():
        log.info("%s: %d due pages in %d processes", run.node.id, run.summary.due, wanted)
        checks = held.enter_context(shared_checks(run.store.url, wanted))
        ahead = checks.room if checks is not None else 0
    run.options = replace(run.options, checks=checks, ahead=ahead)
    bar = _bar(run.node.id, run.summary.due) if progress else None
    if bar is not None:
        held.callback(bar.close)

        def counted(out: PageOutcome) -> None:
            run.summary.add(out)
            bar.update(1)

        run.on_outcome = counted
    return drive(run)


def _finish(run: Run, error: BaseException | None) -> BaseException | None:
    """Close the run's fetcher and its row in the store, with the counts pages added;
    the error that failed the run, if any."""
    summary = run.summary
    if error is not None:
        summary.status, summary.message = "failed", f"{type(error).__name__}: {error}"
    elif summary.status != "failed":
        summary.status = "interrupted" if run.stop.is_set() else "ok"
    run.close()
    summary.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        written = _write_end(run.store, summary)
    except StoreError as exc:  # written at the next run's start, its claims released then
        with _MISSED_LOCK:
            _MISSED_ENDS[run.store.url, summary.run_id] = summary
        return error or exc
    for key in PAGE_COUNTS:  # workers may have added pages to this run meanwhile
        setattr(summary, key, written.get(key, getattr(summary, key)))
    return error


def _apply_policy(store: Store, node: NodeSettings) -> int:
    """A changed access, replication or rightsHolder policy (what of the node's configuration
    its system metadata carries, submitter aside): every live record updated."""
    d1 = node.dataone
    policy = {
        "access_policy": [rule.model_dump(mode="json") for rule in d1.access_policy],
        "replication": d1.replication.model_dump(mode="json"),
        "rights_holder": d1.rights_holder,
    }
    with store.write() as conn:
        return apply_policy(conn, node.id, json.dumps(policy, sort_keys=True), d1.rights_holder)


def _discover_into(run: Run, progress: bool) -> tuple[bool, str | None, list[GraphRead]]:
    """Upsert every entry discovery yields (the node's scope applied by `discover`).

    Returns (discovery finished without errors, the first error's message, the sitegraphs
    read whole: their Datasets in the store, their leavers not archived yet).
    """
    store, node, summary, stop = run.store, run.node, run.summary, run.stop
    codes: Counter[str] = Counter()
    errors, first_error = 0, None
    bar = _bar(node.id) if progress else None
    graphs = node.start.sitegraph_urls
    states = graph_states(store, node.id) if graphs else {}
    reads: list[GraphRead] = []

    def entries() -> Iterator[SitemapEntry]:
        nonlocal errors, first_error
        scope, limits = node.scope, node.limits()
        for item in chain(
            discover(
                node.start.urls(), run.fetcher, limits=limits, robots=run.robots,
                allowed_hosts=scope.allowed_hosts, include=scope.include_patterns,
                exclude=scope.exclude_patterns,
            ),
            discover_sitegraphs(
                graphs, run.fetcher, limits=limits, states=states,
                include=scope.include_patterns, exclude=scope.exclude_patterns,
            ),
        ):  # fmt: skip
            if stop.is_set():
                return
            if isinstance(item, GraphRead):
                reads.append(item)  # kept once the entries before it are in the store
            elif isinstance(item, Finding):
                codes[item.code] += 1
                if item.severity is Severity.ERROR:
                    errors += 1
                    first_error = first_error or item.message
                if bar is not None and item.code == SITEMAP_READ.code:
                    bar.set_postfix_str(f"{codes[SITEMAP_READ.code]} sitemaps", refresh=False)
            else:
                if bar is not None:
                    bar.update()
                yield item

    try:
        summary.pages_seen = fr.upsert_entries(store, node.id, summary.run_id, entries())
    finally:
        if bar is not None:
            bar.close()
    if not stop.is_set():  # an unchanged graph's pages are listed as they were
        for read in (r for r in reads if r.unchanged):
            summary.pages_seen += seen_again(store, node.id, summary.run_id, read.url)
            if read.state is not None:
                keep_state(store, node.id, read.url, read.state)
    complete = errors == 0 and not stop.is_set()
    if not complete and not stop.is_set():
        codes[DISCOVERY_INCOMPLETE.code] += 1
    summary.discovery_findings = dict(sorted(codes.items()))
    whole = [r for r in reads if r.whole]
    return complete and summary.pages_seen > 0, first_error, whole


def _settle_graphs(run: Run, reads: list[GraphRead]) -> None:
    """Once the run has reached its start: each graph read whole archives the Datasets it
    no longer lists, as pages that went away, and only then keeps its validators (a graph
    whose leavers were not archived is read whole again, not answered 304)."""
    store, node, summary = run.store, run.node, run.summary
    for read in reads:
        with store.read() as conn:
            left = left_graph(conn, node.id, summary.run_id, read.url)
        for archived in archive_left(store, node.id, left):
            summary.archived += archived
        if read.state is not None:
            keep_state(store, node.id, read.url, read.state)


def _bar(node_id: str, total: int | None = None) -> Any:
    """Pages done (or, without a total, listed by discovery) on a terminal; else None."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    desc = node_id if total is not None else f"{node_id} discovery"
    return tqdm(total=total, desc=desc, unit="page", file=sys.stderr, leave=False)
