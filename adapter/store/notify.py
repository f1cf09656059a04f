"""COAR Notify in the store: what trusted origins sent (`notify_inbox`) and what the adapter
sends (`notify_outbox`), so nothing is lost across a restart.

A received request, its page made due and its first answer are written in one transaction
(`receive`); a request is settled (accepted, rejected, withdrawn) together with the answer it
gets (`settle`). Outgoing notifications stay `pending` until a receiver takes them, are
retried after `next_attempt_at`, and end `delivered` or `failed` (adapter.notify.sender).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Select, Table, func, select, update

from adapter.dataone.records import DATASET_FORMAT
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import make_due_now
from adapter.store.ledger import live_heads
from adapter.store.overview import PER_PAGE, Listing, window
from adapter.store.schema import utc, utc_or_none

PENDING = "pending"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A notification to send: to whom, why, and its JSON-LD."""

    node_id: str
    kind: str  # tentative-accept | accept | reject | announce-ingest | announce-status | ...
    target_inbox: str
    body: dict[str, Any]
    in_reply_to: str | None = None
    page_url: str | None = None


@dataclass(frozen=True, slots=True)
class Incoming:
    """A received notification from a trusted origin, as kept."""

    id: int
    node_id: str
    received_at: datetime
    notification_id: str
    kind: str
    origin_id: str
    origin_inbox: str
    object_url: str | None
    state: str
    reason: str | None
    decided_at: datetime | None
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Sent:
    """An outgoing notification as kept: its delivery state and attempts."""

    id: int
    node_id: str
    created_at: datetime
    kind: str
    target_inbox: str
    in_reply_to: str | None
    page_url: str | None
    state: str  # pending | delivered | failed
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    http_status: int | None
    delivered_at: datetime | None
    body: dict[str, Any]


def _now() -> datetime:
    return datetime.now(UTC)


def enqueue(conn: Connection, out: Outgoing, now: datetime | None = None) -> int:
    """Queue `out` for sending at once, in the caller's transaction; its row id."""
    now = now or _now()
    row = conn.execute(
        t.notify_outbox.insert().values(
            node_id=out.node_id,
            created_at=now,
            kind=out.kind,
            target_inbox=out.target_inbox,
            in_reply_to=out.in_reply_to,
            page_url=out.page_url,
            body=json.dumps(out.body, ensure_ascii=False),
            state=PENDING,
            attempts=0,
            next_attempt_at=now,
        )
    )
    return int(row.inserted_primary_key[0])  # type: ignore[index]


def receive(
    store: Store,
    node_id: str,
    notification_id: str,
    kind: str,
    origin: tuple[str, str],
    object_url: str | None,
    body: dict[str, Any],
    *,
    due: bool,
    answers: Sequence[Outgoing] = (),
    state: str = PENDING,
) -> int:
    """Keep a trusted origin's notification; with `due` its page is made due now; `answers`
    queued in the same transaction. Its row id."""
    with store.write() as conn:
        row = conn.execute(
            t.notify_inbox.insert().values(
                node_id=node_id,
                received_at=_now(),
                notification_id=notification_id,
                kind=kind,
                origin_id=origin[0],
                origin_inbox=origin[1],
                object_url=object_url,
                state=state,
                body=json.dumps(body, ensure_ascii=False),
            )
        )
        if due and object_url is not None:
            make_due_now(conn, node_id, object_url)
        for answer in answers:
            enqueue(conn, answer)
        return int(row.inserted_primary_key[0])  # type: ignore[index]


def _incoming(row: Any) -> Incoming:
    return Incoming(
        id=int(row["id"]),
        node_id=row["node_id"],
        received_at=utc(row["received_at"]),
        notification_id=row["notification_id"],
        kind=row["kind"],
        origin_id=row["origin_id"],
        origin_inbox=row["origin_inbox"],
        object_url=row["object_url"],
        state=row["state"],
        reason=row["reason"],
        decided_at=utc_or_none(row["decided_at"]),
        body=json.loads(row["body"]),
    )


def pending_requests(store: Store, node_id: str | None = None) -> list[Incoming]:
    """Requests still waiting for their page's check, oldest first."""
    i = t.notify_inbox
    q = select(i).where(i.c.state == PENDING).order_by(i.c.id)
    if node_id is not None:
        q = q.where(i.c.node_id == node_id)
    with store.read() as conn:
        return [_incoming(r) for r in conn.execute(q).mappings()]


def settle(
    store: Store, request_id: int, state: str, answers: Iterable[Outgoing], reason: str = ""
) -> bool:
    """A pending request decided, its answers queued in the same transaction; False when it
    was no longer pending (withdrawn, or settled by another process meanwhile)."""
    i = t.notify_inbox
    with store.write() as conn:
        done = conn.execute(
            update(i)
            .where(i.c.id == request_id, i.c.state == PENDING)
            .values(state=state, reason=reason or None, decided_at=_now())
        )
        if not done.rowcount:
            return False
        for answer in answers:
            enqueue(conn, answer)
        return True


