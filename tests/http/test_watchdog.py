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
