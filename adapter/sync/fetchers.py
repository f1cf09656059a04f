"""A node's fetchers: its limits, trusted origins, store-backed pacer and robots.txt gate.

Shared by the sync run, the `adapter worker` loop and the checking pool's
children, so each builds its fetchers the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.discovery.robots import RobotsCache
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.store.db import Store
from adapter.store.hostrate import StorePacer


def node_fetcher(store: Store, node: NodeSettings, owner: str) -> tuple[Fetcher, Any]:
    """A fetcher with the node's limits, trusted origins, robots.txt gate and pacer, the
    node's politeness held across every process that shares `store`."""
    pol = node.politeness
    hold = node.limits().total_timeout + 30.0
    pacer = StorePacer(store, owner, pol.requests_per_second, pol.concurrency, hold_seconds=hold)
    fetcher = Fetcher(
        node.limits(),
        user_agent=pol.user_agent,
        policy=AddressPolicy(node.trusted_origins()),
        pacer=pacer,
    )
    robots = RobotsCache(fetcher, pol.user_agent, honour_crawl_delay=pol.honour_crawl_delay)
    fetcher.gate = robots.gate
    return fetcher, robots


class ThreadFetchers:
    """A node's Fetchers (a pool manager each), sharing `base`'s pacer, gate and host health,
    one per page in flight (`borrow`)."""

    def __init__(self, base: Fetcher) -> None:
        self.base = base
        self._all: list[Fetcher] = []
        self._idle: list[Fetcher] = []  # borrowed and given back
        self._lock = threading.Lock()

    @contextmanager
    def borrow(self) -> Iterator[Fetcher]:
        """One no other page holds meanwhile. Threads shared by many nodes would otherwise
        each build one of every node they served: a kept-alive connection per node and
        thread. A node gets as many as it has pages in flight at once (mostly one)."""
        with self._lock:
            fetcher = self._idle.pop() if self._idle else None
        fetcher = fetcher or self._new()
        try:
            yield fetcher
        finally:
            with self._lock:
                self._idle.append(fetcher)

    def _new(self) -> Fetcher:
        b = self.base
        fetcher = Fetcher(
            b.limits,
            user_agent=b.user_agent,
            policy=b.policy,
            pacer=b.pacer,
            gate=b.gate,
            retry_base_delay=b.retry_base_delay,
        )
        fetcher.health = b.health  # a host paused by one page is paused for all
        with self._lock:
            self._all.append(fetcher)
        return fetcher

    def close(self) -> None:
        with self._lock:
            for fetcher in self._all:
                fetcher.close()
            self._all.clear()
            self._idle.clear()