def withdraw(store: Store, node_id: str, origin_id: str, notification_id: str) -> bool:
    """Undo Offer: the origin's pending request with this id withdrawn; False when there was
    none pending (unknown, someone else's, or already decided)."""
    i = t.notify_inbox
    with store.write() as conn:
        done = conn.execute(
            update(i)
            .where(
                i.c.node_id == node_id,
                i.c.origin_id == origin_id,
                i.c.notification_id == notification_id,
                i.c.state == PENDING,
            )
            .values(state="withdrawn", decided_at=_now())
        )
        return bool(done.rowcount)


# -- sending -------------------------------------------------------------------------------


def _sent(row: Any) -> Sent:
    return Sent(
        id=int(row["id"]),
        node_id=row["node_id"],
        created_at=utc(row["created_at"]),
        kind=row["kind"],
        target_inbox=row["target_inbox"],
        in_reply_to=row["in_reply_to"],
        page_url=row["page_url"],
        state=row["state"],
        attempts=int(row["attempts"]),
        next_attempt_at=utc(row["next_attempt_at"]),
        last_error=row["last_error"],
        http_status=row["http_status"],
        delivered_at=utc_or_none(row["delivered_at"]),
        body=json.loads(row["body"]),
    )


def due_outgoing(store: Store, now: datetime, limit: int = 50) -> list[Sent]:
    """Pending notifications whose next attempt has come, oldest first."""
    o = t.notify_outbox
    q = (
        select(o)
        .where(o.c.state == PENDING, o.c.next_attempt_at <= now)
        .order_by(o.c.next_attempt_at, o.c.id)
        .limit(limit)
    )
    with store.read() as conn:
        return [_sent(r) for r in conn.execute(q).mappings()]


def next_attempt(store: Store) -> datetime | None:
    """When the soonest pending notification is due (None: nothing pending)."""
    o = t.notify_outbox
    with store.read() as conn:
        found = conn.execute(
            select(func.min(o.c.next_attempt_at)).where(o.c.state == PENDING)
        ).scalar()
    return utc_or_none(found)


def record_attempt(
    store: Store,
    sent_id: int,
    *,
    state: str,
    now: datetime,
    http_status: int | None = None,
    error: str | None = None,
    retry_at: datetime | None = None,
) -> None:
    """One delivery attempt: `delivered`, `failed`, or still `pending` until `retry_at`."""
    o = t.notify_outbox
    values: dict[str, Any] = {
        "state": state,
        "attempts": o.c.attempts + 1,
        "http_status": http_status,
        "last_error": error,
    }
    if state == "delivered":
        values["delivered_at"] = now
    if retry_at is not None:
        values["next_attempt_at"] = retry_at
    with store.write() as conn:
        conn.execute(update(o).where(o.c.id == sent_id, o.c.state == PENDING).values(**values))


# -- reading, for `adapter notify list` and /ops ---------------------------------------------


def received(
    store: Store, *, node_id: str | None = None, state: str | None = None, limit: int = 100
) -> list[Incoming]:
    """The newest received notifications first."""
    i = t.notify_inbox
    q = _newest(i, _matching(i, node_id=node_id, state=state), 0, limit)
    with store.read() as conn:
        return [_incoming(r) for r in conn.execute(q).mappings()]


def sent(
    store: Store,
    *,
    node_id: str | None = None,
    state: str | None = None,
    in_reply_to: str | None = None,
    limit: int = 100,
) -> list[Sent]:
    """The newest outgoing notifications first."""
    o = t.notify_outbox
    q = _newest(o, _matching(o, node_id=node_id, state=state, in_reply_to=in_reply_to), 0, limit)
    with store.read() as conn:
        return [_sent(r) for r in conn.execute(q).mappings()]


def _matching(table: Table, **equal: str | None) -> list[Any]:
    """`column == value` for each value given (None: any)."""
    return [table.c[name] == value for name, value in equal.items() if value is not None]


def _newest(table: Table, where: list[Any], offset: int, limit: int) -> Select[Any]:
    """Rows of `table` matching `where`, newest (highest id) first."""
    return select(table).where(*where).order_by(table.c.id.desc()).offset(offset).limit(limit)


def counts(store: Store) -> dict[str, dict[str, int]]:
    """How many notifications are in each state: {"received": {...}, "sent": {...}}."""
    out: dict[str, dict[str, int]] = {}
    with store.read() as conn:
        for name, table in (("received", t.notify_inbox), ("sent", t.notify_outbox)):
            rows = conn.execute(select(table.c.state, func.count()).group_by(table.c.state))
            out[name] = {str(state): int(n) for state, n in rows}
    return out


