"""The frontier: one row per landing page of a node, and what is due.

A run upserts what discovery found (a page is due when it is new or its sitemap
lastmod moved), marks pages not checked for a while (or that failed) as due,
counts pages missing from a complete discovery, then claims due pages in
batches (`adapter.store.claims`). Finishing a page writes its outcome and clears its
claim in the same transaction that writes its records (`finish_page`), so a
crash loses only the pages in flight.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    Connection,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)

from adapter.findings import Severity, Stage
from adapter.models import Link, SitemapEntry
from adapter.slotpickle import fast_pickle
from adapter.store import schema as t
from adapter.store import statements as pagesql
from adapter.store.db import Store
from adapter.store.schema import utc_or_none

UPSERT_BATCH = 500
ENDED = ("gone", "removed")  # a 404/410, or archived after missing from the sitemaps


@fast_pickle  # crosses processes in a multi-process sync
@dataclass(frozen=True, slots=True)
class FrontierRow:
    id: int
    node_id: str
    url: str
    sitemap: str | None
    lastmod: datetime | None
    links: tuple[Link, ...]
    etag: str | None
    last_modified: str | None
    content_checksum: str | None
    last_status: str | None
    last_checked_at: datetime | None
    missing_runs: int
    # a sitegraph's Dataset: its JSON-LD, checked instead of a GET (claims read it)
    document: bytes | None = None


@fast_pickle  # crosses processes in a multi-process sync
@dataclass(frozen=True, slots=True)
class PageUpdate:
    """What processing a page learned, written to its frontier row."""

    status: str  # harvested | unchanged | not-modified | not-harvestable | gone | error
    http_status: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    content_checksum: str | None = None
    report: dict[str, Any] | None = None
    keep_validators: bool = False  # a 304 or an error keeps the validators we had


def _links_json(links: tuple[Link, ...]) -> str | None:
    if not links:
        return None
    return json.dumps(
        [
            {
                "href": k.href,
                "rel": k.rel,
                "anchor": k.anchor,
                "type": k.type,
                "profile": k.profile,
                "extra": list(k.extra),
            }
            for k in links
        ]
    )


def _links(text: str | None) -> tuple[Link, ...]:
    if not text:
        return ()
    out = []
    for d in json.loads(text):
        extra = tuple((str(a), str(b)) for a, b in d.get("extra", []))
        out.append(
            Link(d["href"], d["rel"], d["anchor"], "signmap", d["type"], d["profile"], extra)
        )
    return tuple(out)


def row_from_mapping(row: Any) -> FrontierRow:
    return FrontierRow(
        id=int(row["id"]),
        node_id=row["node_id"],
        url=row["url"],
        sitemap=row["sitemap"],
        lastmod=utc_or_none(row["lastmod"]),
        links=_links(row["links_json"]),
        etag=row["etag"],
        last_modified=row["last_modified"],
        content_checksum=row["content_checksum"],
        last_status=row["last_status"],
        last_checked_at=utc_or_none(row["last_checked_at"]),
        missing_runs=int(row["missing_runs"] or 0),
        document=_bytes(row.get("document")),
    )


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def upsert_entries(store: Store, node_id: str, run_id: int, entries: Iterable[SitemapEntry]) -> int:
    """Record what discovery found; a page is due when new or its lastmod moved, a
    sitegraph's Dataset when new or its document changed. Count seen."""
    seen = 0
    batch: dict[str, SitemapEntry] = {}
    documents = _has_documents(store, node_id)
    for entry in entries:
        batch[entry.loc] = entry
        documents = documents or entry.document is not None
        if len(batch) >= UPSERT_BATCH:
            seen += _upsert_batch(store, node_id, run_id, batch, documents)
            batch = {}
    if batch:
        seen += _upsert_batch(store, node_id, run_id, batch, documents)
    return seen


def _has_documents(store: Store, node_id: str) -> bool:
    g = t.graph_documents
    with store.read() as conn:
        found = conn.execute(select(g.c.frontier_id).where(g.c.node_id == node_id).limit(1))
        return found.first() is not None


