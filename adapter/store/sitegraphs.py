"""What the store keeps of a node's sitegraphs between runs, and their pages' fate.

A sitegraph read whole keeps its validators and checksum (`keep_state`), so the next
run asks with a conditional GET; a 304, or the same bytes, means its Datasets are as
they were: their rows are seen again without being read (`seen_again`). A Dataset absent
from a graph read whole has left it (`left_graph`): archived as a page that went away
is. A graph that could not be read changes nothing here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, or_, select, update

from adapter.discovery.sitegraph import GraphState
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import ENDED, FrontierRow, row_from_mapping


def graph_states(store: Store, node_id: str) -> dict[str, GraphState]:
    """The node's sitegraphs by URL, as their last whole read left them."""
    s = t.sitegraphs
    with store.read() as conn:
        rows = conn.execute(select(s).where(s.c.node_id == node_id)).mappings().all()
    return {
        r["url"]: GraphState(r["etag"], r["last_modified"], r["checksum"], r["datasets"] or 0)
        for r in rows
    }


def keep_state(store: Store, node_id: str, url: str, state: GraphState) -> None:
    s = t.sitegraphs
    values = {
        "etag": state.etag,
        "last_modified": state.last_modified,
        "checksum": state.checksum,
        "datasets": state.datasets,
        "read_at": datetime.now(UTC),
    }
    with store.write() as conn:
        conn.execute(delete(s).where(s.c.node_id == node_id, s.c.url == url))
        conn.execute(insert(s).values(node_id=node_id, url=url, **values))


def _listed_by(node_id: str, url: str, run_id: int) -> list[Any]:
    """Pages the graph listed, not ended, not yet seen by this run."""
    f = t.frontier
    return [
        f.c.node_id == node_id,
        f.c.sitemap == url,
        or_(f.c.last_status.is_(None), f.c.last_status.not_in(ENDED)),
        or_(f.c.last_seen_run.is_(None), f.c.last_seen_run != run_id),
    ]


def seen_again(store: Store, node_id: str, run_id: int, url: str) -> int:
    """A graph unchanged since its last read: the pages it listed are listed again."""
    f = t.frontier
    with store.write() as conn:
        done = conn.execute(
            update(f)
            .where(*_listed_by(node_id, url, run_id))
            .values(last_seen_run=run_id, missing_runs=0)
        )
    return int(done.rowcount)


def left_graph(conn: Connection, node_id: str, run_id: int, url: str) -> list[FrontierRow]:
    """The graph's Datasets that a whole read of it in this run did not list."""
    f, g = t.frontier, t.graph_documents
    rows = conn.execute(
        select(f)
        .select_from(f.join(g, g.c.frontier_id == f.c.id))
        .where(*_listed_by(node_id, url, run_id))
        .order_by(f.c.id)
    ).mappings()
    return [row_from_mapping(r) for r in rows]
