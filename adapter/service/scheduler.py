"""APScheduler 3.x wiring: one job per node, never two runs of one node at once.

Each node's schedule (cron or interval, with jitter) becomes a job with
`max_instances=1` (a run still going when the next is due makes that one
skipped, and logged), `coalesce=True` (runs missed while the process was
busy or asleep collapse into one) and the node's misfire grace time. The job
runs the same sync entry point as `adapter sync` (`adapter.sync.run.start_node`)
with a shared stop event, so a shutdown lets pages in flight finish and starts
no new ones. Signals and the process loop live in `adapter.service.daemon`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from adapter.config.crontab import cron_trigger
from adapter.config.settings import AdapterConfig, NodeSettings, ScheduleSettings, pool_size
from adapter.errors import AdapterError

log = logging.getLogger("adapter.service.scheduler")
# APScheduler's own loggers for the notices `NodeScheduler._on_event` logs itself
APSCHEDULER_LOGGERS = ("apscheduler.scheduler", "apscheduler.executors.default")


class RelogFilter(logging.Filter):
    """Drops APScheduler's own lines for a skipped or missed run: the scheduler logs each
    as a structured `run-skipped` / `run-missed` line, and one notice is one line (under
    load the duplicate, without an `event`, read as a second, unnamed fault)."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return not ("maximum number of running instances" in text or "was missed by" in text)


def _quiet_apscheduler_duplicates() -> None:
    for name in APSCHEDULER_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RelogFilter) for f in logger.filters):
            logger.addFilter(RelogFilter())


class RunJob(Protocol):
    """The sync entry point: `run_node` below, or a stand-in in tests."""

    def __call__(
        self, config: AdapterConfig, node: NodeSettings, *, stop: threading.Event
    ) -> Any: ...


def run_node(config: AdapterConfig, node: NodeSettings, *, stop: threading.Event) -> Any:
    """The scheduler's job: one sync run of the node (`adapter.sync.run.start_node`). Its
    pages go to the process's loop and the job returns a future of the summary, so the
    job's thread is free for the next start; among several nodes they are checked in the
    process's shared pool while other runs are going (the pool ends with the last)."""
    # lazy: `adapter status` and `config check` read schedules from this module, and
    # every command module loads for `adapter --help`; neither needs the sync stack
    from adapter.sync.checkpool import shared_checks
    from adapter.sync.run import start_node

    held = ExitStack()
    checks = held.enter_context(shared_checks(config.store_url, pool_size(config, config.nodes)))
    return start_node(config, node, stop=stop, checks=checks, held=held)


def build_trigger(schedule: ScheduleSettings, *, jitter: bool = True) -> BaseTrigger:
    spread = schedule.jitter_seconds if jitter and schedule.jitter_seconds else None
    if schedule.cron is not None:
        return cron_trigger(schedule.cron, schedule.timezone, spread)
    assert schedule.interval_minutes is not None  # one of the two, by validation
    return IntervalTrigger(
        seconds=schedule.interval_minutes * 60, timezone=schedule.timezone, jitter=spread
    )


def next_fire(schedule: ScheduleSettings, now: datetime | None = None) -> datetime:
    """When a schedule next fires after `now` (jitter not applied).

    An interval counts from `now`, as it does from the scheduler's start.
    """
    now = now or datetime.now(UTC)
    if schedule.interval_minutes is not None:
        return now + timedelta(minutes=schedule.interval_minutes)
    fire: datetime | None = build_trigger(schedule, jitter=False).get_next_fire_time(None, now)
    assert fire is not None  # a valid crontab always fires again
    return fire


# the RunSummary counts, in the order an operator reads them; others follow
COUNT_ORDER = (
    "pages_seen",
    "due",
    "fetched",
    "not_modified",
    "unchanged",
    "new_objects",
    "new_versions",
    "archived",
    "gone",
    "errors",
)
NOT_COUNTS = frozenset({"run_id", "duration_s"})


def run_counts(summary: dict[str, Any]) -> dict[str, int]:
    """The whole-number counts of a run summary (ids and times left out), in reading order."""
    counts = {
        k: v
        for k, v in summary.items()
        if isinstance(v, int) and not isinstance(v, bool) and k not in NOT_COUNTS
    }
    ordered = {k: counts.pop(k) for k in COUNT_ORDER if k in counts}
    return {**ordered, **counts}


def summary_counts(summary: Any) -> dict[str, Any]:
    """What the run-end log line carries: status, counts, error codes (from `as_dict()`)."""
    as_dict: Callable[[], dict[str, Any]] | None = getattr(summary, "as_dict", None)
    values = as_dict() if as_dict is not None else {}
    out: dict[str, Any] = {"status": values["status"]} if "status" in values else {}
    out.update(run_counts(values))
    if values.get("error_codes"):
        out["error_codes"] = values["error_codes"]
    return out


