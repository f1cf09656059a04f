"""The drain loop: side-by-side nodes' pages driven by one thread, none by a thread of its own.

The loop's own rules are read with small stand-in drains (pages that are
plain numbers); the runs' with real fixture sites, whose request logs say
who was asked when.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from adapter.http.politeness import Turn
from adapter.http.starts import Starts
from adapter.store.frontier import FrontierRow
from adapter.sync.federation import run_nodes
from adapter.sync.loop import DrainLoop
from adapter.sync.run import run_node
from tests.support.fixture_server import SiteServer
from tests.sync.test_federation import config, node, window

WAIT = 30.0


class Pending:
    def __init__(self) -> None:
        self.pending: set[Future[Any]] = set()

    def take(self, future: Future[Any]) -> bool:
        if future not in self.pending:
            return False
        self.pending.discard(future)
        return True


class Numbers:
    """A drain of `count` pages, two in flight; `fail` raises on the first look."""

    def __init__(self, name: str, count: int, fail: bool = False) -> None:
        self.node = SimpleNamespace(id=name)
        self.left, self.fail = count, fail
        self.size = 2  # pages in flight at most
        self.starts = Pending()
        self.ended = False
        self.written: list[int] = []
        self.closed = False

    @property
    def done(self) -> int:
        return len(self.written)

    def close(self) -> None:
        self.closed = True

    def start_ready(self, submit: Callable[..., Future[Any]]) -> float | None:
        if self.fail:
            raise RuntimeError(f"{self.node.id}: the store vanished")
        while self.left and len(self.starts.pending) < 2:
            self.starts.pending.add(submit(lambda n: n * 10, self.left))
            self.left -= 1
        self.ended = not self.starts.pending
        return None

    def write(self, finished: list[Future[int]]) -> None:
        self.written += [f.result() for f in finished]


def test_a_failing_drain_ends_its_run_alone_and_the_loop_ends_when_idle() -> None:
    loop = DrainLoop(threads=4)
    ends: dict[str, BaseException | None] = {}
    done = threading.Event()

    def on_end(name: str) -> Callable[[Future[int]], None]:
        def end(future: Future[int]) -> None:
            ends[name] = future.exception()
            if len(ends) == 3:
                done.set()

        return end

    good, broken, more = Numbers("good", 25), Numbers("broken", 5, fail=True), Numbers("more", 7)
    for drain in (good, broken, more):
        loop.add(drain).add_done_callback(on_end(drain.node.id))  # type: ignore[arg-type]
    assert done.wait(WAIT)
    assert sorted(good.written) == [n * 10 for n in range(1, 26)]
    assert sorted(more.written) == [n * 10 for n in range(1, 8)]
    assert ends["good"] is None and ends["more"] is None
    assert good.closed and broken.closed and more.closed  # each drain closed as it ended
    assert str(ends["broken"]) == "broken: the store vanished"
    deadline = time.monotonic() + WAIT
    while loop.running:  # nothing left to drive: its thread ends
        assert time.monotonic() < deadline
        time.sleep(0.01)
    again = threading.Event()
    loop.add(Numbers("later", 3)).add_done_callback(lambda f: again.set())  # type: ignore[arg-type]
    assert again.wait(WAIT), "a drain added after the loop ended starts it again"


def test_a_page_whose_work_returns_a_future_is_written_once_that_is_done() -> None:
    loop = DrainLoop(threads=2)
    checks: list[Future[int]] = []

    class HandsOff(Numbers):
        def start_ready(self, submit: Callable[..., Future[Any]]) -> float | None:
            while self.left:
                self.starts.pending.add(submit(self.hand_off, self.left))
                self.left -= 1
            self.ended = not self.starts.pending
            return None

        def hand_off(self, n: int) -> Future[int]:
            check: Future[int] = Future()
            checks.append(check)
            return check

    drain, ended = HandsOff("pool", 3), threading.Event()
    loop.add(drain).add_done_callback(lambda f: ended.set())  # type: ignore[arg-type]
    deadline = time.monotonic() + WAIT
    while len(checks) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not ended.wait(0.2) and drain.written == []  # handed off: not written yet
    for n, check in enumerate(checks):
        check.set_result(n)
    assert ended.wait(WAIT)
    assert sorted(drain.written) == [0, 1, 2]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_runs_side_by_side_while_discoveries_go_one_at_a_time(
    tmp_path: Path, serve_site: Callable[[str], SiteServer]
) -> None:
    """A run's start thread is free once its discovery is done: with one discovery at a
    time the nodes' pages still interleave (a thread held for a whole run would serialise
    them)."""
    sites = [serve_site("sync-change"), serve_site("sync-change"), serve_site("page-shacl")]
    nodes = [node(f"D{i}", site, 5) for i, site in enumerate(sites)]  # a run of ~2 s each
    cfg = config(tmp_path, *nodes, parallel="parallel_discoveries: 1\ncheck_processes: 0\n")
    assert cfg.discoveries_at_once() == 1
    summaries = list(run_nodes(cfg, cfg.nodes, stop=threading.Event()))
    assert all(s.status == "ok" for s in summaries), [s.message for s in summaries]
    assert sum(s.fetched for s in summaries) > 10
    (a_first, a_last), (b_first, b_last) = window(sites[0]), window(sites[1])
    assert b_first < a_last and a_first < b_last  # their requests interleave


class FixedTurns:
    """A pacer whose host's next turn is `ahead` seconds from now, nobody waiting."""

    def __init__(self, ahead: float, interval: float = 1.0) -> None:
        self.ahead, self.interval = ahead, interval

    def turn(self, host: str) -> Turn:
        now = time.monotonic()
        return Turn(now - self.interval + self.ahead, now + self.ahead, 0, self.interval)


