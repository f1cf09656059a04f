"""A host's concurrency slots on SQLite: record locks of a file, shared by processes.

Each test forks a child that only touches the slot file (no store, no threads), so the
fork is safe in a test worker; the child answers through its exit status.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapter.store.db import Store
from adapter.store.hostrate import StorePacer
from adapter.store.hostslots import SlotFile, close_slots, open_slots
from tests.support.stores import sqlite_url

HOST = "repo.example:80"


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "store.db-hostslots")


def in_child(work: Callable[[], bool], before_exit: Callable[[], None] | None = None) -> int:
    """Fork a child that runs `work` and exits 0 when it returns True (1 if not, 2 if it
    raised); returns the child's pid."""
    pid = os.fork()
    if pid == 0:
        status = 2
        try:
            status = 0 if work() else 1
        finally:
            os._exit(status)
    return pid


def status_of(pid: int, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return -9


def take_within(slots: SlotFile, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if slots.take(HOST, 1, "child") is not None:
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def held(path: str) -> Iterator[SlotFile]:
    slots = open_slots(path)
    yield slots
    close_slots(slots)


def test_a_slot_one_process_holds_is_not_another_s(held: SlotFile, path: str) -> None:
    assert held.take(HOST, 1, "parent") == 0
    assert status_of(in_child(lambda: open_slots(path).take(HOST, 1, "child") is None)) == 0
    assert held.take("other.example:80", 1, "parent") == 0  # another host's slots are its own


def test_a_killed_process_slots_are_free_at_once(held: SlotFile, path: str) -> None:
    # the child takes the one slot and ends without giving it back
    assert status_of(in_child(lambda: open_slots(path).take(HOST, 1, "child") == 0)) == 0
    assert held.take(HOST, 1, "parent") == 0  # no lease to run out, no dead holder to look for


def test_a_forked_child_takes_the_slots_its_parent_gives_back(held: SlotFile, path: str) -> None:
    """The child inherits the parent's record of held slots, not its locks: it forgets it."""
    assert held.take(HOST, 1, "parent") == 0
    read, write = os.pipe()

    def after_the_parent_gave_back() -> bool:
        os.read(read, 1)
        return take_within(open_slots(path), 10)

    pid = in_child(after_the_parent_gave_back)
    held.give(HOST, 0)
    os.write(write, b"x")
    assert status_of(pid) == 0


def test_the_threads_of_one_process_share_its_slots(held: SlotFile, path: str) -> None:
    """Record locks are the process's: a second view of the file would hand out a slot the
    first holds, and closing it would drop the first's locks; so there is one view."""
    assert held.take(HOST, 2, "a") == 0
    second = open_slots(path)
    assert second is held
    assert second.take(HOST, 2, "b") == 1
    assert second.take(HOST, 2, "c") is None
    close_slots(second)  # another user of the file ends: the slots taken stay held
    assert status_of(in_child(lambda: open_slots(path).take(HOST, 2, "child") is None)) == 0


def test_pacers_of_two_store_objects_share_the_slots(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    stores = [Store.open(url), Store.open(url)]
    pacers = [StorePacer(store, f"owner-{i}", 1000.0, 1) for i, store in enumerate(stores)]
    try:
        with pacers[0].slot(HOST):
            assert pacers[1]._slots is not None
            assert pacers[1]._slots.take(HOST, 1, pacers[1]) is None
        with pacers[1].slot(HOST):  # given back at the block's end
            pass
    finally:
        for pacer, store in zip(pacers, stores, strict=True):
            pacer.close()
            store.close()


def test_a_pacer_that_closes_gives_back_what_it_holds(tmp_path: Path) -> None:
    store = Store.open(sqlite_url(tmp_path))
    other = StorePacer(store, "other", 1000.0, 1)  # keeps the slot file open throughout
    pacer = StorePacer(store, "owner", 1000.0, 1)
    pacer._acquire(HOST)  # never freed: its thread was cut off
    pacer.close()
    assert other._slots is not None and other._slots.take(HOST, 1, other) == 0
    other.close()
    store.close()
