"""The pace of a host counts from when requests really left, and from the latest Crawl-delay.

Hundreds of nodes in one process keep its threads waiting for the CPU: a
thread let go by the pacer may write its request late, and the host sees it
then. These tests make that lateness happen on purpose (a `sent` later than
the start) and check the next start keeps a whole interval after it; and that
a robots.txt Crawl-delay learnt after a host's first request applies to the
very next one. They assert lower bounds only, which a loaded machine cannot
break.

The pacers of `make_pacer` keep time on the virtual clock (`virtual_clock`:
HostPacer and StorePacer both read the watchdog's), so a pace of seconds costs
the quick loop nothing; the same tests run once more on the real clock with a
StorePacer (`store-realtime`, marked slow), and the tests of two threads racing
for a host stay on the real clock, where threads really lose the CPU.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapter.http import connections
from adapter.http.addresses import AddressPolicy, host_key
from adapter.http.fetcher import Fetcher
from adapter.http.politeness import HostPacer
from adapter.limits import Limits
from adapter.store.claims import owner_id
from adapter.store.db import Store
from adapter.store.hostrate import SEND_SLACK, StorePacer
from adapter.store.hostrate_db import clear
from tests.support import stores
from tests.support.clock import FakeClock
from tests.support.fixture_server import SiteServer, stop
from tests.support.hostile import start_corpus

HOST = "repo.example:80"
store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
ROUNDING = 1e-6  # a virtual clock sleeps exactly to the due time: only float rounding is short
Pacer = HostPacer | StorePacer


@pytest.fixture(params=["memory", "store", pytest.param("store-realtime", marks=pytest.mark.slow)])
def make_pacer(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[float], Pacer]]:
    """A pacer of either kind at `rate` requests per second, concurrency 2; on the virtual
    clock but for `store-realtime`."""
    if request.param != "store-realtime":
        request.getfixturevalue("virtual_clock")  # the watchdog's clock, which both read
    opened: list[tuple[Store, StorePacer]] = []

    def make(rate: float) -> Pacer:
        if request.param == "memory":
            return HostPacer(rate, 2)
        store = Store.open(stores.sqlite_url(tmp_path))
        pacer = StorePacer(store, owner_id() + ":test", rate, 2)
        opened.append((store, pacer))
        return pacer

    yield make
    for store, pacer in opened:
        pacer.close()
        store.close()


def now() -> float:
    """The pacers' clock (the watchdog's): virtual under `virtual_clock`, else the real one."""
    return connections.WATCHDOG.clock.monotonic()


def start(pacer: Pacer) -> float:
    with pacer.slot(HOST):
        return now()


def test_a_request_that_left_late_moves_the_next_start_on(
    make_pacer: Callable[[float], Pacer],
) -> None:
    pacer = make_pacer(5.0)  # 0.2 s apart
    first = start(pacer)
    left = first + 0.15  # the thread lost the CPU for 150 ms before writing the request
    pacer.sent(HOST, left)
    second = start(pacer)
    assert (
        second - left >= 0.2 - ROUNDING
    )  # a whole interval after the request left, not after its start


def test_requests_that_left_on_time_keep_the_plain_pace(
    make_pacer: Callable[[float], Pacer],
) -> None:
    pacer = make_pacer(10.0)
    times = []
    for _ in range(6):
        times.append(start(pacer))
        pacer.sent(HOST, now())
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.1 - 0.002  # the pacer's own slack (LEAD) at most


def test_a_crawl_delay_learnt_after_the_first_request_holds_for_the_next(
    make_pacer: Callable[[float], Pacer],
) -> None:
    pacer = make_pacer(20.0)  # 50 ms apart by the node's setting
    first = start(pacer)  # robots.txt, at the node's pace
    pacer.set_crawl_delay(HOST, 0.4)  # what robots.txt said
    second = start(pacer)  # the sitemap: already reserved at 50 ms before the delay was known
    assert second - first >= 0.4 - ROUNDING


def test_a_fetch_tells_the_pacer_when_its_request_left(
    serve_site: Callable[[str], SiteServer],
) -> None:
    site = serve_site("page-shacl")
    told: list[tuple[str, float]] = []

    class Recording(HostPacer):
        def sent(self, host: str, when: float) -> None:
            told.append((host, when))
            super().sent(host, when)

    fetcher = Fetcher(pacer=Recording(100.0, 1), policy=AddressPolicy((site.origin,)))
    before = time.monotonic()
    fetcher.get(site.url("/"))
    fetcher.close()
    assert told, "the fetcher never said when its request left"
    host, when = told[0]
    assert host == host_key(site.origin)
    assert before <= when <= time.monotonic()


def starved_then(first: StorePacer, second: StorePacer) -> tuple[float, float]:
    """A request `first` lets go, then writes 0.4 s late (its thread lost the CPU), and the
    next `second` lets go, its start reserved 0.1 s after the first's: when each left."""
    written: list[float] = []

    def starved() -> None:
        with first.slot(HOST):
            time.sleep(0.4)
            written.append(time.monotonic())
            first.sent(HOST, written[0])

    thread = threading.Thread(target=starved)
    thread.start()
    time.sleep(0.05)
    went = start(second)
    thread.join()
    return written[0], went


