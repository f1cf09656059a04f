"""A page checked in one process and written in another: the seam of a multi-process run.

`adapter.harvest.process_page` checks a page and commits its outcome at once.
A run that checks pages in child processes (`adapter.checkchild`) splits it:
the child calls `check_and_plan` (fetch, check, decide what to write; no store
access), the parent calls `commit_checked` with what the children sent back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from adapter import harvest
from adapter.errors import FetchError
from adapter.fetch import Fetcher
from adapter.frontier import FrontierRow, PageUpdate
from adapter.harvest import PageOutcome
from adapter.models import DatasetReport
from adapter.records import Candidate
from adapter.settings import NodeSettings
from adapter.store import Store

log = logging.getLogger(__name__)


@dataclass(slots=True)
class CheckedPage:
    """A page's outcome and what to write for it, not yet written."""

    row: FrontierRow
    out: PageOutcome
    page: PageUpdate
    candidates: list[Candidate]


def check_and_plan(node: NodeSettings, fetcher: Fetcher, row: FrontierRow) -> CheckedPage:
    """Check one claimed page and decide its writes; never raises for a page's fault."""
    try:
        report = harvest.check_page(node, fetcher, row)
    except FetchError as exc:
        report = DatasetReport(url=row.url, findings=[harvest._fetch_finding(exc)])
    except Exception as exc:  # the adapter's own fault: keep the run going, say where
        log.exception("checking %s failed", row.url)
        out = PageOutcome(row.url, "error", error=f"adapter/{type(exc).__name__}")
        return CheckedPage(row, out, PageUpdate("error", keep_validators=True), [])
    out, page, candidates = harvest._plan(node, fetcher, row, report)
    return CheckedPage(row, out, page, candidates)


def commit_checked(
    store: Store, node: NodeSettings, owner: str, pages: list[CheckedPage]
) -> list[PageOutcome]:
    """Write checked pages (each in its own transaction); their final outcomes, in order."""
    return [_commit_one(store, node, owner, p) for p in pages]


def _commit_one(store: Store, node: NodeSettings, owner: str, p: CheckedPage) -> PageOutcome:
    try:
        harvest._commit(store, p.row, owner, p.out, p.page, p.candidates, node)
    except harvest._ClaimLost:
        return PageOutcome(p.row.url, "lost")
    return p.out
