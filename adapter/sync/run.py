"""The sync run of one member node: discover -> upsert the frontier -> process due pages.

Each page commits on its own (adapter.sync.page), so a crash loses at most the
pages in flight and a rerun picks up the pages still due. Pages leave the
node by a 404/410 (archived when processed) or by missing from a complete
discovery `archive_after_missing_runs` times in a row; a discovery that hit
errors (a sitemap that failed) does not count anyone as missing.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from adapter.config.load import PLACEHOLDER_SUBJECTS, placeholder_subjects
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.dataone.records import DUPLICATE_DOI
from adapter.discovery.findings import SITEMAP_READ
from adapter.discovery.robots import UNREACHABLE as ROBOTS_UNREACHABLE
from adapter.discovery.walk import discover
from adapter.findings import Finding, FindingType, Severity
from adapter.http.fetcher import Fetcher
from adapter.models import SitemapEntry
from adapter.store import claims
from adapter.store import frontier as fr
from adapter.store.db import Store, shared_store
from adapter.store.frontier import due_count
from adapter.store.history import add_to_run
from adapter.store.ledger import archive_page, pages_without_packages, refresh_packages
from adapter.store.policy import apply_policy
from adapter.sync.checkpool import CheckPool
from adapter.sync.drains import drain_side_by_side
from adapter.sync.fetchers import node_fetcher
from adapter.sync.outcome import PAGE_COUNTS, RunSummary
from adapter.sync.pool import process_due
from adapter.sync.worker import WorkOptions
from adapter.sync.write import defaults_for

CLAIM_BATCH = 20
LEASE = timedelta(minutes=10)

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


def start_failure(
    pages_seen: int, codes: dict[str, int], first_error: str | None, previous_seen: int
) -> str | None:
    """Why a discovery that listed `pages_seen` pages did not reach the node, or None.

    A node that lists nothing is fine when its sitemaps were read and were empty
    the last time too; not when nothing could be read, or the pages vanished.
    """
    if pages_seen:
        return None
    because = f" ({first_error})" if first_error else ""
    if codes.get(ROBOTS_UNREACHABLE.code):
        return first_error or "robots.txt could not be fetched"
    if not codes.get(SITEMAP_READ.code) and any(
        code.startswith(("discover/", "fetch/", "sitemap/")) for code in codes
    ):
        return f"no sitemap could be read{because}"
    if previous_seen:
        return f"discovery listed no page, the previous run listed {previous_seen}"
    return None


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
    checks: CheckPool | None = None,
) -> RunSummary:
    """One sync run of `node` into `config.store_url`; the summary is also stored.

    `enqueue_only` (or the node's `sync.enqueue_only`): discover and mark pages
    due, leave them to `adapter worker`s.
    `processes`: how many processes check pages (default: as many as pay, see
    `adapter.sync.pool.choose_processes`).
    `checks`: the checking pool of the nodes run side by side with this one.
    """
    with shared_store(config.store_url) as store:  # one engine for every node run at once
        return run_with_store(
            store,
            node,
            stop=stop,
            progress=progress,
            enqueue_only=enqueue_only,
            processes=processes,
            checks=checks,
        )


def start_node(
    config: AdapterConfig,
    node: NodeSettings,
    *,
    stop: threading.Event,
    progress: bool = False,
    enqueue_only: bool = False,
    processes: int | None = None,
    checks: CheckPool | None = None,
    held: ExitStack | None = None,
) -> RunSummary | Future[RunSummary]:
    """`run_node` side by side with other nodes: `start_run` into the process's store engine,
    which (with `held`) is kept until the run ends. `processes` asks for a pool of the
    node's own: that run is `run_node`, in this thread, and its summary is returned."""
    if processes:
        with held or ExitStack():
            return run_node(
                config, node, stop=stop, progress=progress, enqueue_only=enqueue_only,
                processes=processes, checks=checks,
            )  # fmt: skip
    held = held or ExitStack()
    try:
        store = held.enter_context(shared_store(config.store_url))
        future = start_run(store, node, stop=stop, checks=checks, enqueue_only=enqueue_only)
    except BaseException:
        held.close()
        raise
    future.add_done_callback(lambda _future: held.close())
    return future


def run_with_store(
    store: Store,
    node: NodeSettings,
    *,
    stop: threading.Event | None = None,
    progress: bool = False,
    enqueue_only: bool = False,
    processes: int | None = None,
    checks: CheckPool | None = None,
) -> RunSummary:
    run = _begin(store, node, stop or threading.Event())
    try:
        if _prepare(run, progress, enqueue_only):
            _process_due(run, progress, processes, checks)
        _set_status(run)
    except Exception as exc:
        run.summary.status, run.summary.message = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        _finish(run)
    return run.summary


def start_run(
    store: Store,
    node: NodeSettings,
    *,
    stop: threading.Event,
    checks: CheckPool | None,
    enqueue_only: bool = False,
) -> Future[RunSummary]:
    """A run side by side with others: its discovery in this thread, its pages in the
    process's drain loop (`adapter.sync.drains`), so no thread waits on the node's pace
    meanwhile. The future holds the summary, or the error that failed the run."""
    result: Future[RunSummary] = Future()
    run = _begin(store, node, stop)

    def end(error: BaseException | None) -> None:
        if error is None:
            _set_status(run)
        else:
            run.summary.status = "failed"
            run.summary.message = f"{type(error).__name__}: {error}"
        try:
            _finish(run)
        except Exception as exc:
            error = error or exc
        if error is None:
            result.set_result(run.summary)
        else:
            result.set_exception(error)

    try:
        wanted = _prepare(run, False, enqueue_only)
    except Exception as exc:
        end(exc)
        return result
    if not wanted:
        end(None)
        return result
    options = WorkOptions(batch=CLAIM_BATCH, lease=LEASE, checks=checks)
    try:
        drain_side_by_side(store, node, run.fetcher, run.owner, stop, options, run.summary.add, end)
    except Exception as exc:  # not handed over: nobody else will end the run
        end(exc)
    return result


@dataclass(slots=True)
class _Run:
    """A node's run between its phases."""

    store: Store
    node: NodeSettings
    stop: threading.Event
    summary: RunSummary
    owner: str
    fetcher: Fetcher
    robots: Any
    began: float


def _begin(store: Store, node: NodeSettings, stop: threading.Event) -> _Run:
    """The run's row in the store, its policy applied and its fetcher."""
    began = time.monotonic()
    summary = RunSummary(node.id, started_at=datetime.now(UTC).isoformat(timespec="seconds"))
    summary.notices = placeholder_notices(node)
    store.close_dead_runs(node.id, claims.dead_local_owner)
    summary.run_id = store.start_run(node.id, claims.owner_id())
    owner = claims.owner_id(summary.run_id)
    run = _Run(store, node, stop, summary, owner, *node_fetcher(store, node, owner), began)
    try:
        summary.policy_updates = _apply_policy(store, node)
    except Exception as exc:
        summary.status, summary.message = "failed", f"{type(exc).__name__}: {exc}"
        _finish(run)
        raise
    return run


def _prepare(run: _Run, progress: bool, enqueue_only: bool) -> bool:
    """Discover, archive what went missing, mark pages due; whether to process them now."""
    store, node, summary, stop = run.store, run.node, run.summary, run.stop
    previous_seen = _previous_pages_seen(store, node.id)
    complete, first_error = _discover_into(
        store, node, run.fetcher, run.robots, summary, stop, progress
    )
    # pages are fetched by fetchers of their own: discovery's keep-alive connection
    # would idle, open at the host and held here, for the rest of the run
    run.fetcher.close()
    failure = None if stop.is_set() else _start_failure(summary, first_error, previous_seen)
    if failure:
        summary.status, summary.message = "failed", failure
        return False
    if complete and not stop.is_set():
        _archive_missing(store, node, summary)
    if not stop.is_set() and node.dataone.resource_maps:
        _publish_missing_packages(store, node, summary)
    fr.mark_stale_due(store, node.id, timedelta(hours=node.sync.recheck_after_hours))
    claims.release_stale_claims(store, node.id)
    summary.due = due_count(store, node.id)
    store.note_run(summary.run_id, {"pages_seen": summary.pages_seen, "due": summary.due})
    return not (enqueue_only or node.sync.enqueue_only)


def _set_status(run: _Run) -> None:
    if run.summary.status != "failed":
        run.summary.status = "interrupted" if run.stop.is_set() else "ok"


def _finish(run: _Run) -> None:
    """Close the run's fetcher and its row in the store, with the counts workers added."""
    summary = run.summary
    run.fetcher.close()
    run.fetcher.pacer.close()  # type: ignore[attr-defined]
    summary.duration_s = round(time.monotonic() - run.began, 3)
    summary.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    written = run.store.finish_run(
        summary.run_id,
        summary.status,
        summary.as_dict(),
        summary.message,
        counted=PAGE_COUNTS,
    )
    for key in PAGE_COUNTS:  # workers may have added pages to this run meanwhile
        setattr(summary, key, written.get(key, getattr(summary, key)))


def policy_json(node: NodeSettings) -> str:
    """What of the node's configuration its system metadata carries (submitter aside)."""
    d1 = node.dataone
    return json.dumps(
        {
            "access_policy": [rule.model_dump(mode="json") for rule in d1.access_policy],
            "replication": d1.replication.model_dump(mode="json"),
            "rights_holder": d1.rights_holder,
        },
        sort_keys=True,
    )


def _apply_policy(store: Store, node: NodeSettings) -> int:
    """A changed access, replication or rightsHolder policy: every live record updated."""
    with store.write() as conn:
        return apply_policy(conn, node.id, policy_json(node), node.dataone.rights_holder)


def placeholder_notices(node: NodeSettings) -> list[str]:
    """A line for the run summary when the node's records carry placeholder subjects.

    Quick mode (`adapter sync URL`) names no person: its submitter and rightsHolder
    are `PLACEHOLDER_SUBJECTS`. Every run says so, since what it writes carries them."""
    names = {"submitter": "submitter", "rights_holder": "rightsHolder"}
    held = [names[key] for key in placeholder_subjects(node) if key in names]
    if not held:
        return []
    values = ", ".join(PLACEHOLDER_SUBJECTS[k] for k in names if names[k] in held)
    settings = " and ".join(f"dataone.{k}" for k in names if names[k] in held)
    plural = "s" if len(held) > 1 else ""
    notice = (
        f"this node publishes placeholder {' and '.join(held)} subject{plural} ({values}); "
        f"set real ones with {settings} in a configuration file (`adapter sync --config FILE`)"
    )
    if "submitter" in held:  # DataONE never changes a published object's submitter
        notice += "; objects already published keep their submitter"
    return [notice]


def _previous_pages_seen(store: Store, node_id: str) -> int:
    """How many pages the node's newest finished run listed (0 without one)."""
    for run in store.runs(node_id, limit=5):
        if run.status != "running" and "pages_seen" in run.summary:
            return int(run.summary["pages_seen"])
    return 0


def _start_failure(summary: RunSummary, first_error: str | None, previous_seen: int) -> str | None:
    why = start_failure(summary.pages_seen, summary.discovery_findings, first_error, previous_seen)
    if why is None:
        return None
    codes = summary.discovery_findings
    summary.discovery_findings = dict(sorted({**codes, START_FAILED.code: 1}.items()))
    return f"could not reach the node's start: {why}"


def _discover_into(
    store: Store,
    node: NodeSettings,
    fetcher: Fetcher,
    robots: Any,
    summary: RunSummary,
    stop: threading.Event,
    progress: bool = False,
) -> tuple[bool, str | None]:
    """Upsert every entry discovery yields.

    Returns (discovery finished without errors, the first error's message).
    """
    codes: Counter[str] = Counter()
    errors = 0
    first_error: str | None = None
    bar = _discovery_bar(node.id) if progress else None

    def entries() -> Iterator[SitemapEntry]:
        nonlocal errors, first_error
        for item in _discover(node, fetcher, robots):
            if stop.is_set():
                return
            if isinstance(item, Finding):
                codes[item.code] += 1
                if item.severity is Severity.ERROR:
                    errors += 1
                    first_error = first_error or item.message
                if bar is not None and item.code == SITEMAP_READ.code:
                    bar.set_postfix_str(f"{codes[SITEMAP_READ.code]} sitemaps", refresh=False)
            else:  # discover applied the node's scope (hosts, include, exclude)
                if bar is not None:
                    bar.update()
                yield item

    try:
        summary.pages_seen = fr.upsert_entries(store, node.id, summary.run_id, entries())
    finally:
        if bar is not None:
            bar.close()
    complete = errors == 0 and not stop.is_set()
    if not complete and not stop.is_set():
        codes[DISCOVERY_INCOMPLETE.code] += 1
    summary.discovery_findings = dict(sorted(codes.items()))
    return complete and summary.pages_seen > 0, first_error


def _archive_missing(store: Store, node: NodeSettings, summary: RunSummary) -> None:
    threshold = node.sync.archive_after_missing_runs
    for row in fr.count_missing(store, node.id, summary.run_id, threshold):
        with store.write() as conn:
            archived = len(archive_page(conn, node.id, row.url))
            fr.mark_removed(conn, row.id)
            # a page refused for one of its DOIs may take the series now
            fr.mark_due_with_finding(conn, node.id, DUPLICATE_DOI.code, row.url)
            add_to_run(conn, node.id, {"archived": archived})
        summary.archived += archived


PACKAGE_BATCH = 200  # pages per transaction when maps are published for an upgraded store


def _publish_missing_packages(store: Store, node: NodeSettings, summary: RunSummary) -> None:
    """Resource maps for the live Datasets that have none: a store written before maps
    existed gets them on its first run, as new objects; no other record changes."""
    defaults = defaults_for(node)
    after = ""
    while True:
        with store.write() as conn:
            pages = pages_without_packages(conn, node.id, after, PACKAGE_BATCH)
            if not pages:
                return
            created = sum(len(refresh_packages(conn, defaults, url).created) for url in pages)
            add_to_run(conn, node.id, {"new_objects": created})
        summary.new_objects += created
        after = pages[-1]


def _process_due(
    run: _Run, progress: bool, processes: int | None, checks: CheckPool | None
) -> None:
    """Threads per process, one Session each; processes when the node's rate can feed them."""
    summary = run.summary
    bar = _bar(summary.due, run.node.id) if progress else None
    options = WorkOptions(batch=CLAIM_BATCH, lease=LEASE, checks=checks)
    try:
        process_due(
            run.store,
            run.node,
            run.fetcher,
            run.owner,
            summary,
            run.stop,
            options,
            processes=processes,
            on_progress=bar.update if bar is not None else None,
        )
    finally:
        if bar is not None:
            bar.close()


def _discovery_bar(node_id: str) -> Any:
    """A counter of pages listed while discovery walks the sitemaps (a terminal only)."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(desc=f"{node_id} discovery", unit="page", file=sys.stderr, leave=False)


def _bar(total: int, node_id: str) -> Any:
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=node_id, unit="page", file=sys.stderr, leave=False)
