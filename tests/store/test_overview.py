"""The operator's read-only queries: pages by outcome and by the codes of their last report."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from adapter.store import migrations, overview
from adapter.store import schema as t
from adapter.store.db import Store
from tests.support import stores

store_url = stores.store_url  # on SQLite and on PostgreSQL

NODE = "urn:node:OVERVIEW"


def report(*codes: str) -> str:
    findings = [{"code": c, "severity": "error", "message": c, "where": None} for c in codes]
    return json.dumps({"url": "x", "harvestable": not codes, "findings": findings})


def seed(store: Store) -> None:
    rows = [
        ("https://r.example/a", "harvested", report()),
        ("https://r.example/b", "not-harvestable", report("dataone/name-missing")),
        ("https://r.example/c", "not-harvestable", report("dataone/name-missing-ish")),
        # the code only in a message, not as a finding's code: not a page that has it
        (
            "https://r.example/d",
            "error",
            json.dumps(
                {"findings": [{"code": "fetch/timeout", "message": "dataone/name-missing"}]}
            ),
        ),
        ("https://r.example/e", None, None),
    ]
    with store.write() as conn:
        for url, status, text in rows:
            conn.execute(
                t.frontier.insert().values(
                    node_id=NODE,
                    url=url,
                    last_status=status,
                    last_report=text,
                    http_status=200 if status else None,
                    last_checked_at=datetime.now(UTC) if status else None,
                    due=status is None,
                    missing_runs=0,
                )
            )


def test_pages_by_code_status_and_one_page(store_url: str) -> None:
    store = Store.open(store_url)
    try:
        seed(store)
        assert overview.status_counts(store, NODE) == {
            "harvested": 1,
            "not-harvestable": 2,
            "error": 1,
            "unchecked": 1,
        }
        having = overview.pages(store, NODE, code="dataone/name-missing")
        assert [p.url for p in having.rows] == ["https://r.example/b"] and having.total == 1
        assert having.rows[0].report is None  # listings do not carry the reports
        assert [p.url for p in overview.pages(store, NODE, status="unchecked").rows] == [
            "https://r.example/e"
        ]
        one = overview.page(store, NODE, "https://r.example/b")
        assert one is not None and one.report is not None
        assert one.report["findings"][0]["code"] == "dataone/name-missing"
        assert overview.page(store, NODE, "https://r.example/zzz") is None
        assert overview.frontier_node_ids(store) == [NODE]
        assert overview.pending_events(store, NODE) == 0
        assert overview.run(store, 12345) is None
    finally:
        store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_every_list_pages_through_all_its_rows_with_true_totals(store_url: str) -> None:
    """250 pages in natural order (ds/9 before ds/10), by code and status, every row reached."""
    store = Store.open(store_url)
    try:
        with store.write() as conn:
            for i in range(250):
                codes = ["dataone/encoding-missing"] + (["soso/x"] if i % 2 else [])
                conn.execute(
                    t.frontier.insert().values(
                        node_id=NODE,
                        url=f"https://r.example/ds/{i}",
                        last_status="not-harvestable" if i % 5 else "harvested",
                        last_report=report(*codes),
                        due=False,
                        missing_runs=0,
                    )
                )
        seen: list[str] = []
        offset: int | None = 0
        while offset is not None:
            listing = overview.pages(store, NODE, code="soso/x", offset=offset, limit=40)
            assert listing.total == 125
            seen += [p.url for p in listing.rows]
            offset = listing.next
        assert seen == [f"https://r.example/ds/{i}" for i in range(1, 250, 2)]
        every = overview.pages(store, NODE, limit=100)
        assert every.total == 250 and every.pages == 3 and every.rows[9].url.endswith("/ds/9")
        assert every.rows[10].url.endswith("/ds/10")
        both = overview.pages(store, NODE, code="soso/x", status="harvested")
        assert both.total == 25 and all(p.last_status == "harvested" for p in both.rows)
        last = overview.pages(store, NODE, status="harvested", offset=40, limit=10)
        assert (last.total, len(last.rows), last.next, last.first) == (50, 10, None, 41)
        totals = {c.code: (c.severity, c.pages) for c in overview.code_totals(store, NODE)}
        assert totals == {"dataone/encoding-missing": ("error", 250), "soso/x": ("error", 125)}
        # a new report replaces the page's codes; a deleted page takes its codes along
        with store.write() as conn:
            f = t.frontier
            conn.execute(
                f.update().where(f.c.url == "https://r.example/ds/1").values(last_report=report())
            )
            conn.execute(f.delete().where(f.c.url == "https://r.example/ds/3"))
        assert overview.pages(store, NODE, code="soso/x").total == 123
        assert overview.pages(store, NODE, code="dataone/encoding-missing").total == 248
    finally:
        store.close()


def test_an_older_store_gets_the_codes_of_the_reports_it_holds(store_url: str) -> None:
    """Migration 7 fills page_codes from the reports stored before it."""
    store = Store.open(store_url)
    try:
        seed(store)
        with store.write() as conn:
            conn.execute(t.page_codes.delete())
            migrations._page_codes(conn)
        assert overview.pages(store, NODE, code="dataone/name-missing").total == 1
        assert {c.code for c in overview.code_totals(store, NODE)} == {
            "dataone/name-missing",
            "dataone/name-missing-ish",
            "fetch/timeout",
        }
    finally:
        store.close()
