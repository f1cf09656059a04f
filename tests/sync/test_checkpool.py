"""One checking pool for side-by-side nodes: fed fairly, same writes, a dead child loses nothing.

The pool's children are real processes; the pages come from fixture servers.
A child is killed (SIGKILL) while it holds a page whose link set hangs on its
server, so the test knows the page is in its hands when it dies.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from adapter.config.load import parse_config
from adapter.config.settings import AdapterConfig, NodeSettings, pool_size
from adapter.errors import FetchError
from adapter.http.connections import fork_safe
from adapter.store.claims import owner_id
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow
from adapter.sync.checkpool import CheckPool
from adapter.sync.federation import run_nodes
from adapter.sync.fetchers import node_fetcher
from adapter.sync.outcome import CheckedPage, RunSummary
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.fixture_server import SiteServer

from .test_federation import many, node


def config(tmp_path: Path, *nodes: str, processes: int) -> AdapterConfig:
    url = stores.sqlite_url(tmp_path)
    return parse_config(
        f"store_url: {url}\ncheck_processes: {processes}\nnodes:\n" + "".join(nodes)
    )


@pytest.mark.slow  # 400 nodes of YAML: about half a CPU second
def test_the_pool_is_sized_by_what_the_nodes_rates_need() -> None:
    # each configuration parsed once (200 nodes of YAML are 0.4 CPU-s)
    slow, fast, few = many(200, 1.0), many(200, 2.0), many(3, 2.0)
    assert pool_size(slow, slow.nodes, cpus=2) == 1  # 0.9 cores' pages
    assert pool_size(fast, fast.nodes, cpus=2) == 2  # 1.8
    assert pool_size(slow, slow.nodes, cpus=1) == 0  # no core to spare
    assert pool_size(few, few.nodes, cpus=8) == 0  # a few polite nodes
    forced = many(3, 2.0, parallel="check_processes: 3\n")
    assert pool_size(forced, forced.nodes, cpus=2) == 3


def test_a_fetch_error_crosses_processes_whole() -> None:
    error = FetchError("fetch/timeout", "https://repo.example/x", "read timed out", 503)
    again = pickle.loads(pickle.dumps(error))
    assert (again.code, again.url, again.message, again.status) == (
        "fetch/timeout",
        "https://repo.example/x",
        "read timed out",
        503,
    )


def records(url: str) -> list[tuple[str, str, str]]:
    store = Store.open(url)
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(text("SELECT series_id, pid, checksum FROM records")).all()
    finally:
        store.close()
    return sorted((str(s), str(p), str(c)) for s, p, c in rows)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_side_by_side_nodes_checked_in_the_pool_write_what_their_threads_would(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    sites = [serve_site("sync-change"), serve_site("sync-versions"), serve_site("real-shapes")]
    nodes = [node(f"N{i}", site, 50) for i, site in enumerate(sites)]
    used: list[object] = []

    def job(config: AdapterConfig, n: NodeSettings, **options: object) -> RunSummary:
        used.append(options.get("checks"))
        return run_node(config, n, **options)

    results = {}
    for processes in (2, 0):
        (tmp_path / str(processes)).mkdir()
        cfg = config(tmp_path / str(processes), *nodes, processes=processes)
        summaries = list(run_nodes(cfg, cfg.nodes, stop=threading.Event(), job=job))
        assert all(s.status == "ok" for s in summaries), [s.message for s in summaries]
        counts = {s.node_id: (s.fetched, s.new_objects, s.errors) for s in summaries}
        results[processes] = (counts, records(cfg.store_url))
    pooled, threads = used[:3], used[3:]
    assert all(isinstance(p, CheckPool) for p in pooled) and len({id(p) for p in pooled}) == 1
    assert threads == [None, None, None]
    assert results[2] == results[0]
    assert results[2][1], "the sites published nothing harvestable: the comparison is empty"


@pytest.fixture
def hanging(serve_site: Callable[[str], SiteServer], tmp_path: Path) -> Iterator[tuple[Any, ...]]:
    """A page whose link set hangs until the test releases it (`release`), its node,
    fetcher, row and a 1-child pool. Held, not timed: the page is surely in a child's hands
    when it is killed, and nobody waits for a fixed hang to end (it was 1.5 s a child)."""
    site = serve_site("sp-good")
    release = threading.Event()
    site.extra_rules["/linkset/7.json"] = {"mode": "hang", "delay": 60, "release": release}
    once = "    limits: {max_retries: 0}\n"  # the hung link set is not asked again
    cfg = config(tmp_path, node("HANG", site, 50, once), processes=1)
    url = cfg.store_url
    Store.open(url).close()  # the pool's children open the store the run made
    store = Store.open(url)
    fetcher, _robots = node_fetcher(store, cfg.nodes[0], owner_id())
    row = FrontierRow(1, cfg.nodes[0].id, site.url("/dataset/7"), None, None, (), None, None,
                      None, None, None, 0)  # fmt: skip
    pool = CheckPool(url, 1, threads=1)
    yield pool, release, cfg.nodes[0], fetcher, row
    release.set()
    pool.close()
    fetcher.close()
    fetcher.pacer.close()
    store.close()


def kill_holder(pool: CheckPool) -> int:
    """SIGKILL the child once it holds a page; its pid."""
    for _ in range(200):
        child = pool._children[0]
        if child.held and child.process.pid:
            os.kill(child.process.pid, signal.SIGKILL)
            return int(child.process.pid)
        time.sleep(0.05)
    raise AssertionError("no child took the page")


def check(pool: CheckPool, *args: Any) -> CheckedPage:
    """The page fetched here and checked in the pool, waited for."""
    started = pool.start(*args)
    return started.result() if isinstance(started, Future) else started


def check_in_thread(pool: CheckPool, *args: Any) -> tuple[threading.Thread, list[CheckedPage]]:
    got: list[CheckedPage] = []
    thread = threading.Thread(target=lambda: got.append(check(pool, *args)))
    thread.start()
    return thread, got


def test_a_dead_childs_page_is_checked_by_its_replacement(hanging: tuple[Any, ...]) -> None:
    pool, release, *args = hanging
    thread, got = check_in_thread(pool, *args)
    killed = kill_holder(pool)
    release.set()  # the replacement's link set answers at once
    thread.join(60)
    assert got and got[0].out.error != "adapter/check-process-died"
    assert got[0].out.status in ("harvested", "not-harvestable")
    assert pool.processes == 1 and pool._children[0].process.pid != killed


def test_a_page_two_children_died_holding_is_an_error_and_the_pool_goes_on(
    hanging: tuple[Any, ...],
) -> None:
    pool, release, *args = hanging
    thread, got = check_in_thread(pool, *args)
    first = kill_holder(pool)
    for _ in range(200):  # the replacement takes the page again
        if pool._children[0].process.pid != first:
            break
        time.sleep(0.05)
    kill_holder(pool)
    release.set()  # the third child's link set answers at once
    thread.join(60)
    assert got and got[0].out.error == "adapter/check-process-died"
    again = check(pool, *args)  # a third child, the page answered this time
    assert again.out.error != "adapter/check-process-died"


FORKED = """
import json, sys
from adapter.config.load import parse_config
from adapter.http.connections import fork_safe
from adapter.store.claims import owner_id
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow
from adapter.sync.checkpool import CheckPool
from adapter.sync.fetchers import node_fetcher

