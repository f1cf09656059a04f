"""One landing page of the frontier, end to end: check, decide, write, in one transaction.

`process_page` is what the sync run and the scale-out workers call for each
claimed page. It never raises for a repository's fault: a bad page is an
outcome with findings. Its writes (records, outbox, frontier row) commit
together, and only while this owner still holds the page's claim.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from adapter.errors import FetchError, StoreError
from adapter.fetch import ACCEPT_XML, Fetcher
from adapter.findings import Finding, Severity
from adapter.frontier import FrontierRow, PageUpdate, finish_page
from adapter.ledger import RecordDefaults, apply_candidates, archive_page
from adapter.models import DatasetReport, DatasetResult
from adapter.records import (
    DUPLICATE_DOI,
    METADATA_COPY_FAILED,
    METADATA_FORMATS,
    NO_DOI,
    STORE_WRITE_FAILED,
    UNKNOWN_METADATA_FORMAT,
    Candidate,
    dataset_candidate,
    metadata_candidate,
)
from adapter.settings import NodeSettings
from adapter.store import Store

log = logging.getLogger(__name__)
GONE_STATUSES = (404, 410)
# not fetched by choice (robots.txt, the address policy): not an error to retry every run
REFUSED = frozenset({"robots/disallowed", "fetch/unsafe-url"})
MAX_REPORT_FINDINGS = 200


@dataclass(slots=True)
class PageOutcome:
    """What happened to one page; the run adds these up into its summary."""

    url: str
    status: str  # harvested | unchanged | not-modified | not-harvestable | gone | error | lost
    http_status: int | None = None
    created: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # an error code (fetch/..., store/...) when status is error

    def blocking_codes(self) -> list[str]:
        """The error finding codes that kept this page's Datasets out."""
        return sorted({f.code for f in self.findings if f.severity is Severity.ERROR})


class _ClaimLost(Exception):
    """Another worker took the page after our lease ran out: roll back."""


def defaults_for(node: NodeSettings) -> RecordDefaults:
    d1 = node.dataone
    return RecordDefaults(node.id, d1.checksum_algorithm, d1.submitter, d1.rights_holder)


def check_page(node: NodeSettings, fetcher: Fetcher, row: FrontierRow) -> DatasetReport:
    from adapter.pipeline import CheckOptions, check_landing_page

    options = CheckOptions(
        limits=node.limits(), follow=False, required=frozenset(node.checks.required)
    )
    return check_landing_page(
        row.url,
        fetcher,
        options,
        sitemap_links=row.links,
        etag=row.etag,
        last_modified=row.last_modified,
    )


@dataclass(slots=True)
class CheckedPage:
    """A page's outcome and what to write for it, not yet written.

    A multi-process run checks in a child (`check_and_plan`, no store access)
    and writes in the parent (`commit_checked`); `process_page` does both here.
    """

    row: FrontierRow
    out: PageOutcome
    page: PageUpdate
    candidates: list[Candidate]


def process_page(
    store: Store, node: NodeSettings, fetcher: Fetcher, row: FrontierRow, *, owner: str
) -> PageOutcome:
    """Check one claimed page and commit its outcome (see the module docstring)."""
    return commit_checked(store, node, owner, check_and_plan(node, fetcher, row))


def check_and_plan(node: NodeSettings, fetcher: Fetcher, row: FrontierRow) -> CheckedPage:
    """Check one claimed page and decide its writes; never raises for a page's fault."""
    try:
        report = check_page(node, fetcher, row)
    except FetchError as exc:
        report = DatasetReport(url=row.url, findings=[_fetch_finding(exc)])
    except Exception as exc:  # the adapter's own fault: keep the run going, say where
        log.exception("checking %s failed", row.url)
        out = PageOutcome(row.url, "error", error=f"adapter/{type(exc).__name__}")
        return CheckedPage(row, out, PageUpdate("error", keep_validators=True), [])
    return CheckedPage(row, *_plan(node, fetcher, row, report))


def commit_checked(store: Store, node: NodeSettings, owner: str, c: CheckedPage) -> PageOutcome:
    """Write a checked page in one transaction; its final outcome ("lost": claim gone)."""
    try:
        _commit(store, c.row, owner, c.out, c.page, c.candidates, node)
    except _ClaimLost:
        return PageOutcome(c.row.url, "lost")
    return c.out


def _fetch_finding(exc: FetchError) -> Finding:
    return Finding(exc.code, Severity.ERROR, exc.message, exc.url)


