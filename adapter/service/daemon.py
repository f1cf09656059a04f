"""The `adapter schedule` process: signals, reloads and a clean stop.

SIGTERM and SIGINT stop it: no run starts, running syncs see the stop event
and start no new page, pages in flight finish and are committed, then the
process exits 0. SIGHUP re-reads the configuration file: a file with problems
is logged and the running configuration kept; otherwise jobs of changed nodes
are rescheduled. Signal handlers only queue the signal; the main thread acts.
"""

from __future__ import annotations

import logging
import queue
import signal
from pathlib import Path

from adapter.config.load import load_config
from adapter.config.settings import AdapterConfig
from adapter.errors import ConfigError
from adapter.service.logsetup import LogFormat, configure
from adapter.service.metrics import Metrics, OpsApp, serve_in_background
from adapter.service.scheduler import NodeScheduler, RunJob, run_node
from adapter.signals import STOP_SIGNALS, inbox, on_signals
from adapter.store.db import Store

log = logging.getLogger("adapter.service.scheduler")


def run_scheduler(
    path: Path,
    *,
    log_format: LogFormat | None = None,
    job: RunJob = run_node,
    run_now: bool = False,
    metrics_at: tuple[str, int] | None = None,
) -> int:
    """Run until SIGTERM/SIGINT; the exit status (0 after SIGTERM, 130 after Ctrl-C).

    `metrics_at` (host, port): serve /metrics, /healthz and /readyz there while running.
    """
    config = load_config(path)  # a ConfigError here ends the command with exit 2
    configure(log_format or config.log_format, config.log_level)
    if metrics_at is None:
        return _signalled(config, path, job, run_now, log_format)
    metrics = Metrics()
    store = Store.open(config.store_url)
    metrics.collect_store(store)
    server = serve_in_background(OpsApp(metrics, store), *metrics_at)
    try:
        return _signalled(config, path, metrics.observe_job(job), run_now, log_format)
    finally:
        server.shutdown()
        server.server_close()
        store.close()


def _signalled(
    config: AdapterConfig, path: Path, job: RunJob, run_now: bool, log_format: LogFormat | None
) -> int:
    signals = inbox()
    with on_signals(signals.put, (*STOP_SIGNALS, signal.SIGHUP)):
        return _run(config, path, job, run_now, signals, log_format)


def _run(
    config: AdapterConfig,
    path: Path,
    job: RunJob,
    run_now: bool,
    signals: queue.SimpleQueue[int],
    log_format: LogFormat | None,
) -> int:
    scheduler = NodeScheduler(config, job)
    scheduler.start(run_now=run_now)
    log.info(
        "scheduler started: %d node(s) from %s",
        len(config.nodes),
        path,
        extra={"event": "scheduler-start", "nodes": len(config.nodes)},
    )
    _log_next_runs(scheduler)
    stop_signal = _serve(scheduler, path, signals, log_format)
    running = scheduler.running()
    log.info(
        "stopping on %s: %d run(s) finishing the pages in flight",
        signal.Signals(stop_signal).name,
        len(running),
        extra={"event": "scheduler-stopping", "running": running},
    )
    scheduler.shutdown()
    log.info("scheduler stopped", extra={"event": "scheduler-stop"})
    return 130 if stop_signal == signal.SIGINT else 0  # Ctrl-C exits 130, as everywhere


def _serve(
    scheduler: NodeScheduler,
    path: Path,
    signals: queue.SimpleQueue[int],
    log_format: LogFormat | None,
) -> int:
    """Wait for signals, reloading on SIGHUP; the stop signal that ended it."""
    while True:
        try:
            received = signals.get(timeout=1.0)
        except queue.Empty:
            continue
        if received != signal.SIGHUP:
            return received
        if _reload(scheduler, path):  # log_level and log_format follow the file too
            configure(log_format or scheduler.config.log_format, scheduler.config.log_level)


def _reload(scheduler: NodeScheduler, path: Path) -> bool:
    """Re-read the file; True when the new configuration replaced the running one."""
    try:
        config = load_config(path)
    except ConfigError as exc:
        for line in str(exc).splitlines():
            log.error(line, extra={"event": "reload-failed"})
        log.error(
            "configuration not reloaded: keeping the running one",
            extra={"event": "reload-failed"},
        )
        return False
    changes = scheduler.reload(config)
    log.info(
        "configuration reloaded: %s",
        "; ".join(changes) or "no changes",
        extra={"event": "reloaded", "changes": len(changes)},
    )
    _log_next_runs(scheduler)
    return True


def _log_next_runs(scheduler: NodeScheduler) -> None:
    for node_id, when in sorted(scheduler.next_runs().items()):
        text = when.isoformat(timespec="seconds") if when else "paused"
        log.info("next run of %s: %s", node_id, text, extra={"event": "next-run", "node": node_id})
