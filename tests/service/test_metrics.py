"""/metrics, /healthz and /readyz: over a real store, a real server, and `adapter schedule`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import delete

from adapter.api.app import MemberNodeApp
from adapter.commands.serving_settings import member_node
from adapter.errors import FetchError
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import Limits
from adapter.service.metrics import Metrics, OpsApp, page_outcomes, serve_in_background
from adapter.store import migrations
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.sync.outcome import RunSummary
from tests.support import SERVE_AS_STARTED, free_port, stores
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.member_node import node_settings, put_dataset
from tests.support.zygote import adapter_popen

ROOT = Path(__file__).resolve().parents[2]
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(text: str) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def sample(found: Samples, name: str, **labels: str) -> float | None:
    return found.get((name, tuple(sorted(labels.items()))))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(stores.sqlite_url(tmp_path))
    yield opened
    opened.close()


@pytest.fixture
def ops(store: Store) -> Iterator[tuple[str, Metrics]]:
    node = node_settings()
    put_dataset(store, node, "10.5072/a", "A")
    put_dataset(store, node, "10.5072/b", "B")
    metrics = Metrics()
    metrics.collect_store(store)
    api = MemberNodeApp(store, [])
    server = serve_in_background(OpsApp(metrics, store, api), "127.0.0.1", 0, poll_interval=0.05)
    origin = f"http://127.0.0.1:{server.server_port}"
    api.serve_nodes([member_node(node, origin)])
    try:
        yield origin, metrics
    finally:
        server.shutdown()
        server.server_close()


def test_page_outcomes_add_up_to_the_pages_fetched() -> None:
    counts = {"fetched": 10, "not_modified": 2, "unchanged": 3, "gone": 1, "errors": 1}
    parts = page_outcomes({**counts, "pages_not_harvestable": 2})
    assert sum(parts.values()) == 10
    assert parts["written"] == 1


def test_a_run_is_counted_by_outcome_code_status_and_time() -> None:
    metrics = Metrics()
    summary = RunSummary("urn:node:A", status="ok", fetched=5, unchanged=2, duration_s=3.5)
    summary.pages_not_harvestable = 1
    summary.not_harvestable = {"dataone/identifier-not-doi": 1}
    before = time.time()
    metrics.observe_run(summary)
    found = samples(metrics.exposition().decode())
    assert sample(found, "adapter_pages_total", node="urn:node:A", outcome="written") == 2
    assert sample(found, "adapter_pages_total", node="urn:node:A", outcome="unchanged") == 2
    code = "dataone/identifier-not-doi"
    assert sample(found, "adapter_findings_total", node="urn:node:A", code=code) == 1
    assert sample(found, "adapter_runs_total", node="urn:node:A", status="ok") == 1
    assert sample(found, "adapter_run_duration_seconds_sum", node="urn:node:A") == 3.5
    last = sample(found, "adapter_last_success_timestamp_seconds", node="urn:node:A")
    assert last is not None and last >= before


def test_a_failed_run_does_not_move_the_last_success() -> None:
    metrics = Metrics()
    metrics.observe_run(RunSummary("urn:node:A", status="failed"))
    found = samples(metrics.exposition().decode())
    assert sample(found, "adapter_runs_total", node="urn:node:A", status="failed") == 1
    assert sample(found, "adapter_last_success_timestamp_seconds", node="urn:node:A") is None


def test_a_run_whose_job_returns_a_future_is_counted_when_it_ends() -> None:
    """Side by side, the scheduler's job returns once discovery is done (its pages go on in
    the drain loop): the run is counted from the future, when it ends, not before."""
    metrics = Metrics()
    ending: Future[RunSummary] = Future()
    counted = metrics.observe_job(lambda: ending)
    assert counted() is ending
    found = samples(metrics.exposition().decode())
    assert sample(found, "adapter_runs_total", node="urn:node:L", status="ok") is None
    ending.set_result(RunSummary("urn:node:L", status="ok", fetched=3))
    found = samples(metrics.exposition().decode())
    assert sample(found, "adapter_runs_total", node="urn:node:L", status="ok") == 1


def test_member_node_requests_are_counted_by_dataone_method_and_status(
    ops: tuple[str, Metrics],
) -> None:
    origin, _ = ops
    base = f"{origin}/{node_settings().short_name}/v2"
    assert requests.get(f"{base}/object?count=1", timeout=10).status_code == 200
    assert requests.get(f"{base}/object/doi%3A10.5072%2Fa", timeout=10).status_code == 200
    assert requests.get(f"{base}/meta/nope", timeout=10).status_code == 404
    assert requests.get(f"{origin}/elsewhere/v2/node", timeout=10).status_code == 404
    found = samples(requests.get(f"{origin}/metrics", timeout=10).text)
    assert sample(found, "adapter_mn_requests_total", method="listObjects", status="200") == 1
    assert sample(found, "adapter_mn_requests_total", method="get", status="200") == 1
    assert sample(found, "adapter_mn_requests_total", method="getSystemMetadata", status="404") == 1
    assert sample(found, "adapter_mn_requests_total", method="unrouted", status="404") == 1
    assert sample(found, "adapter_mn_request_duration_seconds_count", method="get") == 1


def test_queue_depth_is_read_from_the_store_at_each_scrape(
    ops: tuple[str, Metrics], store: Store
) -> None:
    origin, _ = ops
    node = node_settings()
    found = samples(requests.get(f"{origin}/metrics", timeout=10).text)
    assert sample(found, "adapter_queue_depth", node=node.id) == 2
    put_dataset(store, node, "10.5072/c", "C")
    found = samples(requests.get(f"{origin}/metrics", timeout=10).text)
    assert sample(found, "adapter_queue_depth", node=node.id) == 3


def test_health_and_readiness(ops: tuple[str, Metrics], store: Store) -> None:
    origin, _ = ops
    assert requests.get(f"{origin}/healthz", timeout=10).text == "ok\n"
    ready = requests.get(f"{origin}/readyz", timeout=10)
    assert ready.status_code == 200, ready.text
    with store.write() as conn:  # as if the store were written by an older adapter
        conn.execute(
            delete(t.schema_version).where(t.schema_version.c.version == migrations.LATEST)
        )
    stale = requests.get(f"{origin}/readyz", timeout=10)
    assert stale.status_code == 503
    assert "adapter db upgrade" in stale.text


def test_readiness_says_when_the_store_does_not_answer(tmp_path: Path) -> None:
    store = Store.open(stores.sqlite_url(tmp_path))
    store.close()
    (tmp_path / "store.db").unlink()
    (tmp_path / "store.db").mkdir()  # the path is now a folder: SQLite cannot open it
    app = OpsApp(Metrics(), store)
    server = serve_in_background(app, "127.0.0.1", 0, poll_interval=0.05)
    try:
        answer = requests.get(f"http://127.0.0.1:{server.server_port}/readyz", timeout=10)
    finally:
        server.shutdown()
        server.server_close()
    assert answer.status_code == 503
    assert "store unreachable" in answer.text


def _scrape_until(url: str, ready: Callable[[Samples], bool], seconds: float = 60) -> Samples:
    deadline = time.monotonic() + seconds
    found: Samples = {}
    while time.monotonic() < deadline:
        try:
            found = samples(requests.get(url, timeout=5).text)
        except requests.ConnectionError:
            found = {}
        if ready(found):
            return found
        time.sleep(0.2)
    raise AssertionError(f"{url} never showed what was awaited; last scrape: {found}")


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_the_scheduler_serves_metrics_of_its_runs(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    site = serve_site("sync-change")
    config = tmp_path / "adapter.yaml"
    config.write_text(
        f"store_url: {stores.sqlite_url(tmp_path)}\nnodes:\n"
        "  - id: urn:node:METRICS\n"
        "    name: metrics\n"
        f"    start: {{entry_urls: ['{site.url('/')}']}}\n"
        "    schedule: {interval_minutes: 600}\n"
        "    politeness: {requests_per_second: 50}\n"
        "    checks: {profile: mnlite}\n"  # most pages have no ISO copy (dataone's requirement)
        "    dataone: {submitter: x, rights_holder: y, contact_subject: z}\n"
    )
    port = free_port()
    proc = adapter_popen(
        "schedule",
        "--config",
        str(config),
        "--now",
        "--metrics-port",
        str(port),
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        found = _scrape_until(
            f"http://127.0.0.1:{port}/metrics",
            lambda s: sample(s, "adapter_runs_total", node="urn:node:METRICS", status="ok") == 1,
        )
        written = sample(found, "adapter_pages_total", node="urn:node:METRICS", outcome="written")
        assert written is not None and written > 0
        depth = sample(found, "adapter_queue_depth", node="urn:node:METRICS")
        assert depth is not None and depth > 0
        assert requests.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_adapter_serve_exposes_metrics_and_health_beside_the_nodes(tmp_path: Path) -> None:
    url = stores.sqlite_url(tmp_path)
    node = node_settings()
    store = Store.open(url)
    put_dataset(store, node, "10.5072/a", "A")
    store.close()
    process = adapter_popen(
        "serve",
        *SERVE_AS_STARTED,
        "--port",
        "0",
        "--store",
        url,
        "--node-id",
        node.id,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        base = process.stdout.readline().strip().partition(": ")[2]
        origin = base.removesuffix(f"/{node.short_name}/v2")
        assert requests.get(f"{base}/monitor/ping", timeout=10).status_code == 200
        assert requests.get(f"{origin}/healthz", timeout=10).status_code == 200
        assert requests.get(f"{origin}/readyz", timeout=10).status_code == 200
        found = samples(requests.get(f"{origin}/metrics", timeout=10).text)
        assert sample(found, "adapter_mn_requests_total", method="ping", status="200") == 1
        assert sample(found, "adapter_queue_depth", node=node.id) == 1
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_fetch_retries_failures_and_store_writes_reach_the_scrape(tmp_path: Path) -> None:
    servers = start_site(
        "page-good",
        rules={"/busy": {"mode": "fail_then_ok", "failures": 10**6, "fail_status": 503}},
    )
    site = servers[0]
    host = site.origin.removeprefix("http://")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{closed.getsockname()[1]}/"
    closed.close()  # nothing listens there now: connection refused
    metrics = Metrics()
    try:
        limits = Limits(max_retries=2, total_timeout=10)
        policy = AddressPolicy([site.origin, dead])
        with Fetcher(limits, policy=policy, retry_base_delay=0.01) as fetcher:
            assert fetcher.get(site.url("/busy")).status == 503
            with pytest.raises(FetchError):
                fetcher.get(dead)
    finally:
        stop(servers)
    store = Store.open(stores.sqlite_url(tmp_path))
    try:
        with store.write():
            pass
    finally:
        store.close()
    found = samples(metrics.exposition().decode())
    assert sample(found, "adapter_fetch_retries_total", host=host, reason="HTTP 503") == 2
    assert sample(found, "adapter_fetch_failures_total", host=host, code="fetch/http-error") == 1
    dead_host = dead.removeprefix("http://").rstrip("/")
    assert sample(found, "adapter_fetch_retries_total", host=dead_host, reason="connection") == 2
    failed = sample(
        found, "adapter_fetch_failures_total", host=dead_host, code="fetch/connection-failed"
    )
    assert failed == 1
    writes = sample(found, "adapter_store_write_seconds_count", dialect="sqlite")
    assert writes is not None and writes >= 1
    inf = sample(found, "adapter_store_write_seconds_bucket", dialect="sqlite", le="+Inf")
    assert inf == writes
