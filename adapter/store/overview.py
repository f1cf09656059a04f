"""Read-only views of the store for an operator: pages by outcome and by finding, one run.

The frontier keeps each page's latest outcome and the summary of its last
report (findings capped, `adapter.report.stored.capped_findings`); these
queries read it for the operator's web view, never write. A page "has" a code
when its last report lists a finding with that code: `page_codes`, kept by
triggers on the frontier, says which. Every list is one page of rows with its
true total, walked in index order, so a node of 100,000 pages answers as fast
as one of ten (`benchmarks/ops_view.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import func, select

from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.history import RunInfo, SyncFailure
from adapter.store.outbox import OutboxEvent
from adapter.store.schema import utc, utc_or_none

PER_PAGE = 100  # rows one page of a listing shows
MAX_PER_PAGE = 500
_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Listing(Generic[T]):
    """One page of a list, with the true count of every row the list has."""

    rows: list[T]
    total: int
    offset: int
    limit: int

    @property
    def first(self) -> int:  # 1-based position of the first row shown (0: none)
        return self.offset + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.offset + len(self.rows)

    @property
    def page(self) -> int:
        return self.offset // self.limit + 1

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.limit))

    @property
    def previous(self) -> int | None:  # the previous page's offset
        return max(0, self.offset - self.limit) if self.offset > 0 else None

    @property
    def next(self) -> int | None:
        return self.offset + self.limit if self.offset + self.limit < self.total else None

    @property
    def final(self) -> int:  # the last page's offset
        return (self.pages - 1) * self.limit


@dataclass(frozen=True, slots=True)
class PageRow:
    node_id: str
    url: str
    last_status: str | None  # new | harvested | not-modified | not-harvestable | error | gone ...
    http_status: int | None
    last_checked_at: datetime | None
    due: bool
    missing_runs: int
    report: dict[str, Any] | None  # the stored report, for one page; None in lists


@dataclass(frozen=True, slots=True)
class CodeTotal:
    """A finding code and how many of the node's pages have it in their last report."""

    code: str
    severity: str
    pages: int


def window(offset: int, limit: int) -> tuple[int, int]:
    """A listing's offset and limit, within bounds (a stranger's query string sets them)."""
    limit = min(max(1, limit), MAX_PER_PAGE)
    return max(0, offset), limit


def status_counts(store: Store, node_id: str) -> dict[str, int]:
    """Pages per last outcome ("unchecked" for pages never fetched yet), by index."""
    f = t.frontier
    q = (
        select(f.c.last_status, func.count())
        .where(f.c.node_id == node_id)
        .group_by(f.c.last_status)
    )
    with store.read() as conn:
        rows = conn.execute(q).all()
    return {str(status or "unchecked"): int(n) for status, n in rows}


def pages(
    store: Store,
    node_id: str,
    *,
    code: str | None = None,
    status: str | None = None,
    offset: int = 0,
    limit: int = PER_PAGE,
) -> Listing[PageRow]:
    """The node's pages in natural URL order (ds/9 before ds/10): every one, only those
    whose last report has `code`, or only those whose last outcome is `status`.

    The page's ids come from an index alone (the offset skips index entries, not
    rows), then only its rows are read."""
    f, c = t.frontier, t.page_codes
    offset, limit = window(offset, limit)
    table, key = (f, f.c.id) if code is None else (c, c.c.frontier_id)
    where: list[Any] = [table.c.node_id == node_id]
    if code is not None:
        where.append(c.c.code == code)
    state = f.c.last_status if code is None else c.c.status
    if status == "unchecked":  # as status_counts names pages never fetched
        where.append(state.is_(None))
    elif status is not None:
        where.append(state == status)
    order = [func.length(table.c.url), table.c.url, key]
    ids_q = select(key).where(*where).order_by(*order).offset(offset).limit(limit)
    with store.read() as conn:
        total = int(
            conn.execute(select(func.count()).select_from(table).where(*where)).scalar_one()
        )
        ids = [int(i) for i in conn.execute(ids_q).scalars()]
        rows = (
            conn.execute(select(*_list_columns()).where(f.c.id.in_(ids))).mappings().all()
            if ids
            else []
        )
    by_id = {int(row["id"]): _page(row, with_report=False) for row in rows}
    return Listing([by_id[i] for i in ids if i in by_id], total, offset, limit)


def node_ids(store: Store) -> list[str]:
    """Every node with pages, records or runs, each table walked once per node (a skip scan)."""
    found: set[str] = set()
    with store.read() as conn:
        for table in (t.frontier, t.records, t.runs):
            found.update(_distinct(conn, table.c.node_id))
    return sorted(found)


def _distinct(conn: Any, column: Any) -> list[str]:
    """The distinct values of an indexed column by one index seek each, not a scan."""
    out: list[str] = []
    value = conn.execute(select(func.min(column))).scalar()
    while value is not None:
        out.append(str(value))
        value = conn.execute(select(func.min(column)).where(column > value)).scalar()
    return out


def code_totals(store: Store, node_id: str) -> list[CodeTotal]:
    """Every finding code across the node's pages, errors first, then most pages first."""
    c = t.page_codes
    q = (
        select(c.c.code, func.min(c.c.severity), func.count())
        .where(c.c.node_id == node_id)
        .group_by(c.c.code)
    )
    with store.read() as conn:
        rows = conn.execute(q).all()
    out = [CodeTotal(str(code), str(sev or "info"), int(n)) for code, sev, n in rows]
    return sorted(out, key=lambda x: (_SEVERITY_RANK.get(x.severity, 3), -x.pages, x.code))


