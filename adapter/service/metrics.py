"""Prometheus metrics and health checks: what an operator's monitoring scrapes.

`adapter serve` and `adapter schedule --metrics-port` expose `/metrics`
(Prometheus text format, every name prefixed `adapter_`), `/healthz` (the
process answers) and `/readyz` (the store answers and its schema is current).
Runs are counted from their `RunSummary` when they end, so the sync itself
carries no metrics code; Member Node requests are counted by a WSGI wrapper
around the API, labelled with the DataONE method the app routed them to.
Where the server runs in several processes, `PROMETHEUS_MULTIPROC_DIR` makes
every process write its samples there and a scrape merge them (prometheus_client's
multiprocess mode).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from datetime import UTC, datetime
from functools import partial
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from adapter.api.app import METHOD_KEY
from adapter.errors import StoreError
from adapter.http.tally import TALLY, FetchTally
from adapter.store import migrations
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.latency import WRITES, Latency
from adapter.store.notify import counts as notify_counts

log = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
RUN_BUCKETS = (1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600)


class Metrics:
    """The adapter's metrics in one registry (a fresh one per process, not the global)."""

    def __init__(self) -> None:
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        self.registry = CollectorRegistry()
        reg = None if self.multiprocess else self.registry
        self.pages = Counter(
            "adapter_pages",
            "Landing pages a sync fetched, by outcome.",
            ["node", "outcome"],
            registry=reg,
        )
        self.blocking = Counter(
            "adapter_findings",
            "Pages kept out (error codes), failed pages and discovery findings, by code.",
            ["node", "code"],
            registry=reg,
        )
        self.runs = Counter(
            "adapter_runs", "Sync runs that ended, by status.", ["node", "status"], registry=reg
        )
        self.run_seconds = Histogram(
            "adapter_run_duration_seconds",
            "How long sync runs took.",
            ["node"],
            buckets=RUN_BUCKETS,
            registry=reg,
        )
        self.last_success = Gauge(
            "adapter_last_success_timestamp_seconds",
            "When the node's last ok run ended.",
            ["node"],
            registry=reg,
            multiprocess_mode="max",
        )
        self.requests = Counter(
            "adapter_mn_requests",
            "Member Node API requests, by DataONE method and status.",
            ["method", "status"],
            registry=reg,
        )
        self.request_seconds = Histogram(
            "adapter_mn_request_duration_seconds",
            "Member Node API latency, by DataONE method.",
            ["method"],
            buckets=REQUEST_BUCKETS,
            registry=reg,
        )
        self.registry.register(_ProcessCollector(TALLY, WRITES))

    def collect_store(self, store: Store) -> None:
        """Add the store's own figures (queue depth) to every scrape."""
        self.registry.register(_StoreCollector(store))

    def observe_run(self, summary: Any) -> None:
        """Count one ended run from its RunSummary (`adapter.sync.outcome`)."""
        node = str(getattr(summary, "node_id", "?"))
        status = str(getattr(summary, "status", "unknown"))
        counts = summary.as_dict() if hasattr(summary, "as_dict") else {}
        for outcome, n in page_outcomes(counts).items():
            if n:
                self.pages.labels(node, outcome).inc(n)
        for key in ("not_harvestable", "error_codes", "discovery_findings"):
            for code, n in (counts.get(key) or {}).items():
                self.blocking.labels(node, code).inc(n)
        self.runs.labels(node, status).inc()
        self.run_seconds.labels(node).observe(float(counts.get("duration_s") or 0.0))
        if status == "ok":
            self.last_success.labels(node).set(time.time())

    def observe_job(self, job: Callable[..., Any]) -> Callable[..., Any]:
        """A scheduler job that counts the RunSummary each run returns."""

        def count(summary: Any) -> None:
            if summary is not None:
                try:
                    self.observe_run(summary)
                except Exception:  # a metrics fault must never fail a run
                    log.exception("could not count a run in the metrics")

        def counted(*args: Any, **kwargs: Any) -> Any:
            outcome = job(*args, **kwargs)
            if isinstance(outcome, Future):  # a run whose pages go on in the drain loop
                outcome.add_done_callback(
                    lambda f: count(f.result() if f.exception() is None else None)
                )
            else:
                count(outcome)
            return outcome

        return counted

    def exposition(self) -> bytes:
        if not self.multiprocess:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged)  # type: ignore[no-untyped-call]
        for collector in _own_collectors(self.registry):
            merged.register(collector)
        return generate_latest(merged)


def page_outcomes(counts: dict[str, Any]) -> dict[str, int]:
    """A run's fetched pages split by what became of them (the parts add up to `fetched`)."""
    parts = {
        "not-modified": int(counts.get("not_modified") or 0),
        "unchanged": int(counts.get("unchanged") or 0),
        "gone": int(counts.get("gone") or 0),
        "not-harvestable": int(counts.get("pages_not_harvestable") or 0),
        "error": int(counts.get("errors") or 0),
    }
    parts["written"] = max(0, int(counts.get("fetched") or 0) - sum(parts.values()))
    return parts


def _own_collectors(registry: CollectorRegistry) -> list[Collector]:
    own = (_StoreCollector, _ProcessCollector)
    return [c for c in list(registry._collector_to_names) if isinstance(c, own)]


