"""The process-wide lease keeper: one thread renews every owner's claims on its own cadence."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapter.models import SitemapEntry
from adapter.store import claims
from adapter.store import frontier as fr
from adapter.store.claims import LeaseKeeper
from adapter.store.db import Store
from tests.support.stores import sqlite_url

NODE = "urn:node:LEASES"


def keeper_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "lease-keeper")


def wait_for(done: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_one_thread_renews_each_owner_until_its_block_ends(tmp_path: Path) -> None:
    renewed: Counter[str] = Counter()
    keeper = LeaseKeeper(renew=lambda _store, owner, _lease: renewed.update([owner]))
    store = Store.open(sqlite_url(tmp_path))
    before = keeper_threads()
    try:
        with keeper.keep(store, "a", timedelta(seconds=0.3)):
            with keeper.keep(store, "b", timedelta(seconds=0.6)):
                assert keeper_threads() == before + 1  # one thread for both
                wait_for(lambda: renewed["a"] >= 4 and renewed["b"] >= 2)
                assert renewed["a"] >= 4 and renewed["b"] >= 2
            gone = renewed["b"]
            since = renewed["a"]
            time.sleep(0.3)
            assert renewed["b"] == gone  # b's block ended: no more renewals
            assert renewed["a"] > since
        assert keeper.holding() == 0
    finally:
        store.close()


def test_nested_blocks_of_one_owner_renew_once_per_cadence(tmp_path: Path) -> None:
    renewed: Counter[str] = Counter()
    keeper = LeaseKeeper(renew=lambda _store, owner, _lease: renewed.update([owner]))
    store = Store.open(sqlite_url(tmp_path))
    try:
        with keeper.keep(store, "a", timedelta(seconds=0.3)):
            with keeper.keep(store, "a", timedelta(seconds=0.3)):
                assert keeper.holding() == 1
                time.sleep(0.45)  # renewals at 0.1 s intervals: about 4, not 8
            assert keeper.holding() == 1  # the outer block still holds it
        assert 2 <= renewed["a"] <= 6
        assert keeper.holding() == 0
    finally:
        store.close()


def test_claims_in_a_real_store_outlive_their_first_lease(tmp_path: Path) -> None:
    store = Store.open(sqlite_url(tmp_path))
    try:
        entries = [
            SitemapEntry(f"https://r/{n}", "https://r/sitemap.xml", None, ()) for n in (1, 2)
        ]
        fr.upsert_entries(store, NODE, 1, entries)
        lease = timedelta(seconds=0.45)
        assert len(claims.claim_due(store, NODE, "w", batch=5, lease=lease)) == 2
        with LeaseKeeper().keep(store, "w", lease):
            time.sleep(0.75)  # past the first lease: renewed twice or more meanwhile
            taken = claims.claim_due(store, NODE, "other", batch=5, lease=lease)
        assert taken == []
        time.sleep(0.5)  # no longer renewed: the lease runs out
        assert len(claims.claim_due(store, NODE, "other", batch=5, lease=lease)) == 2
    finally:
        store.close()


def test_a_failing_renewal_is_logged_and_the_keeper_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[datetime] = []

    def renew(_store: Store, _owner: str, _lease: timedelta) -> None:
        calls.append(datetime.now(UTC))
        if len(calls) == 1:
            raise RuntimeError("database is locked")

    keeper = LeaseKeeper(renew=renew)
    store = Store.open(sqlite_url(tmp_path))
    try:
        with keeper.keep(store, "w", timedelta(seconds=0.3)):
            wait_for(lambda: len(calls) >= 3)
        assert len(calls) >= 3
        assert "renewing the claims of w failed: database is locked" in caplog.text
    finally:
        store.close()
