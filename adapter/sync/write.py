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
from sqlalchemy.exc import SQLAlchemyError

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
from adapter.store.db import Store, store_error, store_gone
from adapter.store.frontier import PageUpdate, finish_page, mark_due_with_finding
from adapter.store.history import add_to_run
from adapter.store.ledger import (
    RecordDefaults,
    apply_candidates,
    archive_page,
    archive_unlisted,
    live_heads,
)
from adapter.store.newpages import NewPage, pages_owning, write_new_pages
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
    if len(group) == 1 and not _maybe_new(group[0]):
        return [commit_checked(store, node, owner, group[0])]
    outcomes: list[PageOutcome] = []
    try:
        with store.write() as conn:
            for run in _runs(conn, node, group):
                if isinstance(run, list):
                    outcomes += _write_new(store, conn, run, owner, node)
                else:
                    outcomes.append(_write_in_savepoint(store, conn, run, owner, node))
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


def _maybe_new(c: CheckedPage) -> bool:
    """Whether the page's writes are only new series, as far as the page tells: a page
    harvested whose candidates (Datasets, each before its copies) it lists and owns."""
    if c.out.status != "harvested" or not c.candidates:
        return False
    datasets: set[str] = set()
    for cand in c.candidates:
        if cand.source_url != c.row.url or cand.series_id in datasets:
            return False
        if cand.describes_series is None:
            datasets.add(cand.series_id)
        elif cand.describes_series not in datasets:
            return False
    sids = {cand.series_id for cand in c.candidates}
    return len(sids) == len(c.candidates) and (c.listed is None or sids <= c.listed)


def _runs(
    conn: Connection, node: NodeSettings, group: Sequence[CheckedPage]
) -> list[list[CheckedPage] | CheckedPage]:
    """The group in order: runs of pages new to the store (written together, no two of a
    run naming one series), and the other pages, written one by one."""
    maybe = [_maybe_new(c) for c in group]
    urls = [c.row.url for c, new in zip(group, maybe, strict=True) if new]
    owning = pages_owning(conn, node.id, urls) if urls else frozenset()
    runs: list[list[CheckedPage] | CheckedPage] = []
    run: list[CheckedPage] = []
    named: set[str] = set()
    for c, new in zip(group, maybe, strict=True):
        new = new and c.row.url not in owning
        sids = {cand.series_id for cand in c.candidates}
        if run and (not new or sids & named):
            runs.append(run)
            run, named = [], set()
        if new:
            run.append(c)
            named |= sids
        else:
            runs.append(c)
    if run:
        runs.append(run)
    return runs


class _NotNew(Exception):
    """The pages of a run were not all new after all (an identifier given out before, a
    claim lost): roll back, write them one by one."""


def _write_new(
    store: Store, conn: Connection, run: list[CheckedPage], owner: str, node: NodeSettings
) -> list[PageOutcome]:
    """Pages new to the store written together (`adapter.store.newpages`), else one by one."""
    pages = [NewPage(c.row.url, c.candidates) for c in run]
    try:
        with savepoint(conn, "pages"):
            created = write_new_pages(conn, defaults_for(node), pages, node.dataone.resource_maps)
            if created is None:
                raise _NotNew
            for c in run:
                if not _finish(conn, c, owner, c.page):
                    raise _NotNew
    except SQLAlchemyError as exc:
        if store_gone(store, failed := store_error(store.url, exc)):
            raise failed from exc  # the run fails, as the first page's write would fail it
        return [_write_in_savepoint(store, conn, c, owner, node) for c in run]
    except _NotNew:
        return [_write_in_savepoint(store, conn, c, owner, node) for c in run]
    for c, pids in zip(run, created, strict=True):
        c.out.created = pids
    return [c.out for c in run]


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
    if not _finish(conn, c, owner, page):
        raise _ClaimLost(row.url)


def _finish(conn: Connection, c: CheckedPage, owner: str, page: PageUpdate) -> bool:
    """The page's frontier row written; False when its claim was lost."""
    report_json = c.report_json if len(c.out.findings) == c.report_findings else None
    if page.report is not None and report_json is None:  # sync-level findings join its own
        page = replace(page, report=capped_findings(page.report, c.out.findings))
    return finish_page(conn, c.row, owner, page, report_json)


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