def _upsert_batch(
    store: Store, node_id: str, run_id: int, batch: dict[str, SitemapEntry], documents: bool
) -> int:
    """One transaction per batch: new pages in one multi-row insert, the rest updated;
    with `documents` (the node has sitegraph Datasets), their documents kept beside."""
    f = t.frontier
    new: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    with store.write() as conn:
        known = {
            row["url"]: row
            for row in conn.execute(
                select(f.c.id, f.c.url, f.c.lastmod, f.c.last_seen_run, f.c.last_status).where(
                    f.c.node_id == node_id, f.c.url.in_(list(batch))
                )
            ).mappings()
        }
        for url, entry in batch.items():
            lastmod = utc_or_none(entry.lastmod)
            values: dict[str, Any] = {
                "sitemap": entry.sitemap,
                "lastmod": lastmod,
                "links_json": _links_json(entry.links),
            }
            row = known.get(url)
            if row is None:
                new.append({**values, "url": url})
                continue
            if row["last_seen_run"] == run_id:
                continue  # listed twice in this run
            old = utc_or_none(row["lastmod"])
            moved = lastmod is not None and lastmod != old  # either way: a signal
            back = row["last_status"] == "removed"  # back in the sitemaps: look again
            seen.append({**values, "row_id": row["id"], "make_due": moved or back})
        run = {"node_id": node_id, "run_id": run_id}
        if new:
            pagesql.FRONTIER_NEW.many(conn, [{**row, **run} for row in new])
        if seen:
            pagesql.FRONTIER_SEEN.many(conn, [{**row, **run} for row in seen])
        if documents:
            listed = {row["url"] for row in new} | {
                url for url, row in known.items() if row["last_seen_run"] != run_id
            }
            _keep_documents(conn, node_id, {u: batch[u].document for u in listed})
    return len(new) + len(seen)


def _keep_documents(conn: Connection, node_id: str, listed: dict[str, bytes | None]) -> None:
    """Each listed page's sitegraph document (None: a landing page, fetched): a changed
    one makes its page due, and so does losing it (no longer listed by a graph)."""
    f, g = t.frontier, t.graph_documents
    rows = conn.execute(
        select(f.c.id, f.c.url, g.c.checksum)
        .select_from(f.outerjoin(g, g.c.frontier_id == f.c.id))
        .where(f.c.node_id == node_id, f.c.url.in_(list(listed)))
    ).all()
    added: list[dict[str, Any]] = []
    dropped: list[int] = []  # replaced or gone: the page is due
    for row_id, url, old in rows:
        document = listed[url]
        if document is None:
            dropped += [row_id] if old is not None else []
            continue
        checksum = hashlib.sha256(document).hexdigest()
        if checksum == old:
            continue
        dropped += [row_id] if old is not None else []
        added.append(
            {"frontier_id": row_id, "node_id": node_id, "checksum": checksum, "document": document}
        )
    if dropped:
        conn.execute(delete(g).where(g.c.frontier_id.in_(dropped)))
        conn.execute(update(f).where(f.c.id.in_(dropped)).values(due=True))
    if added:
        conn.execute(insert(g), added)


def mark_stale_due(store: Store, node_id: str, recheck_after: timedelta) -> int:
    """Pages not checked within `recheck_after` (or never), or that failed, become due."""
    f = t.frontier
    before = datetime.now(UTC) - recheck_after
    with store.write() as conn:
        result = conn.execute(
            update(f)
            .where(
                f.c.node_id == node_id,
                f.c.due.is_(False),
                or_(
                    f.c.last_checked_at.is_(None),
                    f.c.last_checked_at < before,
                    f.c.last_status == "error",  # failed last time: try again
                ),
            )
            .values(due=True)
        )
    return int(result.rowcount)


def make_due_now(conn: Connection, node_id: str, url: str) -> bool:
    """A pushed page (COAR Notify, adapter.notify) due at once, added when the sitemaps have
    not listed it yet; True when it was added. Whoever drains the node next claims it."""
    f = t.frontier
    found = conn.execute(
        select(f.c.id).where(f.c.node_id == node_id, f.c.url == url)
    ).scalar_one_or_none()
    if found is None:
        conn.execute(f.insert().values(node_id=node_id, url=url, due=True, missing_runs=0))
        return True
    conn.execute(update(f).where(f.c.id == found).values(due=True))
    return False


def count_missing(store: Store, node_id: str, run_id: int, threshold: int) -> list[FrontierRow]:
    """Count one more missing run for pages this run's discovery did not list.

    Returns the pages missing for `threshold` runs or more: they are to be archived.
    """
    f = t.frontier
    with store.write() as conn:
        conn.execute(
            update(f)
            .where(
                f.c.node_id == node_id,
                or_(f.c.last_seen_run.is_(None), f.c.last_seen_run != run_id),
                _not_ended(),
            )
            .values(missing_runs=f.c.missing_runs + 1)
        )
        rows = conn.execute(
            select(f).where(f.c.node_id == node_id, f.c.missing_runs >= threshold, _not_ended())
        ).mappings()
        return [row_from_mapping(r) for r in rows]


def _not_ended() -> Any:
    f = t.frontier
    return or_(f.c.last_status.is_(None), f.c.last_status.not_in(ENDED))


def mark_removed(conn: Connection, row_id: int) -> None:
    """A page archived because it left the sitemaps: not counted or archived again."""
    f = t.frontier
    conn.execute(update(f).where(f.c.id == row_id).values(last_status="removed", due=False))


def mark_due_with_finding(conn: Connection, node_id: str, code: str, naming: str) -> int:
    """Pages whose last check reported `code` in a finding naming `naming` become due.

    Why: a page refused because another page held its DOI may take the series
    once that page has left; its next check should not wait for the recheck age."""
    f = t.frontier
    done = conn.execute(
        update(f)
        .where(
            f.c.node_id == node_id,
            f.c.due.is_(False),
            f.c.last_status == "not-harvestable",
            f.c.last_report.contains(f'"{code}"', autoescape=True),
            f.c.last_report.contains(json.dumps(naming)[1:-1], autoescape=True),
        )
        .values(due=True)
    )
    return int(done.rowcount)


