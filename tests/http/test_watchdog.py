"""The fetch watchdog sleeps until the earliest deadline and is woken only for an earlier one."""

from __future__ import annotations

import socket
import time

from adapter.http.addresses import AddressPolicy
from adapter.http.connections import Exchange, Watchdog


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
    dog = Watchdog()
    policy = AddressPolicy()
    soon = Exchange(policy, time.monotonic() + 0.5)
    left, right = socket.socketpair()
    soon.attach(left)
    dog.add(soon)
    for _ in range(3 * Watchdog.COMPACT_AT):
        ex = Exchange(policy, time.monotonic() + 0.2)
        dog.add(ex)
        ex.finish()
        dog.finished()
    left.settimeout(10)
    began = time.monotonic()
    assert left.recv(1) == b""  # shut down by the watchdog at its deadline
    assert time.monotonic() - began < 5
    assert soon.expired
    left.close()
    right.close()
