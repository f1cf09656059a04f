"""Scale-out workers over real HTTP: claims, leases, kills, clean stops, enqueue-only syncs.

The big case runs four `adapter worker` processes on the real PostgreSQL over
a 120-page synthetic repository (twelve claims of 10, three per worker) and
kills one of them (SIGKILL) while it holds claims: every page must end up
processed exactly once in the records and the outbox, the dead worker's pages
finished by the others. (It had 2,000 pages: 27 CPU-s and a minute and a half
for the same proof.)
"""

from __future__ import annotations

import bisect
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select, update

from adapter.commands.worker import worker
from adapter.config.load import load_config
from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import frontier_rows
from adapter.sync.drain import Run
from adapter.sync.fetchers import node_fetcher
from adapter.sync.loop import drive
from adapter.sync.outcome import PageOutcome, RunSummary
from adapter.sync.run import run_node
from benchmarks import synthrepo
from tests.support import stores
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.workersite import NODE_ID, adapter_process, fixture_site, write_config

PAGES = 20  # claims of 7 and 20, leases on 15 of them, a stop after 3: all with pages to spare


@pytest.fixture
def site(tmp_path: Path) -> Iterator[SiteServer]:
    fixture_site(tmp_path / "sites", "workers", PAGES)
    servers = start_site("workers", tmp_path / "sites")
    yield servers[0]
    stop(servers)


def config(tmp_path: Path, store_url: str, server: SiteServer, rate: float = 500) -> Path:
    return write_config(
        tmp_path / "node.yaml", store_url, server.url("/robots.txt"), rate=rate, concurrency=4
    )


def page_requests(server: SiteServer) -> list[str]:
    return [r.path for r in server.log if r.path.startswith("/dataset/")]


def check_each_page_once(store: Store, pages: int) -> None:
    """Every page harvested, unclaimed, not due; its Dataset and its resource map, each
    with one create event."""
    rows = frontier_rows(store, NODE_ID)
    assert len(rows) == pages
    assert {r.last_status for r in rows} == {"harvested"}
    with store.read() as conn:
        f, r, o = t.frontier, t.records, t.outbox
        assert conn.execute(select(func.count()).where(f.c.due.is_(True))).scalar() == 0
        assert conn.execute(select(func.count()).where(f.c.claimed_by.is_not(None))).scalar() == 0
        is_map = r.c.format_id == RESOURCE_MAP_FORMAT
        urls = conn.execute(select(r.c.source_url).where(~is_map)).scalars().all()
        maps = conn.execute(select(r.c.source_url).where(is_map)).scalars().all()
        creates = conn.execute(select(o.c.pid).where(o.c.event == "create")).scalars().all()
    assert len(urls) == pages and len(set(urls)) == pages
    assert sorted(maps) == sorted(urls)
    assert len(creates) == 2 * pages and len(set(creates)) == 2 * pages


