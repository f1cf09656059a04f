"""A node's fetchers: its limits, trusted origins, store-backed pacer and robots.txt gate.

Shared by the sync run, the `adapter worker` loop and the processes of a
multi-process sync, so each builds its fetchers the same way.
"""

from __future__ import annotations

import threading
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.discovery.robots import RobotsCache
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.store.db import Store
from adapter.store.hostrate import StorePacer


def node_pacer(store: Store, node: NodeSettings, owner: str) -> StorePacer:
    """The node's politeness, held across every process that shares `store`."""
    pol = node.politeness
    hold = node.limits().total_timeout + 30.0
    return StorePacer(store, owner, pol.requests_per_second, pol.concurrency, hold_seconds=hold)


def node_fetcher(store: Store, node: NodeSettings, owner: str) -> tuple[Fetcher, Any]:
    """A fetcher with the node's limits, trusted origins, store pacer and robots.txt gate."""

    pol = node.politeness
    fetcher = Fetcher(
        node.limits(),
        user_agent=pol.user_agent,
        policy=AddressPolicy(node.trusted_origins()),
        pacer=node_pacer(store, node, owner),
    )
    robots = RobotsCache(fetcher, pol.user_agent, honour_crawl_delay=pol.honour_crawl_delay)
    fetcher.gate = robots.gate
    return fetcher, robots


class ThreadFetchers:
    """One Fetcher (one pool manager) per thread, sharing `base`'s pacer, gate and host health."""

    def __init__(self, base: Fetcher) -> None:
        self.base = base
        self._local = threading.local()
        self._all: list[Fetcher] = []
        self._lock = threading.Lock()

    def get(self) -> Fetcher:
        fetcher: Fetcher | None = getattr(self._local, "fetcher", None)
        if fetcher is None:
            b = self.base
            fetcher = Fetcher(
                b.limits,
                user_agent=b.user_agent,
                policy=b.policy,
                pacer=b.pacer,
                gate=b.gate,
                retry_base_delay=b.retry_base_delay,
            )
            fetcher.health = b.health  # a host paused by one thread is paused for all
            self._local.fetcher = fetcher
            with self._lock:
                self._all.append(fetcher)
        return fetcher

    def close(self) -> None:
        with self._lock:
            for fetcher in self._all:
                fetcher.close()
            self._all.clear()
