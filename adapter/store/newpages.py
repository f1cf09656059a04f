"""Pages new to the store, written together: a first sync's pages in one statement per table.

A page that owns no series yet and offers only new ones (its Datasets, their metadata
copies) needs none of the per-page reads of `adapter.store.ledger` and
`adapter.store.packages`: every series is created, every PID is the first of its bytes,
each Dataset's resource map aggregates its head and its copy's. So the pages of a group
are planned in Python and written with one identifier claim, one clock read and write, and
one insert per table, in the order and with the stamps the page-by-page path gives them
(records, outbox events and the change log grow page by page, a page's maps after its
objects). What the plan assumed is checked by the claim: an identifier given out before
(another page's DOI, another node's) answers None, and the caller, having written inside
a savepoint, rolls back and writes those pages one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

from adapter.dataone.records import Candidate
from adapter.dataone.resourcemap import Package
from adapter.dataone.resourcemap import pid_for as map_pid_for
from adapter.dataone.resourcemap import series_id as map_series_id
from adapter.store import statements as q
from adapter.store.ledger import (
    Applied,
    NewObject,
    NewRows,
    RecordDefaults,
    read_clock,
    write_clock,
)
from adapter.store.packages import map_candidate


@dataclass(frozen=True, slots=True)
class NewPage:
    """A page's URL and its candidates: Datasets, each before its metadata copies."""

    url: str
    candidates: Sequence[Candidate]


def pages_owning(conn: Connection, node_id: str, urls: Sequence[str]) -> frozenset[str]:
    """Those of `urls` that own a series of the node (not new to the store)."""
    owning: set[str] = set()
    for start in range(0, len(urls), len(q.PAGES_OWNING)):
        batch = urls[start : start + len(q.PAGES_OWNING)]
        params = {f"url{n}": url for n, url in enumerate(batch)}
        rows = q.PAGES_OWNING[len(batch) - 1].all(conn, node=node_id, **params)
        owning.update(str(url) for (url,) in rows)
    return frozenset(owning)


def write_new_pages(
    conn: Connection, defaults: RecordDefaults, pages: Sequence[NewPage], maps: bool
) -> list[list[str]] | None:
    """Write the pages' objects (and their resource maps when `maps`); the PIDs each page
    created, in the page-by-page order. None, having written only identifier claims, when
    one was given out before: the caller rolls back and writes the pages one by one."""
    node_id = defaults.node_id
    plans = [_plan(page, maps) for page in pages]
    claims = [
        claim
        for objects, written in plans
        for w in (*objects, *written)
        for claim in ((w.cand.series_id, "sid"), (w.pid, "pid"))
    ]
    if len({ident for ident, _ in claims}) < len(claims) or not _claim_all(conn, node_id, claims):
        return None
    clock = read_clock(conn, node_id)
    rows = NewRows()
    created: list[list[str]] = []
    for objects, written in plans:
        out = Applied()
        rows.add(defaults, objects, clock.take(len(objects)), out)
        if written:
            rows.add(defaults, written, clock.take(len(written)), out)
        created.append(out.created)
    rows.insert(conn)
    write_clock(conn, node_id, clock)
    return created


def _plan(page: NewPage, maps: bool) -> tuple[list[NewObject], list[NewObject]]:
    """The page's new objects (a copy describes its Dataset's new head) and, when `maps`,
    each Dataset's resource map of them, in the order of the Datasets' seriesIds."""
    heads: dict[str, str] = {}
    objects = []
    for cand in page.candidates:
        describes = heads.get(cand.describes_series) if cand.describes_series else None
        pid = cand.pid
        heads[cand.series_id] = pid
        objects.append(NewObject(cand, None, describes, pid))
    if not maps:
        return objects, []
    copies: dict[str, list[str]] = {}
    for w in objects:
        if w.cand.describes_series is not None:
            copies.setdefault(w.cand.describes_series, []).append(w.pid)
    datasets = {w.cand.series_id: w.pid for w in objects if w.cand.describes_series is None}
    written = []
    for sid in sorted(datasets):
        package = Package.of(datasets[sid], copies.get(sid, ()))
        pid = map_pid_for(package)
        cand = map_candidate(map_series_id(sid), package, page.url, pid)
        written.append(NewObject(cand, None, None, pid))
    return objects, written


def _claim_all(conn: Connection, node_id: str, claims: Sequence[tuple[str, str]]) -> bool:
    """Claim every identifier; whether all are ours now (none given out before)."""
    size = len(q.ID_CLAIMS_KINDS)
    for start in range(0, len(claims), size):
        batch = claims[start : start + size]
        params: dict[str, str] = {}
        for n, (ident, kind) in enumerate(batch):
            params[f"ident{n}"], params[f"kind{n}"] = ident, kind
        rows = q.ID_CLAIMS_KINDS[len(batch) - 1].all(conn, node=node_id, **params)
        if len(rows) < len(batch):
            return False
    return True
