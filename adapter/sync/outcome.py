"""A landing page's result between check and write, and what a run adds up from them.

Shared by the checking side (`adapter.sync.page`, also run in the checking pool's
children) and the writing side (`adapter.sync.write`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from adapter.dataone.records import (
    DOI_OF_OTHER_NODE,
    DUPLICATE_DOI,
    HELD_BY_PROFILE,
    SERIES_MOVED,
    SERIES_UNLISTED,
    Candidate,
)
from adapter.findings import Finding, Severity, Stage
from adapter.slotpickle import fast_pickle
from adapter.store.frontier import FrontierRow, PageUpdate

# what happened to series (moved, archived, refused) is counted in the run summary
SERIES_CODES = frozenset(
    t.code
    for t in (SERIES_MOVED, SERIES_UNLISTED, DOI_OF_OTHER_NODE, DUPLICATE_DOI, HELD_BY_PROFILE)
)
# counted under this key: a page with no Dataset that names no error of its own
NO_DATASET = f"{Stage.SYNC}/no-dataset"


@fast_pickle  # crosses processes in a multi-process sync
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


@fast_pickle  # crosses processes in a multi-process sync
@dataclass(slots=True)
class CheckedPage:
    """A page's outcome and what to write for it, not yet written.

    Checked in a page thread or a checking pool's child (`check_and_plan`, no store
    access), written by the loop's thread (`commit_group`).
    """

    row: FrontierRow
    out: PageOutcome
    page: PageUpdate
    candidates: list[Candidate]
    # the series ids the page still publishes (None: the page was not read, keep all);
    # the page's other live series are archived (adapter.store.ledger.archive_unlisted)
    listed: frozenset[str] | None = None
    # the stored report as JSON text, made where the page was checked with the findings it
    # had then (their number beside it): the write uses it when it adds none, so the one
    # thread every write goes through does not encode a report a page (6 % of its time)
    report_json: str | None = None
    report_findings: int = 0


# The RunSummary fields that count committed pages: kept in the run's row as pages
# commit (adapter.store.history.add_to_run), so workers' pages and a killed run's count.
PAGE_COUNTS = frozenset(
    {"fetched", "not_modified", "unchanged", "new_objects", "new_versions", "archived", "gone",
     "pages_not_harvestable", "not_harvestable", "errors", "error_codes", "rendering"}
)  # fmt: skip


def page_counts(outcomes: list[PageOutcome]) -> dict[str, Any]:
    """What `outcomes` add to a run's page counts (zeros left out)."""
    tally = RunSummary("")
    for out in outcomes:
        tally.add(out)
    return {k: v for k, v in tally.as_dict().items() if k in PAGE_COUNTS and v}


@dataclass(slots=True)
class RunSummary:
    """What one run did; kept in the run history and logged by the scheduler."""

    node_id: str
    run_id: int = 0
    status: str = "running"  # ok | interrupted | failed
    started_at: str = ""
    finished_at: str = ""
    pages_seen: int = 0  # listed by this run's discovery
    due: int = 0  # due when processing began
    fetched: int = 0  # pages requested (a 304 included)
    not_modified: int = 0  # answered 304 to our conditional GET
    unchanged: int = 0  # fetched, same Datasets as stored
    new_objects: int = 0  # new series (metadata copies and resource maps included)
    new_versions: int = 0  # new PIDs obsoleting the previous head
    archived: int = 0  # heads archived (gone, or missing from the sitemaps)
    policy_updates: int = 0  # records whose system metadata took a changed node policy
    gone: int = 0  # pages that answered 404/410
    pages_not_harvestable: int = 0  # fetched, but no Dataset could be synced
    not_harvestable: dict[str, int] = field(default_factory=dict)  # error code -> pages
    errors: int = 0  # pages that failed (network, server, the adapter itself)
    error_codes: dict[str, int] = field(default_factory=dict)
    discovery_findings: dict[str, int] = field(default_factory=dict)
    series_findings: dict[str, int] = field(default_factory=dict)  # SERIES_CODES -> count
    # pages by render/ code: rendered in the browser, failed, requests refused (rendering.mode)
    rendering: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    message: str | None = None  # why a run failed
    notices: list[str] = field(default_factory=list)  # what the operator should fix (config)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def add(self, out: PageOutcome) -> None:
        if out.status == "lost":
            return
        self.fetched += 1
        self.not_modified += out.status == "not-modified"
        self.unchanged += out.status == "unchanged"
        self.new_objects += len(out.created)
        self.new_versions += len(out.versions)
        self.archived += len(out.archived)
        self.gone += out.status == "gone"
        if out.status == "not-harvestable":
            self.pages_not_harvestable += 1
            blocking = {f.code for f in out.findings if f.severity is Severity.ERROR}
            for code in sorted(blocking) or [NO_DATASET]:
                self.not_harvestable[code] = self.not_harvestable.get(code, 0) + 1
        for f in out.findings:
            if f.code in SERIES_CODES:
                self.series_findings[f.code] = self.series_findings.get(f.code, 0) + 1
        for code in {f.code for f in out.findings if f.stage == Stage.RENDER}:
            self.rendering[code] = self.rendering.get(code, 0) + 1
        if out.status == "error":
            self.errors += 1
            code = out.error or "error"
            self.error_codes[code] = self.error_codes.get(code, 0) + 1
