"""The fetch watchdog sleeps until the earliest deadline and is woken only for an earlier one.

Deadlines pass on a virtual clock (`tests.support.clock`); one test, marked
`slow`, lets them pass in real time. A socket shut down by the watchdog reads
EOF at once, so each test knows the watchdog has acted without timing it.
"""

from __future__ import annotations

import socket
import time

import pytest

from adapter.http.addresses import AddressPolicy
from adapter.http.connections import Exchange, Watchdog
from tests.support.clock import FakeClock


def watched(dog: Watchdog, deadline: float) -> tuple[Exchange, socket.socket, socket.socket]:
    """An exchange on `dog` holding one end of a socket pair (read `left` to see it expire)."""
    ex = Exchange(AddressPolicy(), deadline, dog.clock)
    left, right = socket.socketpair()
    left.settimeout(10)
    ex.attach(left)
    dog.add(ex)
    return ex, left, right


def test_an_earlier_deadline_wakes_the_watchdog_on_virtual_time() -> None:
    clock = FakeClock()
    dog = Watchdog(clock)
    now = clock.monotonic()
    late, late_left, late_right = watched(dog, now + 30)  # the watchdog now waits for 30 s
    soon, left, right = watched(dog, now + 0.2)
    clock.advance(0.2)
    assert left.recv(1) == b""  # shut down by the watchdog, not by the 10 s timeout
    assert soon.expired and not late.expired
    clock.advance(30)
    assert late_left.recv(1) == b""
    assert late.expired
    for sock in (left, right, late_left, late_right):
        sock.close()


def test_a_finished_exchange_keeps_its_sockets_on_virtual_time() -> None:
    clock = FakeClock()
    dog = Watchdog(clock)
    now = clock.monotonic()
    done, left, right = watched(dog, now + 0.05)
    done.finish()
    after, after_left, after_right = watched(dog, now + 0.1)
    clock.advance(1)
    assert after_left.recv(1) == b""  # the later deadline was seen to, so the earlier too
    right.sendall(b"x")
    assert left.recv(1) == b"x"
    assert not done.expired and after.expired
    for sock in (left, right, after_left, after_right):
        sock.close()


@pytest.mark.slow
def test_an_earlier_deadline_wakes_the_watchdog_and_expires_its_sockets() -> None:
    dog = Watchdog()
    now = time.monotonic()
    late = Exchange(AddressPolicy(), now + 30)
    dog.add(late)  # the watchdog now sleeps for 30 s
    soon = Exchange(AddressPolicy(), now + 0.2)
    left, right = socket.socketpair()
    soon.attach(left)
    dog.add(soon)
    left.settimeout(10)
    began = time.monotonic()
    assert left.recv(1) == b""  # shut down by the watchdog, not by the 10 s timeout
    assert time.monotonic() - began < 5
    assert soon.expired and not late.expired
    left.close()
    right.close()


@pytest.mark.slow
def test_a_finished_exchange_keeps_its_sockets() -> None:
    dog = Watchdog()
    done = Exchange(AddressPolicy(), time.monotonic() + 0.05)
    left, right = socket.socketpair()
    done.attach(left)
    done.finish()
    dog.add(done)
    time.sleep(0.3)
    right.sendall(b"x")
    left.settimeout(2)
    assert left.recv(1) == b"x"
    assert not done.expired
    left.close()
    right.close()


def test_finished_exchanges_leave_the_heap_long_before_their_deadlines() -> None:
    """Every fetch puts an exchange on the heap for the fetch's whole deadline (60 s by
    default); finished ones are dropped once they outnumber the rest, so the heap follows
    the fetches in flight, not the fetch rate times the deadline."""
    dog = Watchdog()
    policy = AddressPolicy()
    running = [Exchange(policy, time.monotonic() + 60) for _ in range(100)]
    for ex in running:
        dog.add(ex)
    for _ in range(5000):
        ex = Exchange(policy, time.monotonic() + 60)
        dog.add(ex)
        ex.finish()
        dog.finished()
    assert len(dog) <= 2 * max(Watchdog.COMPACT_AT, len(running)) + 1
    assert all(any(entry is ex for _, _, entry in dog._heap) for ex in running)


def test_a_running_exchange_still_expires_after_the_heap_is_rebuilt() -> None:
    clock = FakeClock()
    dog = Watchdog(clock)
    soon, left, right = watched(dog, clock.monotonic() + 0.5)
    for _ in range(3 * Watchdog.COMPACT_AT):
        ex = Exchange(AddressPolicy(), clock.monotonic() + 0.2, clock)
        dog.add(ex)
        ex.finish()
        dog.finished()
    clock.advance(0.5)
    assert left.recv(1) == b""  # shut down by the watchdog at its deadline
    assert soon.expired
    left.close()
    right.close()
