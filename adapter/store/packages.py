"""Each live Dataset's resource map: the OAI-ORE package of its head and its metadata copy's
head, written through the ledger's own functions (`adapter.store.ledger`).

A new map version when that set of heads changes, archived with the page's other series
(the scheme is in `adapter.dataone.resourcemap`). Like the ledger, every function takes a
connection inside the caller's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import Connection

from adapter.dataone.records import Candidate, Decision, SeriesState, decide
from adapter.dataone.resourcemap import (
    RESOURCE_MAP_FILE_NAME,
    RESOURCE_MAP_FORMAT,
    RESOURCE_MAP_MEDIA_TYPE,
    SID_SUFFIX,
    Package,
    build,
)
from adapter.dataone.resourcemap import pid_for as map_pid_for
from adapter.dataone.resourcemap import series_id as map_series_id
from adapter.store import statements as q
from adapter.store.ledger import (
    Applied,
    NewObject,
    RecordDefaults,
    claim_identifier,
    claim_identifiers,
    series_states,
    write_new,
)


def refresh_packages(conn: Connection, defaults: RecordDefaults, source_url: str) -> Applied:
    """Give each live Dataset the page owns a resource map of its current heads.

    A map is written (new, a new version, restored or moved with its Dataset)
    only when the set of PIDs it should aggregate differs from its head's: the
    members decide, never the bytes. Set-based: the page's series and its maps'
    series are read (locked first on PostgreSQL) in one statement, and the maps
    due are written together, each kind of row in one statement. A map series
    another writer of this node made meanwhile is read again and written then."""
    out = Applied()
    due = _maps_due(conn, defaults.node_id, source_url)
    made_meanwhile = _write_maps(conn, defaults, source_url, due, out)
    if made_meanwhile:
        again = _maps_due(conn, defaults.node_id, source_url)
        _write_maps(conn, defaults, source_url, [m for m in again if m.sid in made_meanwhile], out)
    return out


@dataclass(frozen=True, slots=True)
class _MapDue:
    """A Dataset's map that must be written: what it aggregates, and its series as it is."""

    sid: str
    package: Package
    state: SeriesState | None
    candidate: Candidate


def _maps_due(conn: Connection, node_id: str, source_url: str) -> list[_MapDue]:
    """The page's live Datasets whose map is missing or aggregates other heads (by `decide`).

    The page's series are read, then their maps' series locked and read; on PostgreSQL the
    page's series are read once more under those locks (a concurrent writer of the page
    locks them too), so a map never aggregates heads that changed meanwhile. SQLite's
    write transaction holds the whole file."""
    heads, copies = _page_heads_and_copies(conn, node_id, source_url)
    states = series_states(conn, node_id, [map_series_id(sid) for sid in sorted(heads)])
    if states and conn.dialect.name == "postgresql":
        heads, copies = _page_heads_and_copies(conn, node_id, source_url)
    due = []
    for dataset_sid in sorted(heads):
        package = Package.of(heads[dataset_sid], copies.get(dataset_sid, ()))
        sid = map_series_id(dataset_sid)
        cand = map_candidate(sid, package, source_url)
        state = states.get(sid)
        decision = decide(state, cand) if state is not None else Decision.CREATE
        if decision not in (Decision.UNCHANGED, Decision.FOREIGN):
            due.append(_MapDue(sid, package, state, cand))
    return due


def map_candidate(sid: str, package: Package, source_url: str, pid: str | None = None) -> Candidate:
    """The map of `package` as a candidate of the page; its bytes once its PID is known (the
    map names itself)."""
    return Candidate(
        series_id=sid,
        object_bytes=b"" if pid is None else build(pid, package),
        content_key=package.key,
        format_id=RESOURCE_MAP_FORMAT,
        media_type=RESOURCE_MAP_MEDIA_TYPE,
        file_name=RESOURCE_MAP_FILE_NAME,
        source_url=source_url,
        object_url=source_url,
    )


def _page_heads_and_copies(
    conn: Connection, node_id: str, source_url: str
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The page's live Datasets (sid -> head) and their live copies' heads (sid -> heads)."""
    heads: dict[str, str] = {}
    copies: dict[str, list[str]] = {}
    for sid, head, archived, describes, format_id in q.PAGE_SERIES.all(
        conn, node=node_id, url=source_url
    ):
        if archived or format_id == RESOURCE_MAP_FORMAT:
            continue
        if describes is not None:
            copies.setdefault(describes, []).append(head)
        else:
            heads[sid] = head
    return heads, copies


def _write_maps(
    conn: Connection, defaults: RecordDefaults, source_url: str, due: list[_MapDue], out: Applied
) -> frozenset[str]:
    """Claim the new series and the PIDs, then write every map due in one statement per
    table. The map series this node made meanwhile (concurrent workers): not written."""
    node_id = defaults.node_id
    new = [m.sid for m in due if m.state is None]
    claimed = claim_identifiers(conn, node_id, new, "sid") if new else frozenset()
    meanwhile = set()
    for sid in set(new) - claimed:  # given out before: made meanwhile, or another node's
        owner = q.ID_OWNER.first(conn, ident=sid)
        if owner is not None and owner[0] == node_id:
            meanwhile.add(sid)
    writing = [m for m in due if m.state is not None or m.sid in claimed]
    if not writing:
        return frozenset(meanwhile)
    pids = _map_pids(conn, node_id, [m.package for m in writing])
    news = []
    for m, pid in zip(writing, pids, strict=True):  # a map names itself: built once claimed
        news.append(
            NewObject(replace(m.candidate, object_bytes=build(pid, m.package)), m.state, None, pid)
        )
    write_new(conn, defaults, news, out)
    return frozenset(meanwhile)


def _map_pids(conn: Connection, node_id: str, packages: list[Package]) -> list[str]:
    """Each package's first map PID not yet given out: the first ones claimed together."""
    firsts = [map_pid_for(p) for p in packages]
    ours = claim_identifiers(conn, node_id, firsts, "pid")
    pids = []
    for package, pid in zip(packages, firsts, strict=True):
        n = 1
        while pid not in ours:  # that set was aggregated before: the next free counter
            n += 1
            pid = map_pid_for(package, n)
            if claim_identifier(conn, node_id, pid, "pid") is None:
                break
        pids.append(pid)
    return pids


def pages_without_packages(
    conn: Connection, node_id: str, after: str = "", limit: int = 1000
) -> list[str]:
    """Pages after `after` (URL order) owning a live Dataset whose series has no resource
    map yet: a store written before maps existed."""
    params = {"node": node_id, "suffix": SID_SUFFIX, "map_format": RESOURCE_MAP_FORMAT}
    rows = conn.execute(q.PAGES_WITHOUT_PACKAGE.limit(limit), {**params, "after": after})
    return [str(url) for (url,) in rows]
