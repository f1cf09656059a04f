"""Sockets that connect only where the address policy allows and die at the fetch deadline.

Two gaps of a plain urllib3 (or `requests`) connection are closed here:
- its read timeout is per `recv`, so a server that trickles its status line,
  headers or body one byte at a time holds a worker forever; an `Exchange`
  (one per fetch) registers every socket the fetch uses with a watchdog
  thread that shuts the socket down when the fetch's total time is up;
- DNS is resolved once more by the socket layer after any check we make, so
  a name could answer a public address to the check and 127.0.0.1 to the
  connection (DNS rebinding); our connections resolve the name once, check
  every address, and connect to a checked address while keeping the name for
  the Host header and TLS SNI.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import certifi
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from adapter.http.addresses import AddressPolicy
from adapter.http.clock import SYSTEM_CLOCK, Clock


class Exchange:
    """One fetch: its policy, its deadline (on `clock`) and the sockets it has used."""

    def __init__(self, policy: AddressPolicy, deadline: float, clock: Clock = SYSTEM_CLOCK) -> None:
        self.policy = policy
        self.deadline = deadline
        self.clock = clock
        self.expired = False
        self.done = False
        self.on_sent: Callable[[float], None] | None = None  # told when a request is written
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            if self.expired:
                _shutdown(sock)
            elif not any(s is sock for s in self._sockets):
                self._sockets.append(sock)

    def expire(self) -> None:
        """Called by the watchdog at the deadline: every blocked read returns at once."""
        with self._lock:
            if self.done:  # finished in time; its sockets may be back in the pool
                return
            self.expired = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shutdown(sock)

    def finish(self) -> None:
        with self._lock:
            self.done = True
            self._sockets = []


def _shutdown(sock: socket.socket) -> None:
    # the plain socket method, also for TLS sockets: a blocked SSL read in
    # another thread must see EOF, not have its SSL object pulled away
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class Watchdog:
    """One daemon thread that expires exchanges at their deadlines, on its clock."""

    # finished exchanges left on the heap before it is rebuilt without them (at least this
    # many, and at least as many as those still running)
    COMPACT_AT = 256

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self.clock = clock
        self._heap: list[tuple[float, int, Exchange]] = []
        self._counter = itertools.count()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        # exchanges finished since the last rebuild; an upper bound on the finished entries
        # (a few reach their deadline first), so at worst a rebuild comes early
        self._finished = 0

    def forked(self) -> None:
        """In a child forked from this process (`adapter.sync.checkpool`): no thread, no
        exchange of the parent's (expiring one would shut down the parent's socket, which
        the child shares), and a fresh lock (the parent's may have been held at the fork)."""
        self._heap, self._cv, self._thread, self._finished = [], threading.Condition(), None, 0

    def runs_in(self, thread: threading.Thread) -> bool:
        """Whether `thread` is this watchdog's."""
        return thread is self._thread

    def __len__(self) -> int:
        """Exchanges on the heap, finished ones included."""
        return len(self._heap)

    def finished(self) -> None:
        """An exchange ended before its deadline. Its entry would stay until then (60 s by
        default: at 200 fetches a second, 12,000 exchanges with their locks and callbacks,
        about 8 MB), so once the finished outnumber the rest the heap is rebuilt without
        them: linear, and paid for by as many fetches."""
        with self._cv:
            self._finished += 1
            if self._finished >= self.COMPACT_AT and 2 * self._finished >= len(self._heap):
                self._heap = [entry for entry in self._heap if not entry[2].done]
                heapq.heapify(self._heap)
                self._finished = 0

    def add(self, exchange: Exchange) -> None:
        with self._cv:
            heapq.heappush(self._heap, (exchange.deadline, next(self._counter), exchange))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="fetch-watchdog")
                self._thread.daemon = True
                self._thread.start()
            # the thread sleeps until the earliest deadline: wake it only for an earlier one
            # (fetches share one total_timeout, so rarely; a wake-up per fetch cost a thread
            # switch and the GIL each time)
            if self._heap[0][2] is exchange:
                self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._heap:
                    self._cv.wait()
                deadline, _, exchange = self._heap[0]
                now = self.clock.monotonic()
                if deadline > now:
                    self.clock.wait_until(self._cv, deadline)
                    continue
                heapq.heappop(self._heap)
            exchange.expire()


WATCHDOG = Watchdog()
os.register_at_fork(after_in_child=WATCHDOG.forked)


def fork_safe() -> bool:
    """Whether this process may fork a child that goes on running Python: it runs no thread
    but this one, the main one, and the watchdog, which a child starts afresh. Another
    thread could hold a lock the child would then wait on forever."""
    here = threading.current_thread()
    return here is threading.main_thread() and all(
        t is here or WATCHDOG.runs_in(t) for t in threading.enumerate()
    )


_CURRENT: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
    "adapter_exchange", default=None
)


@contextmanager
def exchange(
    policy: AddressPolicy, deadline: float, watchdog: Watchdog = WATCHDOG
) -> Iterator[Exchange]:
    """Run one fetch under a deadline (on the watchdog's clock): sockets opened or reused
    inside are watched."""
    current = Exchange(policy, deadline, watchdog.clock)
    token = _CURRENT.set(current)
    watchdog.add(current)
    try:
        yield current
    finally:
        current.finish()
        watchdog.finished()
        _CURRENT.reset(token)


class _GuardedMixin:
    """Resolve once, check, connect to the checked address; register with the exchange."""

    scheme = "http"
    host: str
    port: int
    sock: socket.socket | None
    _dns_host: str

    def _new_conn(self) -> socket.socket:
        current = _CURRENT.get()
        if current is None:
            sock: socket.socket = super()._new_conn()  # type: ignore[misc]
            return sock
        addresses = current.policy.addresses_for(self.scheme, self._dns_host, self.port)
        name = self._dns_host
        last: Exception | None = None
        for address in addresses:
            self._dns_host = address  # connect here; Host and SNI come from `name` below
            try:
                sock = super()._new_conn()  # type: ignore[misc]
            except OSError as exc:
                last = exc
                continue
            finally:
                self._dns_host = name
            current.attach(sock)
            return sock
        assert last is not None  # getaddrinfo never returns an empty list
        raise last

    def request(self, *args: Any, **kwargs: Any) -> None:
        current = _CURRENT.get()
        if current is not None and self.sock is not None:
            current.attach(self.sock)
        super().request(*args, **kwargs)  # type: ignore[misc]
        if current is not None:
            if current.on_sent is not None:  # the pacer keeps the next start after this
                current.on_sent(current.clock.monotonic())
            if self.sock is not None:
                current.attach(self.sock)  # a TLS socket replaces the plain one on connect


class GuardedHTTPConnection(_GuardedMixin, HTTPConnection):
    scheme = "http"


class GuardedHTTPSConnection(_GuardedMixin, HTTPSConnection):
    scheme = "https"


class GuardedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class GuardedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


POOLS = 10  # hosts kept alive at once per fetcher (requests' default)
POOL_SIZE = 10  # connections kept per host


def guarded_pools() -> urllib3.PoolManager:
    """Keep-alive pools whose connections are guarded as above; TLS verified against
    certifi's bundle (what `requests` verifies against by default)."""
    pools = urllib3.PoolManager(
        num_pools=POOLS,
        maxsize=POOL_SIZE,
        block=False,
        cert_reqs="CERT_REQUIRED",
        ca_certs=certifi.where(),
    )
    pools.pool_classes_by_scheme = {
        "http": GuardedHTTPConnectionPool,
        "https": GuardedHTTPSConnectionPool,
    }
    return pools