def _plan(
    node: NodeSettings, fetcher: Fetcher, row: FrontierRow, report: DatasetReport
) -> tuple[PageOutcome, PageUpdate, list[Candidate]]:
    status = report.status
    fetched = report.fetched
    validators: dict[str, Any] = {
        "etag": fetched.etag if fetched else None,
        "last_modified": fetched.last_modified if fetched else None,
    }
    summary = report_summary(report)
    if report.not_modified:
        out = PageOutcome(row.url, "not-modified", http_status=304)
        # the body is the one we saw last time: its report stays
        return out, PageUpdate("not-modified", 304, keep_validators=True), []
    findings = report.all_findings()
    if status in GONE_STATUSES or any(f.code == "fetch/gone" for f in report.findings):
        out = PageOutcome(row.url, "gone", http_status=status, findings=findings)
        return out, PageUpdate("gone", status, report=summary), []
    candidates: list[Candidate] = []
    extra: list[Finding] = []
    seen: set[str] = set()
    # the same verdict as `adapter check-dataset`: page-level errors block every Dataset
    harvestable = [d for d in report.datasets if d.harvestable] if report.harvestable else []
    for dataset in harvestable:
        if not dataset.doi:
            extra.append(NO_DOI.at(row.url))
            continue
        if dataset.doi in seen:
            extra.append(DUPLICATE_DOI.at(row.url, f"doi:{dataset.doi} appears twice on the page"))
            continue
        seen.add(dataset.doi)
        cand = dataset_candidate(
            dataset.original, dataset.doi, row.url, node.sync.volatile_properties
        )
        candidates.append(cand)
        if node.dataone.sync_metadata_copy:
            copy = _metadata_copy(node, fetcher, row.url, dataset, cand.series_id, extra)
            if copy is not None:
                candidates.append(copy)
    findings += extra
    if not candidates:
        bad = report.fetched is None or (status is not None and status >= 400)
        refused = {f.code for f in report.findings} & REFUSED
        state = "error" if bad and not report.datasets and not refused else "not-harvestable"
        out = PageOutcome(row.url, state, http_status=status, findings=findings)
        if state == "error":
            codes = sorted({f.code for f in report.findings if f.severity is Severity.ERROR})
            out.error = codes[0] if codes else "fetch/http-error"
        keep = state == "error"
        return (
            out,
            PageUpdate(state, status, report=summary, keep_validators=keep, **validators),
            [],
        )
    key = hashlib.sha256("\n".join(sorted(c.content_key for c in candidates)).encode()).hexdigest()
    out = PageOutcome(row.url, "harvested", http_status=status, findings=findings)
    page = PageUpdate("harvested", status, content_checksum=key, report=summary, **validators)
    return out, page, candidates


def _metadata_copy(
    node: NodeSettings,
    fetcher: Fetcher,
    landing: str,
    dataset: DatasetResult,
    dataset_series: str,
    findings: list[Finding],
) -> Candidate | None:
    """The first `encoding`/`subjectOf` metadata file in a DataONE metadata format, fetched."""
    refs = [r for r in dataset.encoding if r.content_url and r.encoding_format]
    for ref in refs:
        format_id = next((f for f in ref.encoding_format if f in METADATA_FORMATS), None)
        if format_id is None:
            continue
        assert ref.content_url is not None
        try:
            got = fetcher.get(
                ref.content_url, accept=ACCEPT_XML, max_bytes=node.limits().max_metadata_bytes
            )
        except FetchError as exc:
            findings.append(METADATA_COPY_FAILED.at(ref.content_url, exc.message, ref.where))
            return None
        if got.status != 200 or not got.body:
            why = f"HTTP {got.status} for {ref.content_url}"
            findings.append(METADATA_COPY_FAILED.at(ref.content_url, why, ref.where))
            return None
        return metadata_candidate(got.body, format_id, dataset_series, landing, got.final_url)
    if refs:
        formats = ", ".join(sorted({f for r in refs for f in r.encoding_format}))
        findings.append(UNKNOWN_METADATA_FORMAT.at(landing, f"encodingFormat {formats}"))
    return None


def _commit(
    store: Store,
    row: FrontierRow,
    owner: str,
    out: PageOutcome,
    page: PageUpdate,
    candidates: list[Candidate],
    node: NodeSettings,
) -> None:
    try:
        with store.write() as conn:
            if out.status == "gone":
                out.archived = archive_page(conn, node.id, row.url)
            elif candidates:
                applied = apply_candidates(conn, defaults_for(node), candidates)
                out.created, out.versions = applied.created, applied.versions
                for sid, owner_url in applied.foreign:
                    msg = f"{sid} is already published by {owner_url}"
                    out.findings.append(DUPLICATE_DOI.at(row.url, msg))
                if not (applied.created or applied.versions):
                    out.status = "unchanged" if not applied.foreign else "not-harvestable"
                    page = replace(page, status=out.status)
            if page.report is not None:  # sync-level findings join the page's own
                page = replace(page, report=_with_findings(page.report, out.findings))
            if not finish_page(conn, row, owner, page):
                raise _ClaimLost(row.url)
    except StoreError as exc:
        log.error("store write for %s failed: %s", row.url, exc)
        out.status, out.error = "error", STORE_WRITE_FAILED.code


def _with_findings(summary: dict[str, Any], findings: list[Finding]) -> dict[str, Any]:
    return {
        **summary,
        "findings": [f.as_dict() for f in findings[:MAX_REPORT_FINDINGS]],
        "findings_dropped": max(0, len(findings) - MAX_REPORT_FINDINGS),
    }


def report_summary(report: DatasetReport) -> dict[str, Any]:
    """The part of a report kept on the frontier row (findings capped)."""
    findings = report.all_findings()
    return {
        "url": report.url,
        "final_url": report.final_url,
        "status": report.status,
        "not_modified": report.not_modified,
        "harvestable": report.harvestable,
        "datasets": [{"doi": d.doi, "harvestable": d.harvestable} for d in report.datasets],
        "findings": [f.as_dict() for f in findings[:MAX_REPORT_FINDINGS]],
        "findings_dropped": max(0, len(findings) - MAX_REPORT_FINDINGS),
    }