class _ProcessCollector(Collector):
    """Fetch retries and failures by host, and store write latency, of this process.

    Read at scrape time from the tallies the HTTP and store layers keep, so
    neither imports Prometheus. With several server processes each scrape shows
    the answering process's own figures (the sync runs in the scheduler's process).
    """

    def __init__(self, tally: FetchTally, writes: Latency) -> None:
        self.tally = tally
        self.writes = writes

    def collect(self) -> Iterator[Metric]:
        retries, failures = self.tally.snapshot()
        retried = CounterMetricFamily(
            "adapter_fetch_retries",
            "Requests retried, by host and what was retried (an HTTP status or connection).",
            labels=["host", "reason"],
        )
        for (host, reason), n in sorted(retries.items()):
            retried.add_metric([host, reason], n)
        failed = CounterMetricFamily(
            "adapter_fetch_failures",
            "Fetches that failed (a finding code) or were answered 5xx, by host.",
            labels=["host", "code"],
        )
        for (host, code), n in sorted(failures.items()):
            failed.add_metric([host, code], n)
        latency = HistogramMetricFamily(
            "adapter_store_write_seconds",
            "How long store write transactions took, by database dialect.",
            labels=["dialect"],
        )
        for dialect, snap in sorted(self.writes.snapshot().items()):
            buckets = [(_bound(b), n) for b, n in snap.cumulative]
            latency.add_metric([dialect], buckets, snap.total_seconds)
        yield retried
        yield failed
        yield latency


def _bound(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(value)


class _StoreCollector(Collector):
    """Queue depth per node, read from the store at scrape time."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily(
            "adapter_queue_depth", "Outbox events not yet acknowledged, per node.", labels=["node"]
        )
        notify = GaugeMetricFamily(
            "adapter_notify_notifications",
            "COAR Notify notifications kept in the store, by direction (received, sent) and "
            "state (sent: pending, delivered, failed).",
            labels=["direction", "state"],
        )
        try:
            for node, n in pending_by_node(self.store).items():
                depth.add_metric([node], n)
            for direction, states in notify_counts(self.store).items():
                for state, n in states.items():
                    notify.add_metric([direction, state], n)
        except StoreError as exc:
            log.warning("metrics: the store did not answer: %s", exc)
        yield depth
        yield notify


def pending_by_node(store: Store) -> dict[str, int]:
    o = t.outbox
    with store.read() as conn:
        rows = conn.execute(
            select(o.c.node_id, func.count()).where(o.c.acked_at.is_(None)).group_by(o.c.node_id)
        ).all()
    return {str(node): int(n) for node, n in rows}


def readiness(store: Store | None) -> tuple[bool, str]:
    """Whether the store answers and its schema is the one this adapter writes."""
    if store is None:
        return True, "no store"
    try:
        version = store.version()
    except StoreError as exc:
        return False, f"store unreachable: {exc}"
    if version != migrations.LATEST:
        return (
            False,
            f"store schema {version}, this adapter needs {migrations.LATEST}: "
            "run `adapter db upgrade`",
        )
    return True, f"store schema {version}"


class OpsApp:
    """`/metrics`, `/healthz` and `/readyz` before an optional inner app (the Member Node API)."""

    def __init__(self, metrics: Metrics, store: Store | None, inner: WSGIApp | None = None) -> None:
        self.metrics = metrics
        self.store = store
        self.inner = inner

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        if path == "/metrics":
            return _reply(start_response, 200, self.metrics.exposition(), CONTENT_TYPE_LATEST)
        if path == "/healthz":
            return _reply(start_response, 200, b"ok\n")
        if path == "/readyz":
            ready, why = readiness(self.store)
            return _reply(start_response, 200 if ready else 503, why.encode() + b"\n")
        if self.inner is None:
            return _reply(start_response, 404, b"not found: /metrics, /healthz, /readyz\n")
        return self._timed(environ, start_response, self.inner)

    def _timed(
        self, environ: dict[str, Any], start_response: Callable[..., Any], inner: WSGIApp
    ) -> Iterable[bytes]:
        began = time.perf_counter()
        seen: list[str] = []

        def recording(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            seen.append(status.split(" ", 1)[0])
            return start_response(status, headers, *exc)

        body = inner(environ, recording)
        method = str(environ.get(METHOD_KEY) or "unrouted")
        self.metrics.requests.labels(method, seen[0] if seen else "500").inc()
        self.metrics.request_seconds.labels(method).observe(time.perf_counter() - began)
        return body


def _reply(
    start_response: Callable[..., Any], status: int, body: bytes, kind: str = "text/plain"
) -> list[bytes]:
    reason = {200: "OK", 404: "Not Found", 503: "Service Unavailable"}[status]
    start_response(
        f"{status} {reason}", [("Content-Type", kind), ("Content-Length", str(len(body)))]
    )
    return [body]


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:  # scrapes are not worth a log line
        return


def serve_in_background(
    app: OpsApp, host: str, port: int, *, poll_interval: float = 0.5
) -> WSGIServer:
    """The metrics endpoint of `adapter schedule`, in a daemon thread; the server (to close).

    `poll_interval`: how often the serving loop looks whether `shutdown` was asked, so how
    long `shutdown` may wait (the standard library's 0.5 s; tests, which stop many, ask less).
    """
    server = make_server(host, port, app, handler_class=_QuietHandler)
    serve = partial(server.serve_forever, poll_interval=poll_interval)
    thread = threading.Thread(target=serve, name="metrics", daemon=True)
    thread.start()
    log.info(
        "metrics at http://%s:%d/metrics (%s)",
        host,
        server.server_port,
        datetime.now(UTC).isoformat(timespec="seconds"),
        extra={"event": "metrics-start", "port": server.server_port},
    )
    return server
