"""The operator's read-only queries: pages by outcome and by the codes of their last report."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from adapter.store import overview
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
        assert [p.url for p in having] == ["https://r.example/b"]
        assert having[0].report is None  # listings do not carry the reports
        assert [p.url for p in overview.pages(store, NODE, status="unchecked")] == [
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