cfg = parse_config(sys.stdin.read())
node = cfg.nodes[0]
store = Store.open(cfg.store_url)
fetcher, _robots = node_fetcher(store, node, owner_id())
fetcher.get(sys.argv[1])  # the fetch watchdog's thread runs from here on
safe = fork_safe()
pool = CheckPool(cfg.store_url, 2, threads=1)
kinds = [type(c.process._popen).__module__ for c in pool._children]
row = FrontierRow(1, node.id, sys.argv[1], None, None, (), None, None, None, None, None, 0)
checked = pool.start(node, fetcher, row).result(60)
pool.close()
print(json.dumps({"safe": safe, "kinds": kinds, "status": checked.out.status,
                  "series": sorted(c.series_id for c in checked.candidates),
                  "codes": sorted(f.code for f in checked.out.findings)}))
"""


def test_a_closed_pool_lets_go_of_its_semaphores_in_the_closing_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `adapter sync` ended now and then with "There appear to be 1 leaked semaphore objects":
    # the pool outlived its close in the drain loop's daemon thread, whose last reference
    # unlinked a queue's semaphore and was stopped by shutdown before it told the resource
    # tracker. Held here as that thread held it, the pool must let go of them in `close`.
    told: dict[str, list[tuple[str, int]]] = {"REGISTER": [], "UNREGISTER": []}

    def tell(cmd: str, real: Callable[[str, str], None]) -> Callable[[str, str], None]:
        def spy(name: str, rtype: str) -> None:
            if rtype == "semaphore":
                told[cmd].append((name, threading.get_ident()))
            real(name, rtype)

        return spy

    monkeypatch.setattr(resource_tracker, "register", tell("REGISTER", resource_tracker.register))
    unregister = tell("UNREGISTER", resource_tracker.unregister)
    monkeypatch.setattr(resource_tracker, "unregister", unregister)
    url = stores.sqlite_url(tmp_path)
    Store.open(url).close()
    pool = CheckPool(url, 1, threads=1)
    pool.close()
    here = threading.get_ident()
    made = sorted(name for name, thread in told["REGISTER"] if thread == here)
    assert len(made) == 6  # a lock, a lock and a semaphore for the results and the tasks
    assert sorted(name for name, thread in told["UNREGISTER"] if thread == here) == made
    left = [n for n in made if os.path.exists("/dev/shm/sem." + n.lstrip("/"))]
    assert not left, f"still linked after close: {left}"


@pytest.mark.slow  # a fresh interpreter: over 1 s
def test_children_are_forked_from_a_process_without_other_threads_and_check_alike(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    """`adapter sync` runs no other thread when its pool starts: its children are forked
    from it, skipping the forkserver's imports, and check a page as the forkserver's do.
    Here, beside the fixture server's threads, the pool keeps the forkserver."""
    site = serve_site("sp-good")
    lenient = node("F", site, 50, "    checks: {profile: mnlite}\n")
    text_cfg = f"store_url: {stores.sqlite_url(tmp_path)}\nnodes:\n" + lenient
    Store.open(parse_config(text_cfg).store_url).close()
    page = site.url("/dataset/7")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", FORKED, page], input=text_cfg, capture_output=True, text=True,
        env=env, timeout=120, check=True,
    )  # fmt: skip
    forked = json.loads(done.stdout.strip().splitlines()[-1])
    assert forked["safe"] and forked["kinds"] == ["multiprocessing.popen_fork"] * 2
    assert not fork_safe()  # this process serves the fixture site from threads
    cfg = parse_config(text_cfg)
    store = Store.open(cfg.store_url)
    fetcher, _robots = node_fetcher(store, cfg.nodes[0], owner_id())
    row = FrontierRow(1, cfg.nodes[0].id, page, None, None, (), None, None, None, None, None, 0)
    pool = CheckPool(cfg.store_url, 1, threads=1)
    try:
        assert [type(c.process._popen).__module__ for c in pool._children] == [
            "multiprocessing.popen_forkserver"
        ]
        here = check(pool, cfg.nodes[0], fetcher, row)
    finally:
        pool.close()
        fetcher.close()
        fetcher.pacer.close()
        store.close()
    assert forked["status"] == here.out.status == "harvested"
    assert forked["series"] == sorted(c.series_id for c in here.candidates) != []
    assert forked["codes"] == sorted(f.code for f in here.out.findings)
