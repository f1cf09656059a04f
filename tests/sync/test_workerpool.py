"""A sync run in several processes: children check, the run's own process writes.

Over real HTTP and a real SQLite file: a child killed (SIGKILL) mid-run loses
nothing (its pages go to the other child or back to the run), every page ends
up written exactly once, and a stop set mid-run leaves nothing claimed.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter.config.load import load_config
from adapter.store.db import Store
from adapter.sync.outcome import RunSummary
from adapter.sync.run import run_node
from tests.support import stores, zygote
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.workersite import NODE_ID, fixture_site, write_config
from tests.sync.test_worker import check_each_page_once, page_requests

pytestmark = pytest.mark.slow  # over 1 s (tests/support/timing.py)

PAGES = 60


@pytest.fixture
def site(tmp_path: Path) -> Iterator[SiteServer]:
    fixture_site(tmp_path / "sites", "pool", PAGES)
    servers = start_site("pool", tmp_path / "sites")
    yield servers[0]
    stop(servers)


def grandchildren(pid: int) -> list[int]:
    """The children of `pid`'s forkserver: the checkers. Only a forkserver's count: other
    tests on this worker leave grandchildren of other kinds (a zygote's `adapter` processes,
    tests/support/zygote.py; the process's one chromium under Playwright's driver)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    children = {
        p for p, pp in parents.items() if pp == pid and p not in zygote.pids() and _forkserver(p)
    }
    return sorted(p for p, pp in parents.items() if pp in children)


def _forkserver(pid: int) -> bool:
    try:
        return b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def run_in_thread(
    cfg_path: Path, stop_event: threading.Event
) -> tuple[threading.Thread, list[RunSummary]]:
    cfg = load_config(cfg_path)
    out: list[RunSummary] = []
    thread = threading.Thread(
        target=lambda: out.append(run_node(cfg, cfg.nodes[0], stop=stop_event, processes=2))
    )
    thread.start()
    return thread, out


def wait_for_records(url: str, count: int) -> None:
    store = Store.open(url)
    deadline = time.monotonic() + 60
    while store.count_records(NODE_ID) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    store.close()


def test_a_killed_child_loses_no_page(tmp_path: Path, site: SiteServer) -> None:
    url = stores.sqlite_url(tmp_path)
    path = write_config(tmp_path / "n.yaml", url, site.url("/robots.txt"), rate=30, concurrency=2)
    thread, out = run_in_thread(path, threading.Event())
    wait_for_records(url, 5)
    victims = grandchildren(os.getpid())
    assert len(victims) == 2, "two checking children expected mid-run"
    os.kill(victims[0], signal.SIGKILL)
    thread.join(120)
    summary = out[0]
    assert summary.status == "ok"
    assert (summary.new_objects, summary.errors) == (2 * PAGES, 0)  # a Dataset and its map
    assert set(page_requests(site)) == {f"/dataset/{i}" for i in range(PAGES)}
    store = Store.open(url)
    check_each_page_once(store, PAGES)
    store.close()


def test_a_stop_mid_run_leaves_nothing_claimed_and_a_rerun_finishes(
    tmp_path: Path, site: SiteServer
) -> None:
    url = stores.sqlite_url(tmp_path)
    path = write_config(tmp_path / "n.yaml", url, site.url("/robots.txt"), rate=30, concurrency=2)
    halt = threading.Event()
    thread, out = run_in_thread(path, halt)
    wait_for_records(url, 5)
    halt.set()
    thread.join(120)
    assert out[0].status == "interrupted"
    assert 5 <= out[0].new_objects < 2 * PAGES, "the stop must land mid-run"
    store = Store.open(url)
    assert store.count_records(NODE_ID) == out[0].new_objects  # every outcome written
    cfg = load_config(path)
    again = run_node(cfg, cfg.nodes[0], processes=2)  # nothing claimed: the rest is due
    assert again.new_objects == 2 * PAGES - out[0].new_objects
    check_each_page_once(store, PAGES)
    store.close()
