"""Claims on frontier pages: who is processing a page, until when.

A claim is an owner (`host:pid:run`) and a lease. Any number of processes on
any number of machines can share one PostgreSQL frontier: `claim_due` picks
due, unclaimed pages with `FOR UPDATE SKIP LOCKED`; a worker that dies leaves
leases that expire, and on its own host a rerun frees them at once (the
owner's process is gone). Finishing a page (`frontier.finish_page`) clears its
claim in the same transaction that writes its records.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime, timedelta

from sqlalchemy import or_, select, update

from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import FrontierRow, row_from_mapping
from adapter.store.schema import utc


def owner_id(run_id: int | None = None) -> str:
    """host:pid[:run] — lets a rerun on the same host free the claims of a dead process."""
    base = f"{socket.gethostname()}:{os.getpid()}"
    return f"{base}:{run_id}" if run_id is not None else base


def claim_due(
    store: Store, node_id: str, owner: str, *, batch: int = 20, lease: timedelta
) -> list[FrontierRow]:
    """Claim up to `batch` due, unclaimed pages (oldest id first) for `owner`."""
    f = t.frontier
    now = datetime.now(UTC)
    free = or_(f.c.claimed_by.is_(None), f.c.lease_until < now)
    pick = (
        select(f.c.id)
        .where(f.c.node_id == node_id, f.c.due.is_(True), free)
        .order_by(f.c.id)
        .limit(batch)
    )
    with store.write() as conn:
        if conn.dialect.name == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        ids = list(conn.execute(pick).scalars())
        if not ids:
            return []
        conn.execute(
            update(f).where(f.c.id.in_(ids)).values(claimed_by=owner, lease_until=now + lease)
        )
        rows = conn.execute(select(f).where(f.c.id.in_(ids)).order_by(f.c.id)).mappings()
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
