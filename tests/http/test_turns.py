"""What a pacer tells a node's loop of a host's turns (`Pacer.turn`), for both pacers."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter.http.politeness import NO_TURN, HostPacer, NoPacer, Pacer
from adapter.store.claims import owner_id
from adapter.store.db import Store
from adapter.store.hostrate import StorePacer
from tests.support.stores import sqlite_url


@pytest.fixture(params=["host", "store"])
def pacer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pacer]:
    if request.param == "host":
        yield HostPacer(requests_per_second=4.0, concurrency=1)
        return
    store = Store.open(sqlite_url(tmp_path))
    paced = StorePacer(store, owner_id() + ":turns", 4.0, 1)
    yield paced
    paced.close()
    store.close()


def take_a_turn(pacer: Pacer) -> None:
    with pacer.slot("h"):
        pass


def test_a_turn_counts_its_latest_start_the_next_and_who_waits(pacer: Pacer) -> None:
    before = pacer.turn("h")
    assert (before.last, before.waiting, before.interval) == (float("-inf"), 0, 0.25)
    with pacer.slot("h"):
        went = time.monotonic()
        now = pacer.turn("h")
        assert went - 0.05 <= now.last <= went
        assert now.next == pytest.approx(now.last + 0.25, abs=0.01)
        assert now.waiting == 0
        second = threading.Thread(target=take_a_turn, args=(pacer,))
        second.start()  # concurrency 1: it waits inside `slot` for the one held here
        deadline = time.monotonic() + 5
        while pacer.turn("h").waiting == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pacer.turn("h").waiting == 1
    second.join(5)
    after = pacer.turn("h")
    assert after.waiting == 0 and after.last >= now.next - 0.05  # it went at its turn


def test_check_dataset_has_no_turns_to_wait_for() -> None:
    assert NoPacer().turn("h") == NO_TURN