def test_enqueue_only_discovers_and_marks_due_without_fetching_pages(
    tmp_path: Path, site: SiteServer
) -> None:
    cfg = load_config(config(tmp_path, stores.sqlite_url(tmp_path), site))
    summary = run_node(cfg, cfg.nodes[0], enqueue_only=True)
    assert (summary.status, summary.pages_seen, summary.due, summary.fetched) == (
        "ok",
        PAGES,
        PAGES,
        0,
    )
    assert page_requests(site) == []
    store = Store.open(cfg.store_url)
    assert all(r.last_status is None for r in frontier_rows(store, NODE_ID))
    assert store.count_records(NODE_ID) == 0
    store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_worker_command_processes_what_enqueue_only_left(tmp_path: Path, site: SiteServer) -> None:
    path = config(tmp_path, stores.sqlite_url(tmp_path), site)
    cfg = load_config(path)
    run_node(cfg, cfg.nodes[0], enqueue_only=True)
    result = CliRunner().invoke(
        worker, ["--config", str(path), "--until-idle", "--batch", "7", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert f'"new_objects": {2 * PAGES}' in result.output and '"status": "ok"' in result.output
    assert sorted(page_requests(site)) == sorted(f"/dataset/{i}" for i in range(PAGES))
    store = Store.open(cfg.store_url)
    check_each_page_once(store, PAGES)
    store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_worker_checks_in_its_pool_when_the_configuration_asks(
    tmp_path: Path, site: SiteServer
) -> None:
    path = config(tmp_path, stores.sqlite_url(tmp_path), site)
    path.write_text("check_processes: 1\n" + path.read_text())
    cfg = load_config(path)
    run_node(cfg, cfg.nodes[0], enqueue_only=True)
    result = CliRunner().invoke(worker, ["--config", str(path), "--until-idle", "--json"])
    assert result.exit_code == 0, result.output
    assert "1 checking process;" in result.output
    assert f'"new_objects": {2 * PAGES}' in result.output and '"status": "ok"' in result.output
    store = Store.open(cfg.store_url)
    check_each_page_once(store, PAGES)
    store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_expired_lease_of_another_machine_is_taken_over(tmp_path: Path, site: SiteServer) -> None:
    cfg = load_config(config(tmp_path, stores.sqlite_url(tmp_path), site))
    run_node(cfg, cfg.nodes[0], enqueue_only=True)
    store = Store.open(cfg.store_url)
    now = datetime.now(UTC)
    f = t.frontier
    with store.write() as conn:  # a worker on another host died holding claims
        conn.execute(
            update(f)
            .where(f.c.id <= 10)
            .values(claimed_by="elsewhere:4242:worker", lease_until=now - timedelta(seconds=1))
        )
        conn.execute(  # and another one's lease runs out two seconds from now
            update(f)
            .where(f.c.id > 10, f.c.id <= 15)
            .values(claimed_by="elsewhere:4343:worker", lease_until=now + timedelta(seconds=2))
        )
    result = CliRunner().invoke(
        worker, ["--config", str(tmp_path / "node.yaml"), "--until-idle", "--poll-seconds", "0.2"]
    )
    assert result.exit_code == 0, result.output
    check_each_page_once(store, PAGES)
    store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_sync_in_two_processes_processes_each_page_once(tmp_path: Path, site: SiteServer) -> None:
    cfg = load_config(config(tmp_path, stores.sqlite_url(tmp_path), site))
    summary = run_node(cfg, cfg.nodes[0], processes=2)
    assert summary.status == "ok"
    assert (summary.fetched, summary.new_objects, summary.errors) == (PAGES, 2 * PAGES, 0)
    assert sorted(page_requests(site)) == sorted(f"/dataset/{i}" for i in range(PAGES))
    store = Store.open(cfg.store_url)
    check_each_page_once(store, PAGES)
    again = run_node(cfg, cfg.nodes[0], processes=2)  # nothing changed, nothing due
    assert (again.due, again.fetched, again.new_objects) == (0, 0, 0)
    store.close()


@pytest.mark.slow
def test_sigterm_stops_a_worker_after_the_pages_in_flight(tmp_path: Path, site: SiteServer) -> None:
    path = config(tmp_path, stores.sqlite_url(tmp_path), site, rate=8)
    cfg = load_config(path)
    run_node(cfg, cfg.nodes[0], enqueue_only=True)
    proc = adapter_process("worker", "--config", str(path), cwd=tmp_path)
    store = Store.open(cfg.store_url)
    deadline = time.monotonic() + 60
    while store.count_records(NODE_ID) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "worker interrupted" in out
    rows = frontier_rows(store, NODE_ID)
    done = [r for r in rows if r.last_status == "harvested"]
    assert 3 <= len(done) < PAGES, "the stop must land mid-run"
    assert store.count_records(NODE_ID) == 2 * len(done)  # each Dataset with its map, or none
    with store.read() as conn:  # nothing left claimed: another worker can take the rest
        claimed = select(func.count()).where(t.frontier.c.claimed_by.is_not(None))
        assert conn.execute(claimed).scalar() == 0
    store.close()


@pytest.mark.slow
def test_four_workers_on_postgresql_one_killed_every_page_once(
    tmp_path: Path, postgres_url: str
) -> None:
    pages = 120
    port = synthrepo.free_port()
    # nginx's workers run as nobody: the tree must be readable outside pytest's private tmp
    root = Path(tempfile.mkdtemp(prefix="adapter-synth-"))
    root.chmod(0o755)
    synthrepo.generate(root, pages, f"http://127.0.0.1:{port}")
    served = synthrepo.serve(root, port)
    try:
        with stores.postgres_schema(postgres_url) as url:
            _four_workers(tmp_path, url, f"http://127.0.0.1:{port}/robots.txt", pages)
    finally:
        served.stop()
        shutil.rmtree(root, ignore_errors=True)


def _four_workers(tmp_path: Path, url: str, robots: str, pages: int) -> None:
    path = write_config(tmp_path / "node.yaml", url, robots, rate=2000, concurrency=8)
    cfg = load_config(path)
    assert run_node(cfg, cfg.nodes[0], enqueue_only=True).due == pages
    args = ["worker", "--config", str(path), "--until-idle", "--lease-seconds", "5"]
    args += ["--batch", "10"]
    procs = [adapter_process(*args, "--poll-seconds", "0.5", cwd=tmp_path) for _ in range(4)]
    victim = procs[0]
    store = Store.open(url)
    f = t.frontier
    held: list[int] = []
    deadline = time.monotonic() + 60
    while not held and time.monotonic() < deadline and victim.poll() is None:
        if store.count_records(NODE_ID) >= pages // 6:  # every worker under way
            with store.read() as conn:
                held = list(
                    conn.execute(
                        select(f.c.id).where(f.c.claimed_by.like(f"%:{victim.pid}:worker"))
                    ).scalars()
                )
        if not held:
            time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    assert held, "the kill must land while the worker holds claims"
    for proc in procs[1:]:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
    check_each_page_once(store, pages)
    with store.read() as conn:  # the victim's pages were finished by the others
        statuses = conn.execute(select(f.c.last_status).where(f.c.id.in_(held))).scalars()
        assert set(statuses) == {"harvested"}
    store.close()


def drain_threads(tmp_path: Path, server: SiteServer, rate: float, pages: int) -> set[str]:
    """Process the site's due pages in the loop (concurrency 4); the page threads it used."""
    cfg = load_config(config(tmp_path, stores.sqlite_url(tmp_path), server, rate=rate))
    node = cfg.nodes[0]
    run_node(cfg, node, enqueue_only=True)
    store = Store.open(cfg.store_url)
    fetcher, _ = node_fetcher(store, node, "drainer")
    seen: set[str] = set()

    def on_outcome(out: PageOutcome) -> None:
        seen.update(t.name for t in threading.enumerate() if t.name.startswith("page"))
        assert out.status == "harvested"

    try:
        summary = RunSummary(node.id)
        run = Run(store, node, threading.Event(), summary, "drainer", fetcher)
        run.on_outcome = on_outcome
        done = drive(run).result()
    finally:
        store.close()
    assert done == pages
    return seen


def test_a_host_that_answers_within_its_interval_is_not_given_every_thread(tmp_path: Path) -> None:
    # concurrency 4 would allow four (and all four used to start at once); a page here asks
    # for its landing page and its metadata copy, and a second page may start while the
    # first is checked between the two, never a third
    fixture_site(tmp_path / "sites", "fast", 8)
    servers = start_site("fast", tmp_path / "sites")
    try:
        assert len(drain_threads(tmp_path, servers[0], rate=10, pages=8)) <= 2
    finally:
        stop(servers)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_slow_host_gets_the_pages_in_flight_its_concurrency_allows(tmp_path: Path) -> None:
    fixture_site(tmp_path / "sites", "slow", 12)
    rules = {
        f"/dataset/{i}": {
            "file": f"dataset/{i}.html",
            "content_type": "text/html",
            "answer_after": 0.5,
        }
        for i in range(12)
    }
    servers = start_site("slow", tmp_path / "sites", rules)
    try:
        assert len(drain_threads(tmp_path, servers[0], rate=10, pages=12)) == 4
        arrivals = sorted(r.time for r in servers[0].log if r.path.startswith("/dataset/"))
        # four requests in flight at once: a window of half a second holds four arrivals
        assert max(bisect.bisect(arrivals, t + 0.45) - i for i, t in enumerate(arrivals)) >= 4
    finally:
        stop(servers)