def runs(
    store: Store, node_id: str | None, offset: int = 0, limit: int = PER_PAGE
) -> Listing[RunInfo]:
    """The runs, newest first (every node's when `node_id` is None)."""
    r = t.runs
    offset, limit = window(offset, limit)
    where = [] if node_id is None else [r.c.node_id == node_id]
    q = select(r).where(*where).order_by(r.c.id.desc()).offset(offset).limit(limit)
    with store.read() as conn:
        total = int(conn.execute(select(func.count()).select_from(r).where(*where)).scalar_one())
        rows = conn.execute(q).mappings().all()
    return Listing([_run(row) for row in rows], total, offset, limit)


def queue(
    store: Store, node_id: str | None, offset: int = 0, limit: int = PER_PAGE
) -> Listing[OutboxEvent]:
    """The events not yet acknowledged, oldest first (the order they are delivered in)."""
    o = t.outbox
    offset, limit = window(offset, limit)
    where = [o.c.acked_at.is_(None), *([] if node_id is None else [o.c.node_id == node_id])]
    q = select(o).where(*where).order_by(o.c.seq).offset(offset).limit(limit)
    with store.read() as conn:
        total = int(conn.execute(select(func.count()).select_from(o).where(*where)).scalar_one())
        rows = conn.execute(q).mappings().all()
    events = [
        OutboxEvent(
            r["seq"],
            r["node_id"],
            r["event"],
            r["pid"],
            r["series_id"],
            utc(r["created_at"]),
            utc_or_none(r["acked_at"]),
        )
        for r in rows
    ]
    return Listing(events, total, offset, limit)


def failures(
    store: Store, node_id: str | None, offset: int = 0, limit: int = PER_PAGE
) -> Listing[SyncFailure]:
    """What DataONE reported through POST /error, newest first."""
    s = t.sync_failures
    offset, limit = window(offset, limit)
    where = [] if node_id is None else [s.c.node_id == node_id]
    q = select(s).where(*where).order_by(s.c.id.desc()).offset(offset).limit(limit)
    with store.read() as conn:
        total = int(conn.execute(select(func.count()).select_from(s).where(*where)).scalar_one())
        rows = conn.execute(q).mappings().all()
    found = [
        SyncFailure(r["id"], r["node_id"], r["pid"], utc(r["received_at"]), r["xml"]) for r in rows
    ]
    return Listing(found, total, offset, limit)


def page(store: Store, node_id: str, url: str) -> PageRow | None:
    """One page with its stored report."""
    f = t.frontier
    q = select(f).where(f.c.node_id == node_id, f.c.url == url)
    with store.read() as conn:
        row = conn.execute(q).mappings().first()
    return None if row is None else _page(row, with_report=True)


def recorded_profile(store: Store, node_id: str) -> str | None:
    """The requirement profile one of the node's stored reports was checked under."""
    f = t.frontier
    q = (
        select(f.c.last_report)
        .where(f.c.node_id == node_id, f.c.last_report.is_not(None))
        .order_by(f.c.node_id, func.length(f.c.url), f.c.url)
        .limit(1)
    )
    with store.read() as conn:
        text = conn.execute(q).scalar()
    try:
        found = json.loads(text).get("profile") if text else None
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def run(store: Store, run_id: int) -> RunInfo | None:
    q = select(t.runs).where(t.runs.c.id == run_id)
    with store.read() as conn:
        row = conn.execute(q).mappings().first()
    return None if row is None else _run(row)


def _run(row: Any) -> RunInfo:
    return RunInfo(
        row["id"],
        row["node_id"],
        utc(row["started_at"]),
        utc_or_none(row["finished_at"]),
        row["status"],
        json.loads(row["summary"]) if row["summary"] else {},
        row["error"],
    )


def pending_events(store: Store, node_id: str) -> int:
    o = t.outbox
    q = select(func.count()).where(o.c.node_id == node_id, o.c.acked_at.is_(None))
    with store.read() as conn:
        return int(conn.execute(q).scalar_one())


def frontier_node_ids(store: Store) -> list[str]:
    """Every node with pages on the frontier (a node may have pages and no records yet)."""
    q = select(t.frontier.c.node_id).distinct().order_by(t.frontier.c.node_id)
    with store.read() as conn:
        return [str(n) for n in conn.execute(q).scalars()]


_LIST_COLUMNS = (
    "id",
    "node_id",
    "url",
    "last_status",
    "http_status",
    "last_checked_at",
    "due",
    "missing_runs",
)


def _list_columns() -> list[Any]:
    return [t.frontier.c[name] for name in _LIST_COLUMNS]


def _page(row: Any, *, with_report: bool) -> PageRow:
    report = None
    if with_report and row["last_report"]:
        try:
            loaded = json.loads(row["last_report"])
        except ValueError:
            loaded = None
        report = loaded if isinstance(loaded, dict) else None
    return PageRow(
        node_id=row["node_id"],
        url=row["url"],
        last_status=row["last_status"],
        http_status=row["http_status"],
        last_checked_at=utc_or_none(row["last_checked_at"]),
        due=bool(row["due"]),
        missing_runs=int(row["missing_runs"] or 0),
        report=report,
    )