def test_no_request_goes_while_one_let_go_is_not_written(tmp_path: Path) -> None:
    store = Store.open(stores.sqlite_url(tmp_path))
    pacer = StorePacer(store, owner_id() + ":test", 10.0, 2)  # 0.1 s apart, two in flight
    written, second = starved_then(pacer, pacer)
    pacer.close()
    store.close()
    assert second - written >= 0.1


def test_no_other_process_goes_while_one_let_go_is_not_written(store_url: str) -> None:
    # two pacers with stores of their own: two processes' schedules, as `adapter worker`s
    # keep them
    opened = [Store.open(store_url) for _ in range(2)]
    clear(opened[0])
    first, second = (StorePacer(s, f"{owner_id()}:{i}", 10.0, 2) for i, s in enumerate(opened))
    start(second)  # the host's schedule begins: the first's start is an interval on
    written, went = starved_then(first, second)
    for pacer, store in zip((first, second), opened, strict=True):
        pacer.close()
        store.close()
    assert went - written >= 0.1 - SEND_SLACK, f"{went - written:.3f} s after"


def test_a_schedule_an_earlier_version_made_gains_the_claim(store_url: str) -> None:
    store = Store.open(store_url)
    old = "CREATE TABLE host_rate (host VARCHAR(300) PRIMARY KEY, next_at FLOAT NOT NULL)"
    if store.engine.dialect.name == "postgresql":  # the table lives in the store's database
        with store.engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE IF EXISTS host_rate")
            conn.exec_driver_sql(old)
            conn.exec_driver_sql(f"INSERT INTO host_rate VALUES ('{HOST}', 0)")
    else:  # in a file beside the store
        with contextlib.closing(sqlite3.connect(f"{store.engine.url.database}-hostrate")) as db:
            db.executescript(f"{old}; INSERT INTO host_rate VALUES ('{HOST}', 0);")
    pacer = StorePacer(store, owner_id() + ":test", 10.0, 2)
    try:
        times = [start(pacer) for _ in range(2)]
    finally:
        pacer.close()
        store.close()
    assert times[1] - times[0] >= 0.1 - 0.002  # paced, the claim taken and given back


def test_a_retry_after_holds_the_whole_host(make_pacer: Callable[[float], Pacer]) -> None:
    pacer = make_pacer(20.0)
    first = start(pacer)
    pacer.hold(HOST, 0.5)  # a 503 with Retry-After: every thread and process waits it out
    assert start(pacer) - first >= 0.5 - ROUNDING


def test_a_fetch_that_meets_a_retry_after_holds_the_host(virtual_clock: FakeClock) -> None:
    servers = start_corpus()
    server = servers[0]
    server.extra_rules["/t/busy"] = {
        "mode": "fail_then_ok",
        "file": "good/1.html",
        "failures": 1,
        "fail_status": 503,
        "retry_after": "1",
    }
    held: list[tuple[str, float]] = []

    class Recording(HostPacer):
        def hold(self, host: str, seconds: float) -> None:
            held.append((host, seconds))
            super().hold(host, seconds)

    fetcher = Fetcher(
        Limits(total_timeout=10, max_retry_after=5),
        pacer=Recording(100.0, 2),
        policy=AddressPolicy((server.origin,)),
    )
    try:
        assert fetcher.get(server.url("/t/busy")).status == 200
    finally:
        fetcher.close()
        stop(servers)
    assert held == [(host_key(server.origin), 1.0)]
    assert sum(virtual_clock.sleeps) >= 1.0  # the Retry-After waited out, on virtual time


@pytest.mark.slow  # two intervals of a second on the real clock, where threads race for a host
def test_a_request_written_a_little_late_costs_the_next_start_no_whole_interval(
    tmp_path: Path,
) -> None:
    """Two threads wait for a host; the first writes its request 0.1 s late. The second's
    start (reserved before that was known) moves 0.1 s on, where dropping it and reserving
    anew would cost it a whole interval: a fifth of a busy federation's pace was lost so."""
    store = Store.open(stores.sqlite_url(tmp_path))
    pacer = StorePacer(store, owner_id() + ":test", 1.0, 2)  # 1 s apart, two in flight
    start(pacer)  # the host's first request, on time: both threads below wait an interval
    pacer.sent(HOST, time.monotonic())
    released: list[float] = []
    written: list[float] = []
    lock = threading.Lock()

    def request() -> None:
        with pacer.slot(HOST):
            with lock:
                released.append(time.monotonic())
                first = len(released) == 1
            if first:
                time.sleep(0.1)  # the CPU was busy: written 0.1 s after the start
            written.append(time.monotonic())
            pacer.sent(HOST, written[-1])

    threads = [threading.Thread(target=request) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pacer.close()
    store.close()
    assert released[1] - min(written) >= 1.0 - 0.002  # a whole interval after the late one
    assert released[1] - released[0] < 1.6  # not two intervals: its start was moved, not lost
