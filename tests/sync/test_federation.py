"""Several nodes side by side: none waits for another, and one that fails or hangs holds nobody.

Each node's repository is its own fixture server; the servers' own request
logs say who was asked when, so the tests read order, never durations.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from adapter.config.load import parse_config
from adapter.config.settings import AdapterConfig, choose_processes
from adapter.store import hostrate_db
from adapter.store.db import Store, shared_store
from adapter.store.hostrate import StorePacer
from adapter.sync.checkpool import shared_checks
from adapter.sync.federation import run_nodes
from adapter.sync.outcome import RunSummary
from tests.support import stores
from tests.support.cli import run_in_process
from tests.support.fixture_server import SiteServer


def node(name: str, site: SiteServer, rate: float, limits: str = "") -> str:
    return (
        f"  - id: urn:node:{name}\n"
        f"    name: {name}\n"
        f"    start: {{entry_urls: ['{site.url('/')}']}}\n"
        f"    politeness: {{requests_per_second: {rate}, concurrency: 1}}\n"
        f"{limits}"
        "    dataone: {submitter: x, rights_holder: y, contact_subject: z}\n"
    )


def config(tmp_path: Path, *nodes: str, parallel: str = "") -> AdapterConfig:
    return parse_config(
        f"store_url: {stores.sqlite_url(tmp_path)}\n{parallel}nodes:\n" + "".join(nodes)
    )


def window(site: SiteServer) -> tuple[float, float]:
    times = [r.time for r in site.log]
    return min(times), max(times)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_nodes_run_side_by_side(tmp_path: Path, serve_site: Callable[[str], SiteServer]) -> None:
    many, few = serve_site("sync-change"), serve_site("page-shacl")
    # `many` is asked ~12 times at 6 per second (~2 s); one after another, `few` would start
    # after it
    cfg = config(tmp_path, node("MANY", many, 6), node("FEW", few, 6))
    summaries = list(run_nodes(cfg, cfg.nodes, stop=threading.Event()))
    assert {s.node_id for s in summaries} == {"urn:node:MANY", "urn:node:FEW"}
    assert all(s.status == "ok" for s in summaries), [s.message for s in summaries]
    many_first, many_last = window(many)
    few_first, few_last = window(few)
    assert few_first < many_last and many_first < few_last  # their requests interleave


def test_one_node_at_a_time_when_the_configuration_says_so(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    first, second = serve_site("page-shacl"), serve_site("page-shacl")
    cfg = config(
        tmp_path, node("A", first, 50), node("B", second, 50), parallel="parallel_nodes: 1\n"
    )
    list(run_nodes(cfg, cfg.nodes, stop=threading.Event()))
    a, b = window(first), window(second)
    assert a[1] < b[0] or b[1] < a[0]  # one whole run, then the other


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_hanging_repository_holds_no_other_node(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    stuck, fine = serve_site("sync-slow"), serve_site("page-shacl")
    # two pages that hang, 1 s each: FINE's few pages (0.5 s alone) are done before the
    # first times out; its first page waited for a page thread (held by STUCK's fetch)
    # for the whole 1 s the loop let pages wait before starting another, ending after it
    slow = "    limits: {read_timeout: 1, total_timeout: 1}\n"
    cfg = config(tmp_path, node("STUCK", stuck, 10, slow), node("FINE", fine, 10))
    order = [s.node_id for s in run_nodes(cfg, cfg.nodes, stop=threading.Event())]
    assert order == ["urn:node:FINE", "urn:node:STUCK"]  # FINE ended while STUCK still waited


def test_a_node_whose_run_raises_is_a_failed_summary_and_the_others_go_on(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    site = serve_site("page-shacl")
    cfg = config(tmp_path, node("BROKEN", site, 10), node("FINE", site, 10))

    def job(config: AdapterConfig, n: object, **options: object) -> RunSummary:
        from adapter.sync.run import run_node

        if getattr(n, "id", "") == "urn:node:BROKEN":
            raise RuntimeError("the store vanished")
        return run_node(config, n, **options)  # type: ignore[arg-type]

    summaries = {s.node_id: s for s in run_nodes(cfg, cfg.nodes, stop=threading.Event(), job=job)}
    assert summaries["urn:node:FINE"].status == "ok"
    assert summaries["urn:node:BROKEN"].status == "failed"
    assert summaries["urn:node:BROKEN"].message == "RuntimeError: the store vanished"


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_runs_at_once_share_one_checking_pool_sized_by_what_pays(tmp_path: Path) -> None:
    """The processes of every run in this process are one pool's (once the cores, never a
    pool per run); a run alone starts one only for as many cores as its rate can feed."""
    url = stores.sqlite_url(tmp_path)
    Store.open(url).close()
    with shared_checks(url, 2) as first, shared_checks(url, 2) as second:
        assert first is not None and first is second
        assert first.processes == 2
    with shared_checks(url, 0) as none:
        assert none is None  # checked in the page threads
    fast, slow = many(1, 5000.0).nodes[0], many(1, 2.0).nodes[0]
    assert choose_processes(fast, 1500, cpus=2) == 2
    assert choose_processes(fast, 100, cpus=2) == 1  # too few pages to pay for a process
    assert choose_processes(slow, 1500, cpus=8) == 1  # its rate keeps no second core busy
    assert choose_processes(fast, 1500, cpus=1) == 1


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_adapter_sync_config_runs_its_nodes_side_by_side(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    many, few = serve_site("sync-change"), serve_site("page-shacl")
    path = tmp_path / "nodes.yaml"
    path.write_text(
        f"store_url: {stores.sqlite_url(tmp_path)}\nnodes:\n"
        + node("MANY", many, 6)  # ~12 requests, ~2 s: as in test_nodes_run_side_by_side
        + node("FEW", few, 6)
    )
    # the command's contract in this process: no signal or process tree is the point
    done = run_in_process(["sync", "--config", str(path), "--json"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [line.count('"node_id"') for line in done.stdout.splitlines()] == [1, 1]
    many_first, many_last = window(many)
    few_first, few_last = window(few)
    assert few_first < many_last and many_first < few_last


def many(count: int, rate: float, parallel: str = "") -> AdapterConfig:
    nodes = "".join(
        f"  - id: urn:node:N{i}\n    name: N{i}\n"
        f"    start: {{entry_urls: ['https://repo{i}.example/']}}\n"
        f"    politeness: {{requests_per_second: {rate}}}\n"
        "    dataone: {submitter: x, rights_holder: y, contact_subject: z}\n"
        for i in range(count)
    )
    return parse_config(f"store_url: sqlite:///x.db\n{parallel}nodes:\n{nodes}")


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_every_node_at_once_when_the_cores_can_check_them_all() -> None:
    # 200 repositories at 1 request/s: 200 pages/s, within 2 cores' checking
    assert many(200, 1.0).nodes_at_once(cpus=2) == 200


def test_nodes_beyond_what_the_cores_can_check_wait_their_turn() -> None:
    # at 20 requests/s each, 2 cores check ~330 pages/s: 16 nodes, not 200
    busy = many(200, 20.0)
    at_once = busy.nodes_at_once(cpus=2)
    assert 10 <= at_once < 40
    assert busy.nodes_at_once(cpus=4) in (2 * at_once, 2 * at_once + 1)


def test_parallel_nodes_overrides_the_machine() -> None:
    assert many(50, 1.0, parallel="parallel_nodes: 7\n").nodes_at_once(cpus=64) == 7


def test_node_runs_at_once_share_one_store_closed_by_the_last(tmp_path: Path) -> None:
    url = stores.sqlite_url(tmp_path)
    with shared_store(url) as first, shared_store(url) as second:
        assert first is second  # one engine, one pool, one writer queue
        with shared_store(url) as third:
            assert third is first
        assert first.version() is not None  # still open for the others
    with shared_store(url) as later:
        assert later is not first  # the last user closed it; a new run opens afresh


def test_pacers_of_one_store_share_its_schedule_connection(tmp_path: Path) -> None:
    store = Store.open(stores.sqlite_url(tmp_path))
    pacers = [StorePacer(store, f"owner-{i}", 5.0, 1) for i in range(3)]
    assert len({id(p._db) for p in pacers}) == 1
    pacers[0].close()
    pacers[0].close()  # twice: still one release
    with pacers[1].slot("repo.example:80"):  # the others' connection is still open
        pass
    for pacer in pacers[1:]:
        pacer.close()
    assert store not in hostrate_db._SHARED
    store.close()
