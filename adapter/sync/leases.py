"""One thread per process renews the leases of every claim the process holds.

A claim whose lease runs out is free for any worker to take (so a killed
process loses its pages to the others); a live process renews its claims every
third of the lease. That used to be a thread per node run: at 200 nodes side
by side, 200 threads that each woke once every few minutes, about 40 KB of
stack, thread state and frames apiece. One thread keeps every (store, owner,
lease) registered here, each on its own cadence.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import timedelta

from adapter.store.claims import renew_leases
from adapter.store.db import Store

log = logging.getLogger(__name__)

Renew = Callable[[Store, str, timedelta], object]
_Key = tuple[int, str, float]  # (id of the store, owner, lease seconds)


@dataclass(slots=True)
class _Held:
    store: Store
    owner: str
    lease: timedelta
    users: int  # blocks inside `keep` for this key
    due: float  # monotonic time of the next renewal


class LeaseKeeper:
    """Renews each registered owner's claims every third of its lease, from one daemon thread."""

    def __init__(self, renew: Renew = renew_leases, clock: Callable[[], float] = time.monotonic):
        self._renew = renew
        self._clock = clock
        self._held: dict[_Key, _Held] = {}
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None

    @contextmanager
    def keep(self, store: Store, owner: str, lease: timedelta) -> Iterator[None]:
        """Renew `owner`'s claims in `store` while the block runs (nested blocks share one)."""
        key = (id(store), owner, lease.total_seconds())
        with self._cv:
            held = self._held.get(key)
            if held is None:
                due = self._clock() + lease.total_seconds() / 3
                self._held[key] = _Held(store, owner, lease, 1, due)
            else:
                held.users += 1
            self._start()
            self._cv.notify()
        try:
            yield
        finally:
            with self._cv:
                held = self._held[key]
                held.users -= 1
                if not held.users:
                    del self._held[key]

    def holding(self) -> int:
        """How many (store, owner, lease) are being renewed."""
        with self._cv:
            return len(self._held)

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            for held in self._wait_for_due():
                try:  # a store hiccup: the next renewal tries again
                    self._renew(held.store, held.owner, held.lease)
                except Exception as exc:
                    log.warning("renewing the claims of %s failed: %s", held.owner, exc)

    def _wait_for_due(self) -> list[_Held]:
        """Sleep until some registration is due; those due, their next renewal set."""
        with self._cv:
            while True:
                now = self._clock()
                due = [h for h in self._held.values() if h.due <= now]
                if due:
                    for held in due:
                        held.due = now + held.lease.total_seconds() / 3
                    return due
                soonest = min((h.due for h in self._held.values()), default=None)
                self._cv.wait(None if soonest is None else soonest - now)


LEASES = LeaseKeeper()


def lease_keeper(store: Store, owner: str, lease: timedelta) -> AbstractContextManager[None]:
    """Renew `owner`'s claims every third of the lease while the block runs."""
    return LEASES.keep(store, owner, lease)
