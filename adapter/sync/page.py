"""One claimed landing page checked, and its writes decided (`check_and_plan`).

It never raises for a repository's fault: a bad page is an outcome with
findings. No store access here: the checking pool's children run it; the
writes are `adapter.sync.write`'s.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.dataone.profiles import profile_for
from adapter.dataone.records import (
    DUPLICATE_DOI,
    METADATA_COPY_FAILED,
    METADATA_FORMATS,
    NO_DOI,
    UNKNOWN_METADATA_FORMAT,
    Candidate,
    dataset_candidate,
    metadata_candidate,
    series_id,
)
from adapter.discovery.sitegraph import dataset_response
from adapter.errors import FetchError, StoreError
from adapter.findings import Finding, Severity
from adapter.http import findings as fetch_findings
from adapter.http.fetcher import ACCEPT_XML, Fetcher
from adapter.models import DatasetReport, DatasetResult, Fetched, MediaObjectRef
from adapter.pipeline import CheckOptions, check_landing_page, get_page, listed_series
from adapter.render.rendered import render_if_needed
from adapter.report.stored import capped_findings, report_summary
from adapter.store.frontier import FrontierRow, PageUpdate
from adapter.sync.outcome import CheckedPage, PageOutcome

log = logging.getLogger(__name__)
GONE_STATUSES = (404, 410)
# not fetched by choice (robots.txt, the address policy): not an error to retry every run
REFUSED = frozenset({fetch_findings.DISALLOWED.code, fetch_findings.UNSAFE_URL.code})


def fetch_landing_page(
    node: NodeSettings, fetcher: Fetcher, row: FrontierRow
) -> Fetched | FetchError:
    """The page's conditional GET, rendered in the browser when the node's `rendering` asks.

    Called in the page thread, before the page is checked (here or in the checking pool's
    children): rendering waits on the browser as a fetch waits on the host, and the
    process's one browser lives beside the page threads (`adapter.render.browser`).
    A sitegraph's Dataset is its document as discovery kept it, never fetched (the graph
    was, once this run, at its host's pace)."""
    if row.document is not None:
        return dataset_response(row.url, row.document)
    got = get_page(fetcher, row.url, row.etag, row.last_modified)
    rendering = node.rendering
    return render_if_needed(
        got, fetcher, rendering.mode, rendering.max_pages_at_once, rendering.browser
    )


def check_and_plan(
    node: NodeSettings,
    fetcher: Fetcher,
    row: FrontierRow,
    prefetched: Fetched | FetchError | None = None,
) -> CheckedPage:
    """Check one claimed page and decide its writes; never raises for a page's fault.

    `prefetched`: the page's GET, made in another process (`adapter.sync.checkpool`)."""
    checks = node.checks
    limits = node.limits()  # read once a page: the ISO copy's GET is capped by it too
    options = CheckOptions(
        limits=limits,
        follow=False,
        profile=checks.profile,
        identifier_schemes=checks.identifier_schemes,
        required=frozenset(checks.required),
        shacl=checks.shacl,
        dataone_index=checks.search_index,
    )
    try:
        report = check_landing_page(
            row.url, fetcher, options, sitemap_links=row.links, etag=row.etag,
            last_modified=row.last_modified, prefetched=prefetched,
        )  # fmt: skip
    except FetchError as exc:
        report = DatasetReport(
            url=row.url, findings=[Finding(exc.code, Severity.ERROR, exc.message, exc.url)]
        )
    except StoreError:  # the pacer's store is gone: not the page's fault, the run fails
        raise
    except Exception as exc:  # the adapter's own fault: keep the run going, say where
        log.exception("checking %s failed", row.url)
        out = PageOutcome(row.url, "error", error=f"adapter/{type(exc).__name__}")
        return CheckedPage(row, out, PageUpdate("error", keep_validators=True), [])
    out, page, candidates = _plan(node, fetcher, row, report, limits.max_metadata_bytes)
    checked = CheckedPage(row, out, page, candidates, listed_series(report, candidates))
    if page.report is not None:  # as the write stores it, unless it adds findings
        checked.report_json = json.dumps(capped_findings(page.report, out.findings))
        checked.report_findings = len(out.findings)
    return checked


def _plan(
    node: NodeSettings,
    fetcher: Fetcher,
    row: FrontierRow,
    report: DatasetReport,
    max_metadata_bytes: int,
) -> tuple[PageOutcome, PageUpdate, list[Candidate]]:
    status, fetched = report.status, report.fetched
    validators: dict[str, Any] = {
        "etag": fetched.etag if fetched else None,
        "last_modified": fetched.last_modified if fetched else None,
    }
    summary = report_summary(report, findings=False)  # the write adds them
    if report.not_modified:
        out = PageOutcome(row.url, "not-modified", http_status=304)
        # the body is the one we saw last time: its report stays
        return out, PageUpdate("not-modified", 304, keep_validators=True), []
    findings = report.all_findings()
    if status in GONE_STATUSES or any(f.code == fetch_findings.GONE.code for f in report.findings):
        out = PageOutcome(row.url, "gone", http_status=status, findings=findings)
        return out, PageUpdate("gone", status, report=summary), []
    candidates: list[Candidate] = []
    extra: list[Finding] = []
    seen: set[str] = set()
    # the same verdict as `adapter check-dataset`: page-level errors block every Dataset
    harvestable = [d for d in report.datasets if d.harvestable] if report.harvestable else []
    accepted = profile_for(node.checks.profile, node.checks.identifier_schemes).schemes
    for dataset in harvestable:
        sid = series_id(dataset, node.dataone.series_id_scheme, accepted)
        if sid is None:
            extra.append(NO_DOI.at(row.url))
            continue
        if sid in seen:
            extra.append(DUPLICATE_DOI.at(row.url, f"{sid} appears twice on the page"))
            continue
        seen.add(sid)
        cand = dataset_candidate(
            dataset.original, dataset.doi, row.url, node.sync.volatile_properties, series=sid
        )
        candidates.append(cand)
        if node.dataone.sync_metadata_copy:
            copy = _metadata_copy(
                fetcher, max_metadata_bytes, row.url, dataset, cand.series_id, extra
            )
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
            out.error = codes[0] if codes else fetch_findings.HTTP_STATUS.code
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
    fetcher: Fetcher,
    max_bytes: int,
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
            got = fetcher.get(ref.content_url, accept=ACCEPT_XML, max_bytes=max_bytes)
        except FetchError as exc:
            why = f"could not be fetched: {exc.message}"
            findings.append(_copy_failed(ref, why))
            return None
        if got.status != 200 or not got.body:
            why = f"answered HTTP {got.status}" + ("" if got.body else " with no body")
            findings.append(_copy_failed(ref, why))
            return None
        return metadata_candidate(got.body, format_id, dataset_series, landing, got.final_url)
    if refs:
        formats = ", ".join(sorted({f for r in refs for f in r.encoding_format}))
        findings.append(UNKNOWN_METADATA_FORMAT.at(landing, f"encodingFormat {formats}"))
    return None


def _copy_failed(ref: MediaObjectRef, why: str) -> Finding:
    """sync/metadata-copy-failed naming the link (the Dataset's encoding or subjectOf) and
    why: the landing page answered, only its metadata file did not."""
    url = ref.content_url or ""
    named = f"{ref.property} {ref.link_property}"
    message = f"The metadata file {url} ({named}) {why}; the Dataset is synced without it."
    return METADATA_COPY_FAILED.at(url, message, ref.where)
