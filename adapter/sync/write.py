"""Writing checked landing pages: records, outbox and frontier row, while the claim holds.

A page's writes commit only while this owner still holds its claim (else "lost"), with
its counts added to the node's newest run. A page whose writes fail is an error outcome;
a store that went away fails the run (`store_gone`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import Connection
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from adapter.config.settings import NodeSettings
from adapter.dataone.records import (
    DOI_OF_OTHER_NODE,
    DUPLICATE_DOI,
    HELD_BY_PROFILE,
    SERIES_MOVED,
    SERIES_UNLISTED,
    STORE_WRITE_FAILED,
)
from adapter.dataone.resourcemap import is_series as is_map_series
from adapter.errors import StoreError
from adapter.report.stored import capped_findings
from adapter.store.db import Store, store_error
from adapter.store.frontier import finish_page, mark_due_with_finding
from adapter.store.history import add_to_run
from adapter.store.ledger import (
    RecordDefaults,
    apply_candidates,
    archive_page,
    archive_unlisted,
    live_heads,
)
from adapter.store.packages import refresh_packages
from adapter.store.prepared import savepoint
from adapter.sync.outcome import SERIES_CODES, CheckedPage, PageOutcome, page_counts

log = logging.getLogger(__name__)


# findings of what the writes did (a duplicate DOI may be the page's): gone when they roll back
WRITE_CODES = SERIES_CODES - {DUPLICATE_DOI.code}


class _ClaimLost(Exception):
    """Another worker took the page after our lease ran out: roll back."""


def defaults_for(node: NodeSettings) -> RecordDefaults:
    d1 = node.dataone
    return RecordDefaults(node.id, d1.checksum_algorithm, d1.submitter, d1.rights_holder)


def commit_checked(store: Store, node: NodeSettings, owner: str, c: CheckedPage) -> PageOutcome:
    """Write a checked page in one transaction; its final outcome ("lost": claim gone)."""
    try:
        with store.write() as conn:
            _write(conn, c, owner, node)
            add_to_run(conn, node.id, page_counts([c.out]))
    except _ClaimLost:
        return PageOutcome(c.row.url, "lost")
    except StoreError as exc:
        _write_failed(store, c, exc)
    return c.out


def commit_group(
    store: Store, node: NodeSettings, owner: str, group: Sequence[CheckedPage]
) -> list[PageOutcome]:
    """Write checked pages in one transaction (a transaction a page cost more than its
    statements), each in a savepoint: a page whose writes fail is rolled back alone; a
    commit that fails fails the group, its pages left claimed and due, as a crash would."""
    if len(group) == 1:
        return [commit_checked(store, node, owner, group[0])]
    outcomes: list[PageOutcome] = []
    try:
        with store.write() as conn:
            for c in group:
                outcomes.append(_write_in_savepoint(store, conn, c, owner, node))
            add_to_run(conn, node.id, page_counts(outcomes))
    except StoreError as exc:
        for c in group:
            _write_failed(store, c, exc)
        return [c.out for c in group]
    return outcomes


def _write_in_savepoint(
    store: Store, conn: Connection, c: CheckedPage, owner: str, node: NodeSettings
) -> PageOutcome:
    try:
        with savepoint(conn, "page"):
            _write(conn, c, owner, node)
    except _ClaimLost:
        return PageOutcome(c.row.url, "lost")
    except SQLAlchemyError as exc:
        _write_failed(store, c, store_error(store.url, exc))
    return c.out


def store_gone(store: Store, exc: StoreError) -> bool:
    """Whether the database went away (PostgreSQL stopped, its connection cut), rather
    than refusing one page's writes: then the run fails, once, instead of each page."""
    cause = exc.__cause__
    if store.engine.dialect.name != "postgresql" or not isinstance(cause, OperationalError):
        return False
    state = getattr(cause.orig, "sqlstate", None)  # None: no server said anything
    return cause.connection_invalidated or state is None or state.startswith(("08", "57"))


def _write_failed(store: Store, c: CheckedPage, exc: StoreError) -> None:
    if store_gone(store, exc):
        raise exc
    log.error("store write for %s failed: %s", c.row.url, exc)
    out = c.out
    out.status, out.error = "error", STORE_WRITE_FAILED.code
    out.created, out.versions, out.archived = [], [], []  # rolled back: none of it happened
    out.findings = [f for f in out.findings if f.code not in WRITE_CODES]


def _write(conn: Connection, c: CheckedPage, owner: str, node: NodeSettings) -> None:
    """A checked page's writes, inside the caller's transaction; `_ClaimLost` undoes them."""
    row, out, page = c.row, c.out, c.page
    maps_on = node.dataone.resource_maps
    if out.status == "gone":
        out.archived = archive_page(conn, node.id, row.url)
        if out.archived:  # a page refused for this one's DOI may take its series now
            mark_due_with_finding(conn, node.id, DUPLICATE_DOI.code, row.url)
    elif c.candidates:
        applied = apply_candidates(conn, defaults_for(node), c.candidates)
        out.created, out.versions = applied.created, applied.versions
        for sid, owner_url in applied.foreign:
            out.findings.append(
                DUPLICATE_DOI.at(row.url, f"{sid} is already published by {owner_url}")
            )
        for sid, node_id in applied.other_node:
            msg = f"{sid} is already a series (or PID) of node {node_id} in this store"
            out.findings.append(DOI_OF_OTHER_NODE.at(row.url, msg))
        for sid, left in applied.moved:
            out.findings.append(SERIES_MOVED.at(row.url, f"{sid} moved here from {left}"))
        refused = applied.foreign or applied.other_node
        if not (applied.created or applied.versions):
            out.status = "unchanged" if not refused else "not-harvestable"
            page = replace(page, status=out.status)
        if refused:  # its next check reads the page whole (no 304), to take the series
            page = replace(page, etag=None, last_modified=None, keep_validators=False)
    if out.status == "not-harvestable" and not c.candidates:
        _held(conn, c, node)
    if out.status != "gone" and c.listed is not None:
        unlisted = archive_unlisted(conn, node.id, row.url, c.listed)
        for pid, sid in unlisted:
            out.archived.append(pid)
            if not is_map_series(sid):  # a map goes with its Dataset: one finding says it
                out.findings.append(SERIES_UNLISTED.at(row.url, f"{sid}: head {pid} archived"))
        if unlisted:  # a Dataset moved to another page: that page may take its series now
            mark_due_with_finding(conn, node.id, DUPLICATE_DOI.code, row.url)
    if out.status != "gone" and (out.created or out.versions or out.archived) and maps_on:
        maps = refresh_packages(conn, defaults_for(node), row.url)
        out.created, out.versions = out.created + maps.created, out.versions + maps.versions
    report_json = c.report_json if len(out.findings) == c.report_findings else None
    if page.report is not None and report_json is None:  # sync-level findings join its own
        page = replace(page, report=capped_findings(page.report, out.findings))
    if not finish_page(conn, row, owner, page, report_json):
        raise _ClaimLost(row.url)


def _held(conn: Connection, c: CheckedPage, node: NodeSettings) -> None:
    """A page that fails the profile but still publishes its series: keep, and say so."""
    if c.listed is None:  # not read whole: what it publishes is not known
        return
    for pid, sid in live_heads(conn, node.id, c.row.url):
        if sid in c.listed and not is_map_series(sid):  # a map is held with its Dataset
            message = (
                f"{sid}: the page is not harvestable under the '{node.checks.profile}' "
                f"profile, so its last record {pid} stays published and gets no new "
                "versions until it is"
            )
            c.out.findings.append(HELD_BY_PROFILE.at(c.row.url, message))