class NodeScheduler:
    """The jobs of one configuration, swapped in place on reload.

    A job may return its summary or a future of it (`run_node`: always a future),
    so a run lasts until that future is done: a node's next run is skipped until then
    (APScheduler's `max_instances` sees only the job's call), and at most
    `nodes_at_once` runs are going, their starts (discovery) `discoveries_at_once` at once.
    """

    def __init__(self, config: AdapterConfig, job: RunJob = run_node) -> None:
        self.config = config
        self.job = job
        self.stop = threading.Event()
        self._running: dict[str, float] = {}
        self._ending: set[Future[Any]] = set()
        self._lock = threading.Lock()
        self._going = threading.BoundedSemaphore(config.nodes_at_once())
        self._scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(config.discoveries_at_once())}, timezone=UTC
        )
        self._scheduler.add_listener(self._on_event, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)
        _quiet_apscheduler_duplicates()

    # -- lifecycle ---------------------------------------------------------------------

    def start(self, *, run_now: bool = False) -> None:
        for node in self.config.nodes:
            self._add(node, run_now=run_now)
        self._scheduler.start()

    def shutdown(self) -> None:
        """Start no new run, tell running ones to stop, wait for them to finish."""
        self.stop.set()
        for job in self._scheduler.get_jobs():
            job.remove()
        self._scheduler.shutdown(wait=True)
        with self._lock:
            ending = list(self._ending)
        wait(ending)

    def reload(self, config: AdapterConfig) -> list[str]:
        """Apply a new configuration; what changed, in words for the log."""
        old = {node.id: node for node in self.config.nodes}
        changes = (
            ["store_url changed (from the next runs)"]
            if (config.store_url != self.config.store_url)
            else []
        )
        self.config = config  # runs read the current config when they start
        for node in config.nodes:
            before = old.pop(node.id, None)
            if before is None:
                self._add(node)
                changes.append(f"{node.id} added")
            elif before.schedule != node.schedule:
                self._add(node)
                changes.append(f"{node.id} rescheduled: {node.schedule.describe()}")
            elif before != node:
                changes.append(f"{node.id} changed (from its next run)")
        for node_id in old:
            if self._scheduler.get_job(node_id) is not None:
                self._scheduler.remove_job(node_id)
            changes.append(f"{node_id} removed (a run in progress finishes)")
        return changes

    # -- state -------------------------------------------------------------------------

    def next_runs(self) -> dict[str, datetime | None]:
        return {job.id: job.next_run_time for job in self._scheduler.get_jobs()}

    def running(self) -> list[str]:
        with self._lock:
            return sorted(self._running)

    # -- jobs --------------------------------------------------------------------------

    def _add(self, node: NodeSettings, *, run_now: bool = False) -> None:
        options: dict[str, Any] = {"next_run_time": datetime.now(UTC)} if run_now else {}
        self._scheduler.add_job(
            self._run,
            build_trigger(node.schedule),
            args=[node.id],
            id=node.id,
            name=node.name,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=node.schedule.misfire_grace_seconds,
            replace_existing=True,
            **options,
        )

    def _run(self, node_id: str) -> None:
        config = self.config
        node = next((n for n in config.nodes if n.id == node_id), None)
        if node is None or self.stop.is_set():
            return
        with self._lock:
            if node.id in self._running:  # its previous run's pages are still going
                self._skipped(node.id)
                return
            self._running[node.id] = time.monotonic()
        self._going.acquire()
        log.info("run started: %s", node.id, extra={"event": "run-start", "node": node.id})
        started = time.monotonic()
        try:
            outcome = self.job(config, node, stop=self.stop)
        except Exception as exc:
            self._ended(node.id, started, None, exc)
            return
        if not isinstance(outcome, Future):
            self._ended(node.id, started, outcome, None)
            return
        # what shutdown waits for: the run's end recorded, not only its future done (a
        # future's waiters wake before its callbacks run, so the run-end line came late)
        recorded: Future[None] = Future()
        with self._lock:
            self._ending.add(recorded)

        def done(future: Future[Any]) -> None:
            error = future.exception()
            try:
                self._ended(node.id, started, None if error else future.result(), error)
            finally:
                with self._lock:
                    self._ending.discard(recorded)
                recorded.set_result(None)

        outcome.add_done_callback(done)

    def _ended(
        self, node_id: str, started: float, summary: Any, error: BaseException | None
    ) -> None:
        """The run-end (or run-failed) log line; the node free for its next run."""
        with self._lock:
            self._running.pop(node_id, None)
        self._going.release()
        seconds = round(time.monotonic() - started, 3)
        base = {"node": node_id, "seconds": seconds}
        if error is not None:
            log.error(
                "run failed: %s: %s",
                node_id,
                error,
                exc_info=error if not isinstance(error, AdapterError) else None,
                extra={"event": "run-failed", **base},
            )
            return
        counts = summary_counts(summary)
        stopped = " (stopped early)" if self.stop.is_set() else ""
        extra = {"event": "run-end", **base, "counts": counts}
        log.info("run finished: %s in %.1f s%s", node_id, seconds, stopped, extra=extra)

    def _skipped(self, node_id: str) -> None:
        log.warning(
            "run of %s skipped: its previous run is still going",
            node_id,
            extra={"event": "run-skipped", "node": node_id},
        )

    def _on_event(self, event: JobEvent) -> None:
        if event.code == EVENT_JOB_MAX_INSTANCES:
            self._skipped(event.job_id)
        elif event.code == EVENT_JOB_MISSED:
            log.warning(
                "run of %s missed: the process was busy or asleep past the misfire grace time",
                event.job_id,
                extra={"event": "run-missed", "node": event.job_id},
            )
