"""Read-only views of the store for an operator: pages by outcome and by finding, one run.

The frontier keeps each page's latest outcome and the summary of its last
report (findings capped, `adapter.sync.outcome.capped_findings`); these
queries read it for the operator's web view, never write. A page "has" a code
when its last report lists a finding with that code: the text is narrowed in
SQL (the JSON as stored) and confirmed on the parsed report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.history import RunInfo
from adapter.store.schema import utc, utc_or_none

MAX_PAGES = 500  # rows one listing returns


@dataclass(frozen=True, slots=True)
class PageRow:
    node_id: str
    url: str
    last_status: str | None  # new | harvested | not-modified | not-harvestable | error | gone ...
    http_status: int | None
    last_checked_at: datetime | None
    due: bool
    missing_runs: int
    report: dict[str, Any] | None  # the stored report summary, when it was asked for


def status_counts(store: Store, node_id: str) -> dict[str, int]:
    """Pages per last outcome ("unchecked" for pages never fetched yet)."""
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
    limit: int = MAX_PAGES,
) -> list[PageRow]:
    """The node's pages, by URL; only those whose last report has `code`, or in `status`."""
    f = t.frontier
    q = select(f).where(f.c.node_id == node_id).order_by(f.c.url)
    if status == "unchecked":  # as status_counts names pages never fetched
        q = q.where(f.c.last_status.is_(None))
    elif status is not None:
        q = q.where(f.c.last_status == status)
    if code is not None:
        q = q.where(f.c.last_report.contains(json.dumps(code), autoescape=True))
    out: list[PageRow] = []
    with store.read() as conn:
        for row in conn.execute(q).mappings():
            page = _page(row, with_report=code is not None)
            if code is not None and not _has_code(page.report, code):
                continue
            out.append(page if code is None else _without_report(page))
            if len(out) >= limit:
                break
    return out


def page(store: Store, node_id: str, url: str) -> PageRow | None:
    """One page with its stored report."""
    f = t.frontier
    q = select(f).where(f.c.node_id == node_id, f.c.url == url)
    with store.read() as conn:
        row = conn.execute(q).mappings().first()
    return None if row is None else _page(row, with_report=True)


def run(store: Store, run_id: int) -> RunInfo | None:
    q = select(t.runs).where(t.runs.c.id == run_id)
    with store.read() as conn:
        row = conn.execute(q).mappings().first()
    if row is None:
        return None
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


def _has_code(report: dict[str, Any] | None, code: str) -> bool:
    findings = (report or {}).get("findings") or []
    return any(isinstance(f, dict) and f.get("code") == code for f in findings)


def _without_report(page: PageRow) -> PageRow:
    return replace(page, report=None)
