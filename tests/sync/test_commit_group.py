"""Checked pages written in groups (one transaction, a savepoint each) against one by one.

A multi-process sync's writer commits the pages that arrive together in one
transaction. Over a real fixture site and both engines: the tables end up as
page-by-page commits leave them (under the same clock), a page whose claim was
taken is "lost" alone, and a page whose writes the database refuses is rolled
back alone while the rest of its group is written.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import fields, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text, update

from adapter.config.settings import AdapterConfig
from adapter.dataone.records import STORE_WRITE_FAILED
from adapter.models import Link
from adapter.store import claims, ledger, newpages
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.sync import page as harvest
from adapter.sync import write
from adapter.sync.fetchers import node_fetcher
from adapter.sync.outcome import CheckedPage, PageOutcome
from adapter.sync.run import run_node
from tests.store.test_pagesql import fake_clock, tables, two_stores
from tests.support import stores
from tests.support.fixture_server import stop
from tests.sync.test_sync import Site, node_for

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
__all__ = ["store_url", "two_stores"]  # fixtures used by name
OWNER = "tester:1"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    s = Site("sync-change", tmp_path)
    yield s
    stop(s.servers)


def checked_pages(site: Site, store: Store) -> list[CheckedPage]:
    """Every page of the site discovered, claimed and checked (nothing written yet)."""
    node = node_for(site)
    run_node(AdapterConfig(store_url=store.url, nodes=(node,)), node, enqueue_only=True)
    rows = claims.claim_due(store, node.id, OWNER, batch=100, lease=timedelta(hours=1))
    fetcher, _ = node_fetcher(store, node, OWNER)
    with fetcher:
        return [harvest.check_and_plan(node, fetcher, row) for row in rows]


def said(outcomes: list[PageOutcome]) -> list[tuple[object, ...]]:
    return [(o.url, o.status, o.created, o.versions, o.error) for o in outcomes]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_groups_write_what_pages_one_by_one_write(
    site: Site, two_stores: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    grouped, single = two_stores
    node = node_for(site)
    pages = checked_pages(site, grouped)
    assert len(pages) == 8
    monkeypatch.setattr(ledger, "_now_ms", fake_clock(1))
    together = new_pages_written(monkeypatch)
    got = [
        out
        for i in range(0, len(pages), 3)  # groups of 3, 3 and 2: the duplicate DOI shares one
        for out in write.commit_group(grouped, node, OWNER, pages[i : i + 3])
    ]
    # new to the store: the first group, and two of the second (the third names no DOI);
    # the last two are not (the mirror's DOI was given out): written one by one
    assert together == [3, 2]
    one_by_one = checked_pages(site, single)
    monkeypatch.setattr(ledger, "_now_ms", fake_clock(1))
    want = [write.commit_checked(single, node, OWNER, c) for c in one_by_one]
    assert said(got) == said(want)
    assert {o.status for o in got} >= {"harvested", "not-harvestable"}
    assert sum(len(o.created) for o in got) == 13  # 6 Datasets, 1 ISO copy, 6 resource maps
    assert tables(grouped) == tables(single)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_page_whose_claim_was_taken_is_lost_alone(site: Site, store_url: str) -> None:
    store = Store.open(store_url)
    node = node_for(site)
    pages = checked_pages(site, store)
    taken = pages[1].row
    with store.write() as conn:
        f = t.frontier
        conn.execute(update(f).where(f.c.id == taken.id).values(claimed_by="another:2"))
    outcomes = write.commit_group(store, node, OWNER, pages)
    assert [o.status == "lost" for o in outcomes] == [i == 1 for i in range(len(pages))]
    assert stored_pids(store) == {pid for o in outcomes for pid in o.created}
    assert not stored_pids(store) & {c.pid for c in pages[1].candidates}
    assert sum(len(o.created) for o in outcomes) >= 5
    store.close()


def new_pages_written(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pages each call of the set-based path wrote (the list grows as they do)."""
    written: list[int] = []
    inner = newpages.write_new_pages

    def counted(*args: Any, **kwargs: Any) -> list[list[str]] | None:
        created = inner(*args, **kwargs)
        if created is not None:
            written.append(len(created))
        return created

    monkeypatch.setattr(write, "write_new_pages", counted)
    return written


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_page_whose_claim_was_taken_among_new_pages_is_lost_alone(
    site: Site, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pages new to the store are written together, then rolled back and written one
    by one when one's claim is gone."""
    store = Store.open(store_url)
    node = node_for(site)
    pages = checked_pages(site, store)[:5]  # new to the store, each its own DOI
    taken = pages[2].row
    with store.write() as conn:
        f = t.frontier
        conn.execute(update(f).where(f.c.id == taken.id).values(claimed_by="another:2"))
    together = new_pages_written(monkeypatch)
    outcomes = write.commit_group(store, node, OWNER, pages)
    assert together == [5]  # written together, then rolled back
    assert [o.status for o in outcomes] == ["harvested"] * 2 + ["lost"] + ["harvested"] * 2
    assert stored_pids(store) == {pid for o in outcomes for pid in o.created}
    assert sum(len(o.created) for o in outcomes) == 8  # 4 Datasets, 4 resource maps
    store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@pytest.mark.parametrize(
    ("refused_page", "created"),
    [
        ("/with-iso", 10),  # 13, less the Dataset, its ISO copy and its resource map
        ("/edited", 11),  # among the pages new to the store: less the Dataset and its map
    ],
)
def test_a_page_the_database_refuses_is_rolled_back_alone(
    site: Site, store_url: str, refused_page: str, created: int
) -> None:
    store = Store.open(store_url)
    node = node_for(site)
    pages = checked_pages(site, store)
    refused = next(c for c in pages if c.row.url.endswith(refused_page)).row
    refuse_frontier_update(store, refused.url)
    outcomes = write.commit_group(store, node, OWNER, pages)
    by_url = {o.url: o for o in outcomes}
    failed = by_url[refused.url]
    assert (failed.status, failed.error) == ("error", STORE_WRITE_FAILED.code)
    assert failed.created == [] and failed.versions == []  # rolled back: not counted
    assert all(o.status != "error" for u, o in by_url.items() if u != refused.url)
    assert stored_pids(store) == {pid for o in outcomes for pid in o.created}
    assert sum(len(o.created) for o in outcomes) == created
    store.close()


def stored_pids(store: Store) -> set[str]:
    with store.read() as conn:
        return set(conn.execute(select(t.records.c.pid)).scalars())


def refuse_frontier_update(store: Store, url: str) -> None:
    """A trigger that fails any write to one frontier row: a database refusing a page."""
    quoted = url.replace("'", "''")
    with store.write() as conn:
        if conn.dialect.name == "sqlite":
            conn.execute(
                text(
                    "CREATE TRIGGER refuse BEFORE UPDATE ON frontier "
                    f"WHEN NEW.url = '{quoted}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
                )
            )
            return
        conn.execute(
            text(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                f"IF NEW.url = '{quoted}' THEN RAISE EXCEPTION 'refused'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
        )
        conn.execute(
            text(
                "CREATE TRIGGER refuse BEFORE UPDATE ON frontier "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )
        )


def test_checked_pages_cross_processes_unchanged(site: Site, tmp_path: Path) -> None:
    """What a child sends its parent (adapter.slotpickle) comes out equal, field for field."""
    store = Store.open(stores.sqlite_url(tmp_path))
    pages = checked_pages(site, store)
    first = pages[0].row
    row = replace(
        first,
        links=(Link("https://doi.org/10.5061/x", "cite-as", first.url, "signmap", "text/html"),),
    )
    pages.append(replace(pages[0], row=row))
    for page in pages:
        again = pickle.loads(pickle.dumps(page, protocol=pickle.HIGHEST_PROTOCOL))
        assert again == page
        assert [getattr(again, f.name) for f in fields(page)] == [
            getattr(page, f.name) for f in fields(page)
        ]
    assert any(p.out.findings for p in pages) and any(p.candidates for p in pages)
    store.close()


def test_the_report_encoded_where_checked_is_stored_as_the_write_would_encode_it(
    site: Site, two_stores: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's report made into JSON in the checking process is the text the write would
    make (pages whose writes add a finding, the duplicate DOI's, included)."""
    ready, encoded = two_stores
    node = node_for(site)
    pages = checked_pages(site, ready)
    assert sum(c.report_json is not None for c in pages) >= 6
    monkeypatch.setattr(ledger, "_now_ms", fake_clock(1))
    write.commit_group(ready, node, OWNER, pages)
    bare = [replace(c, report_json=None) for c in checked_pages(site, encoded)]
    monkeypatch.setattr(ledger, "_now_ms", fake_clock(1))
    write.commit_group(encoded, node, OWNER, bare)
    found = [f for c in pages for f in c.out.findings if f.code == "sync/duplicate-doi"]
    assert found  # a finding the write added: its report encoded again, with it
    assert tables(ready) == tables(encoded)
