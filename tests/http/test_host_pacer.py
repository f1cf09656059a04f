"""`HostPacer` on a virtual clock: starts an interval apart, Retry-After holds, Crawl-delay
widens, a request that left late moves the next on. One test, marked `slow`, paces in real
time; the store-backed pacer across processes is in test_politeness.py."""

from __future__ import annotations

import itertools
import time

import pytest

from adapter.http.politeness import HostPacer, NoPacer, Pacer
from tests.support.clock import FakeClock


def starts(pacer: Pacer, clock: FakeClock, host: str, count: int) -> list[float]:
    """When each of `count` requests to `host`, one after another, was let go."""
    out = []
    for _ in range(count):
        with pacer.slot(host):
            out.append(clock.monotonic())
    return out


def test_starts_are_one_interval_apart() -> None:
    clock = FakeClock()
    pacer = HostPacer(requests_per_second=2.0, concurrency=1, clock=clock)
    began = clock.monotonic()
    assert starts(pacer, clock, "h", 4) == [began, began + 0.5, began + 1.0, began + 1.5]


def test_hosts_are_paced_apart_from_each_other() -> None:
    clock = FakeClock()
    pacer = HostPacer(requests_per_second=1.0, concurrency=1, clock=clock)
    began = clock.monotonic()
    assert starts(pacer, clock, "a", 1) == starts(pacer, clock, "b", 1) == [began]
    assert clock.sleeps == []


def test_retry_after_holds_the_host() -> None:
    clock = FakeClock()
    pacer = HostPacer(requests_per_second=10.0, concurrency=1, clock=clock)
    starts(pacer, clock, "h", 1)
    asked = clock.monotonic()
    pacer.hold("h", 30.0)
    [after] = starts(pacer, clock, "h", 1)
    assert after == asked + 30.0
    assert pacer.turn("h").last == after


def test_crawl_delay_widens_the_interval_and_moves_the_next_start() -> None:
    clock = FakeClock()
    pacer = HostPacer(requests_per_second=10.0, concurrency=1, clock=clock)
    [first] = starts(pacer, clock, "h", 1)
    assert pacer.set_crawl_delay("h", 2.0)  # learnt after the first request
    assert pacer.interval("h") == 2.0
    [second, third] = starts(pacer, clock, "h", 2)
    assert second == pytest.approx(first + 2.0) and third == pytest.approx(second + 2.0)


def test_a_crawl_delay_below_the_rate_changes_nothing() -> None:
    clock = FakeClock()
    pacer = HostPacer(requests_per_second=10.0, concurrency=1, clock=clock)
    assert pacer.set_crawl_delay("h", 0.01)
    assert pacer.interval("h") == pytest.approx(0.1)


def test_a_request_that_left_late_moves_the_next_start_on() -> None:
    clock = FakeClock()
    pacer = HostPacer(requests_per_second=2.0, concurrency=1, clock=clock)
    [first] = starts(pacer, clock, "h", 1)
    clock.advance(0.3)
    pacer.sent("h", clock.monotonic())  # written 0.3 s after it was let go
    [second] = starts(pacer, clock, "h", 1)
    assert second == pytest.approx(first + 0.3 + 0.5)


def test_no_pacer_keeps_no_pace() -> None:
    pacer = NoPacer()
    assert not pacer.set_crawl_delay("h", 5.0)  # so robots.txt does not report it honoured
    pacer.hold("h", 60.0)
    pacer.sent("h", 0.0)
    with pacer.slot("h"):
        pass


@pytest.mark.slow
def test_starts_are_one_interval_apart_in_real_time() -> None:
    pacer = HostPacer(requests_per_second=20.0, concurrency=1)
    began = []
    for _ in range(4):
        with pacer.slot("h"):
            began.append(pacer.turn("h").last)  # when it was let go, on the real clock
    assert all(b - a >= 0.05 for a, b in itertools.pairwise(began))
    assert began[-1] <= time.monotonic()