def finish_page(
    conn: Connection, row: FrontierRow, owner: str, page: PageUpdate, report_json: str | None = None
) -> bool:
    """Write the page's outcome and free its claim; False when the claim was lost meanwhile.
    `report_json`: `page.report` as JSON text, when it was made already."""
    validators = not page.keep_validators  # a 304 or an error keeps the ones we had
    checksum = page.content_checksum is not None
    report = page.report is not None  # a 304 keeps the report of the body it confirms
    changed = pagesql.FINISH[validators, checksum, report].rowcount(
        conn,
        row_id=row.id,
        owner=owner,
        status=page.status,
        http_status=page.http_status,
        checked_at=datetime.now(UTC),
        etag=page.etag,
        last_modified=page.last_modified,
        content_checksum=page.content_checksum,
        last_report=(report_json or json.dumps(page.report)) if report else None,
    )
    return bool(changed)


def frontier_rows(store: Store, node_id: str) -> list[FrontierRow]:
    """Every page of a node, in id order (for tests and `adapter status`)."""
    f = t.frontier
    with store.read() as conn:
        rows = conn.execute(select(f).where(f.c.node_id == node_id).order_by(f.c.id)).mappings()
        return [row_from_mapping(r) for r in rows]


def due_count(store: Store, node_id: str) -> int:
    f = t.frontier
    with store.read() as conn:
        q = select(func.count()).select_from(f).where(f.c.node_id == node_id, f.c.due.is_(True))
        return int(conn.execute(q).scalar_one())


@dataclass(frozen=True, slots=True)
class PageInfo:
    """A page as `adapter pages` lists it: its last outcome and the report kept for it."""

    node_id: str
    url: str
    last_status: str | None  # None: never checked yet
    http_status: int | None
    last_checked_at: datetime | None
    due: bool
    report: dict[str, Any]  # {} when never checked

    @property
    def harvestable(self) -> bool | None:
        """The report's verdict, unless the sync found an error of its own (a duplicate
        DOI, say); None when the page was never checked."""
        value = self.report.get("harvestable")
        if value is None:
            return None
        findings = self.report.get("findings") or []
        sync_error = any(
            str(f.get("code", "")).partition("/")[0] == Stage.SYNC
            and f.get("severity") == Severity.ERROR
            for f in findings
        )
        return bool(value) and not sync_error

    def codes(self) -> list[str]:
        """The finding codes of the report, errors first, each once."""
        findings = self.report.get("findings") or []
        order = {"error": 0, "warning": 1, "info": 2}
        ranked = sorted(findings, key=lambda f: order.get(str(f.get("severity")), 3))
        return list(dict.fromkeys(str(f.get("code")) for f in ranked))


def _page_info(row: Any) -> PageInfo:
    return PageInfo(
        node_id=row["node_id"],
        url=row["url"],
        last_status=row["last_status"],
        http_status=row["http_status"],
        last_checked_at=utc_or_none(row["last_checked_at"]),
        due=bool(row["due"]),
        report=json.loads(row["last_report"]) if row["last_report"] else {},
    )


def list_pages(
    store: Store,
    *,
    node_id: str | None = None,
    code: str | None = None,
    harvestable: bool | None = None,
    batch: int = 1000,
    checked_since: datetime | None = None,
) -> Iterable[PageInfo]:
    """The node's (or every node's) pages in id order, read in batches; filtered by a
    finding code in the last report, by its verdict and by when it was last checked."""
    f = t.frontier
    where: list[Any] = []
    if node_id is not None:
        where.append(f.c.node_id == node_id)
    if checked_since is not None:
        where.append(f.c.last_checked_at >= checked_since)
    if code is not None:  # a cheap filter in SQL; the exact test below
        where.append(f.c.last_report.contains(f'"{code}"', autoescape=True))
    after = 0
    while True:
        q = select(f).where(f.c.id > after, *where).order_by(f.c.id).limit(batch)
        with store.read() as conn:
            rows = conn.execute(q).mappings().all()
        if not rows:
            return
        after = int(rows[-1]["id"])
        for row in rows:
            page = _page_info(row)
            if code is not None and code not in page.codes():
                continue
            if harvestable is not None and page.harvestable is not harvestable:
                continue
            yield page


def find_page(store: Store, url: str, node_id: str | None = None) -> list[PageInfo]:
    """The page with this URL (one per node that lists it)."""
    f = t.frontier
    q = select(f).where(f.c.url == url).order_by(f.c.node_id)
    if node_id is not None:
        q = q.where(f.c.node_id == node_id)
    with store.read() as conn:
        return [_page_info(row) for row in conn.execute(q).mappings().all()]
