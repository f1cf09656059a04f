"""A store as a node of many pages leaves it, written directly: for /ops at scale.

Pages `https://repo.example/ds/N` with the outcomes and finding codes a real
node's pages have in proportion (most not harvestable for a missing ISO copy,
some harvested, some gone or failing), a run history and a queue; each report
is the summary a sync stores (`adapter.report.stored.report_summary`), findings and
checklist included, so `page_codes` is filled by its triggers as a sync fills it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from adapter.store import schema as t
from adapter.store.db import Store

BATCH = 2000
# (last outcome, HTTP status, finding codes with their severity), cycled through the pages
KINDS: tuple[tuple[str, int, tuple[tuple[str, str], ...]], ...] = (
    (
        "not-harvestable",
        200,
        (("dataone/encoding-missing", "error"), ("soso/creator-orcid", "info")),
    ),
    (
        "not-harvestable",
        200,
        (("dataone/encoding-missing", "error"), ("signposting/missing", "warning")),
    ),
    ("harvested", 200, (("signposting/missing", "warning"),)),
    ("harvested", 200, (("soso/creator-orcid", "info"),)),
    ("not-harvestable", 200, (("dataone/distribution-missing", "error"),)),
    ("unchanged", 200, ()),
    ("gone", 404, (("fetch/gone", "error"),)),
    ("error", 503, (("fetch/http-error", "error"),)),
)


def report(url: str, kind: int) -> dict[str, Any]:
    _, http, codes = KINDS[kind % len(KINDS)]
    findings = [
        {"code": c, "severity": s, "message": f"{c} on {url}", "where": None} for c, s in codes
    ]
    blocking = [c for c, s in codes if s == "error"]
    checklist = [
        {
            "requirement": "encoding",
            "label": "an ISO metadata copy",
            "blocking": True,
            "met": "dataone/encoding-missing" not in blocking,
            "codes": [c for c in blocking if c == "dataone/encoding-missing"],
        },
        {
            "requirement": "license",
            "label": "a licence",
            "blocking": False,
            "met": True,
            "codes": [],
        },
    ]
    return {
        "url": url,
        "final_url": url,
        "status": http,
        "not_modified": False,
        "harvestable": not blocking,
        "profile": "dataone",
        "datasets": [
            {"doi": f"10.5555/{kind}", "harvestable": not blocking, "checklist": checklist}
        ],
        "text": f"report of {url}\n" * 20,
        "findings": findings,
        "findings_dropped": 0,
    }


def fill(
    store: Store, node_id: str, pages: int, runs: int = 30, events: int = 0, notices: int = 0
) -> None:
    """`pages` frontier rows with stored reports, `runs` finished runs, `events` pending,
    `notices` COAR Notify status announcements sent (one per page, the first `notices`)
    and as many requests received."""
    now = datetime.now(UTC)
    with store.write() as conn:
        for start in range(0, pages, BATCH):
            rows = []
            for i in range(start, min(pages, start + BATCH)):
                url = f"https://repo.example/ds/{i}"
                status, http, _ = KINDS[i % len(KINDS)]
                rows.append(
                    {
                        "node_id": node_id,
                        "url": url,
                        "last_status": status,
                        "http_status": http,
                        "last_report": json.dumps(report(url, i)),
                        "last_checked_at": now,
                        "due": False,
                        "missing_runs": 0,
                    }
                )
            conn.execute(t.frontier.insert(), rows)
        for r in range(runs):
            summary = {
                "node_id": node_id,
                "pages_seen": pages,
                "due": pages // 10,
                "fetched": pages // 10,
                "unchanged": pages // 40,
                "not_modified": pages // 40,
                "pages_not_harvestable": pages // 40,
                "gone": pages // 80,
                "errors": pages // 80,
                "new_objects": pages // 50,
                "new_versions": r,
                "duration_s": 30.0 + r,
                "not_harvestable": {"dataone/encoding-missing": pages // 40},
            }
            conn.execute(
                t.runs.insert().values(
                    node_id=node_id,
                    started_at=now - timedelta(hours=runs - r),
                    finished_at=now - timedelta(hours=runs - r) + timedelta(seconds=30),
                    status="ok",
                    summary=json.dumps(summary),
                )
            )
        for start in range(0, notices, BATCH):
            sent, received = [], []
            for i in range(start, min(notices, start + BATCH)):
                url = f"https://repo.example/ds/{i}"
                sent.append(_announcement(node_id, url, i, now))
                received.append(_request(node_id, url, i, now))
            conn.execute(t.notify_outbox.insert(), sent)
            conn.execute(t.notify_inbox.insert(), received)
        if events:
            conn.execute(
                t.outbox.insert(),
                [
                    {
                        "node_id": node_id,
                        "event": "create",
                        "pid": f"doi:10.5555/{i}",
                        "series_id": None,
                        "created_at": now,
                    }
                    for i in range(events)
                ],
            )


def _announcement(node_id: str, url: str, i: int, now: datetime) -> dict[str, Any]:
    kind = "announce-harvestable" if i % 4 == 2 else "announce-not-harvestable"
    body = {"type": ["Announce"], "object": {"id": url}, "id": f"urn:uuid:sent-{i}"}
    return {
        "node_id": node_id,
        "created_at": now,
        "kind": kind,
        "target_inbox": "https://repo.example/inbox",
        "in_reply_to": None,
        "page_url": url,
        "body": json.dumps(body),
        "state": "delivered" if i % 10 else "failed",
        "attempts": 1,
        "next_attempt_at": now,
        "last_error": None if i % 10 else "HTTP 503 from https://repo.example/inbox",
        "http_status": 202 if i % 10 else 503,
        "delivered_at": now if i % 10 else None,
    }


def _request(node_id: str, url: str, i: int, now: datetime) -> dict[str, Any]:
    body = {"type": ["Offer", "coar-notify:IngestAction"], "object": {"id": url}}
    return {
        "node_id": node_id,
        "received_at": now,
        "notification_id": f"urn:uuid:received-{i}",
        "kind": "request-ingest",
        "origin_id": "https://repo.example/",
        "origin_inbox": "https://repo.example/inbox",
        "object_url": url,
        "state": "accepted" if i % 5 else "rejected",
        "reason": None if i % 5 else "the page is not harvestable: dataone/encoding-missing",
        "decided_at": now,
        "body": json.dumps(body),
    }