def row(url: str = "https://repo.example/a") -> FrontierRow:
    return FrontierRow(1, "n", url, None, None, (), None, None, None, None, None, 0)


def test_with_nothing_in_flight_a_page_waits_in_the_loop_for_its_hosts_turn() -> None:
    """Not at the pacer in a thread: a page handed over as soon as nothing was in flight
    held a thread there for most of an interval, a thread per node."""
    starts = Starts(2, FixedTurns(ahead=0.6))  # type: ignore[arg-type]
    wait = starts.next_start(row())
    assert wait is not None and 0.6 - Starts.LEAD - 0.05 < wait <= 0.6 - Starts.LEAD
    assert not starts.may_start(row())
    assert Starts(2, FixedTurns(ahead=Starts.LEAD / 2)).may_start(row())  # type: ignore[arg-type]


def test_fast_hosts_start_at_once_up_to_their_concurrency() -> None:
    starts = Starts(2, FixedTurns(ahead=0.02, interval=0.02))  # type: ignore[arg-type]
    assert starts.may_start(row())
    starts.add(Future())
    starts.add(Future())
    assert starts.next_start(row()) is None  # full: only once one finishes


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_node_run_alone_sleeps_until_its_hosts_turn(
    tmp_path: Path, serve_site: Callable[[str], SiteServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nothing in flight and the host's turn to come, the loop waits for it (or a
    stop) instead of looking again at once: that spun a core for the whole of a paced run."""
    looks = [0]
    original = Starts.next_start

    def counted(self: Starts, row: FrontierRow) -> float | None:
        looks[0] += 1
        return original(self, row)

    monkeypatch.setattr(Starts, "next_start", counted)
    site = serve_site("sync-change")
    cfg = config(tmp_path, node("PACED", site, 6))  # a turn every 170 ms: spinning, thousands
    summary = run_node(cfg, cfg.nodes[0], stop=threading.Event())
    assert summary.status == "ok" and summary.fetched >= 5
    assert looks[0] < 20 * summary.fetched, looks[0]
