"""Claims on frontier pages: who is processing a page, until when.

A claim is an owner (`host:pid:run`) and a lease. Any number of processes on
any number of machines can share one PostgreSQL frontier: `claim_due` picks
due, unclaimed pages with `FOR UPDATE SKIP LOCKED`; a worker that dies leaves
leases that expire, and on its own host a rerun frees them at once (the
owner's process is gone). Finishing a page (`frontier.finish_page`) clears its
claim in the same transaction that writes its records.

A live process renews its claims every third of the lease, from one thread
(`LeaseKeeper`). That used to be a thread per node run: at 200 nodes side by
side, 200 threads that each woke once every few minutes, about 40 KB of stack,
thread state and frames apiece.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import or_, select, update

from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow, row_from_mapping
from adapter.store.schema import utc

log = logging.getLogger(__name__)


def owner_id(run_id: int | None = None) -> str:
    """host:pid[:run] — lets a rerun on the same host free the claims of a dead process."""
    base = f"{socket.gethostname()}:{os.getpid()}"
    return f"{base}:{run_id}" if run_id is not None else base


def claim_due(
    store: Store,
    node_id: str,
    owner: str,
    *,
    batch: int = 20,
    lease: timedelta,
    urls: Collection[str] | None = None,
) -> list[FrontierRow]:
    """Claim up to `batch` due, unclaimed pages (oldest id first) for `owner`; only those
    among `urls` when given (the pages a COAR Notify request made due)."""
    f = t.frontier
    now = datetime.now(UTC)
    free = or_(f.c.claimed_by.is_(None), f.c.lease_until < now)
    pick = (
        select(f.c.id)
        .where(f.c.node_id == node_id, f.c.due.is_(True), free)
        .order_by(f.c.id)
        .limit(batch)
    )
    if urls is not None:
        pick = pick.where(f.c.url.in_(list(urls)))
    with store.write() as conn:
        if conn.dialect.name == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        ids = list(conn.execute(pick).scalars())
        if not ids:
            return []
        conn.execute(
            update(f).where(f.c.id.in_(ids)).values(claimed_by=owner, lease_until=now + lease)
        )
        g = t.graph_documents  # a sitegraph's Dataset is checked from its document
        rows = conn.execute(
            select(f, g.c.document)
            .select_from(f.outerjoin(g, g.c.frontier_id == f.c.id))
            .where(f.c.id.in_(ids))
            .order_by(f.c.id)
        ).mappings()
        return [row_from_mapping(r) for r in rows]


def release_stale_claims(store: Store, node_id: str) -> int:
    """Free claims whose lease ran out, or whose owner is a dead process on this host."""
    f = t.frontier
    now = datetime.now(UTC)
    host = socket.gethostname()
    with store.write() as conn:
        claims = conn.execute(
            select(f.c.claimed_by, f.c.lease_until)
            .where(f.c.node_id == node_id, f.c.claimed_by.is_not(None))
            .distinct()
        ).all()
        dead = [o for o, lease in claims if utc(lease) < now or _dead_local(o, host)]
        if not dead:
            return 0
        result = conn.execute(
            update(f)
            .where(f.c.node_id == node_id, f.c.claimed_by.in_(dead))
            .values(claimed_by=None, lease_until=None)
        )
    return int(result.rowcount)


def release_claims(store: Store, node_id: str, owner: str) -> int:
    """Give back the pages `owner` claimed but did not finish (a stopped run)."""
    f = t.frontier
    with store.write() as conn:
        result = conn.execute(
            update(f)
            .where(f.c.node_id == node_id, f.c.claimed_by == owner)
            .values(claimed_by=None, lease_until=None)
        )
    return int(result.rowcount)


def dead_local_owner(owner: str) -> bool:
    """True when `owner` (host:pid[:run]) names a process on this host that no longer runs."""
    return _dead_local(owner, socket.gethostname())


def _dead_local(owner: str, host: str) -> bool:
    parts = owner.split(":")
    if len(parts) < 2 or parts[0] != host or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def renew_leases(store: Store, owner: str, lease: timedelta) -> int:
    """Push the lease of every page `owner` holds to now + `lease`; how many it holds."""
    f = t.frontier
    with store.write() as conn:
        result = conn.execute(
            update(f).where(f.c.claimed_by == owner).values(lease_until=datetime.now(UTC) + lease)
        )
    return int(result.rowcount)


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

    def __init__(self, renew: Renew | None = None, clock: Callable[[], float] = time.monotonic):
        self._renew = renew or renew_leases
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
