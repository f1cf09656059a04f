"""A landing page's result between check and write: its outcome, and what to write.

Shared by the checking side (`adapter.harvest`, run in the child processes of a
multi-process sync) and the writing side (`adapter.pagewrite`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapter.dataone.records import Candidate
from adapter.findings import Finding, Severity
from adapter.slotpickle import fast_pickle
from adapter.store.frontier import FrontierRow, PageUpdate

MAX_REPORT_FINDINGS = 200


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

    def blocking_codes(self) -> list[str]:
        """The error finding codes that kept this page's Datasets out."""
        return sorted({f.code for f in self.findings if f.severity is Severity.ERROR})


@fast_pickle  # crosses processes in a multi-process sync
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


def capped_findings(summary: dict[str, Any], findings: list[Finding]) -> dict[str, Any]:
    """`summary` with its findings replaced by `findings`, at most MAX_REPORT_FINDINGS of them."""
    return {
        **summary,
        "findings": [f.as_dict() for f in findings[:MAX_REPORT_FINDINGS]],
        "findings_dropped": max(0, len(findings) - MAX_REPORT_FINDINGS),
    }