def received_since(store: Store, origin_id: str, since: datetime) -> int:
    """How many notifications this origin had accepted into the inbox since `since` (the
    per-origin rate limit, shared by every server process on the store)."""
    i = t.notify_inbox
    q = select(func.count()).where(i.c.origin_id == origin_id, i.c.received_at > since)
    with store.read() as conn:
        return int(conn.execute(q).scalar_one())


def sent_since(store: Store, target_inbox: str, kind: str, since: datetime) -> int:
    """How many notifications of `kind` were queued for this inbox since `since` (the
    per-origin limit on answers the inbox sends unasked, such as Unprocessable)."""
    o = t.notify_outbox
    q = select(func.count()).where(
        o.c.target_inbox == target_inbox, o.c.kind == kind, o.c.created_at > since
    )
    with store.read() as conn:
        return int(conn.execute(q).scalar_one())


def known(store: Store, origin_id: str, notification_id: str) -> bool:
    """Whether this origin's notification with this id was received already (a resend)."""
    i = t.notify_inbox
    q = select(i.c.id).where(i.c.origin_id == origin_id, i.c.notification_id == notification_id)
    with store.read() as conn:
        return conn.execute(q.limit(1)).first() is not None


@dataclass(frozen=True, slots=True)
class PageObject:
    """A live object of a landing page, as an answer names it."""

    pid: str
    series_id: str | None
    format_id: str
    date_uploaded: datetime


def page_objects(store: Store, node_id: str, url: str) -> list[PageObject]:
    """The live heads of the page's series (its Datasets first, then their companions)."""
    r = t.records
    with store.read() as conn:
        heads = live_heads(conn, node_id, url)
        if not heads:
            return []
        rows = conn.execute(
            select(r.c.pid, r.c.series_id, r.c.format_id, r.c.date_uploaded).where(
                r.c.node_id == node_id, r.c.pid.in_([pid for pid, _ in heads])
            )
        ).all()
    found = [PageObject(str(p), s, str(f), utc(d)) for p, s, f, d in rows]
    return sorted(found, key=lambda o: (o.format_id != DATASET_FORMAT, o.series_id or "", o.pid))


STATUS_KINDS = ("announce-not-harvestable", "announce-harvestable")


def announced_states(store: Store, node_id: str) -> dict[str, str]:
    """page URL -> the kind of the last status announcement queued for it (report_to)."""
    o = t.notify_outbox
    q = (
        select(o.c.page_url, o.c.kind)
        .where(o.c.node_id == node_id, o.c.kind.in_(STATUS_KINDS))
        .order_by(o.c.id)
    )
    with store.read() as conn:
        return {str(url): str(kind) for url, kind in conn.execute(q)}


def retry(store: Store, *, sent_id: int | None = None, node_id: str | None = None) -> int:
    """Failed notifications (one, a node's, or all) pending again, due now, their attempts
    counted from zero: for after the receiving inbox was fixed. How many."""
    o = t.notify_outbox
    q = update(o).where(o.c.state == "failed")
    if sent_id is not None:
        q = q.where(o.c.id == sent_id)
    if node_id is not None:
        q = q.where(o.c.node_id == node_id)
    with store.write() as conn:
        done = conn.execute(q.values(state=PENDING, attempts=0, next_attempt_at=_now()))
        return int(done.rowcount)


def received_page(
    store: Store, node_id: str | None, offset: int = 0, limit: int = PER_PAGE
) -> Listing[Incoming]:
    """One page of the received notifications, newest first, with their true total."""
    return _page(store, t.notify_inbox, node_id, _incoming, offset, limit)


def sent_page(
    store: Store, node_id: str | None, offset: int = 0, limit: int = PER_PAGE
) -> Listing[Sent]:
    """One page of the outgoing notifications, newest first, with their true total."""
    return _page(store, t.notify_outbox, node_id, _sent, offset, limit)


def _page(
    store: Store,
    table: Table,
    node_id: str | None,
    row: Callable[[Any], T],
    offset: int,
    limit: int,
) -> Listing[T]:
    """One page of `table` for `node_id` (None: every node's), newest first, and how many
    there are in all, read in one transaction."""
    offset, limit = window(offset, limit)
    where = _matching(table, node_id=node_id)
    count = select(func.count()).select_from(table).where(*where)
    with store.read() as conn:
        total = int(conn.execute(count).scalar_one())
        rows = [row(r) for r in conn.execute(_newest(table, where, offset, limit)).mappings()]
    return Listing(rows, total, offset, limit)
