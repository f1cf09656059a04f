"""What a report concludes: harvestable, not harvestable, or could not check.

Shared by the text and JSON views and the check page, so each says the same verdict
and the same codes to fix; a page that never answered is not called refused.
"""

from __future__ import annotations

from adapter.dataone.profiles import PROFILE_UNMET
from adapter.findings import Finding, Severity
from adapter.http import findings as fetch_findings
from adapter.models import DatasetReport, DatasetResult

# The landing page never answered (refused, DNS, a timeout or the check's deadline, an
# address refused, a paused host): nothing about the page was learned.
UNREACHED = frozenset(
    t.code
    for t in (
        fetch_findings.CONNECTION,
        fetch_findings.TIMEOUT,
        fetch_findings.UNSAFE_URL,
        fetch_findings.HOST_PAUSED,
        fetch_findings.RATE_LIMITED,
    )
) | {"robots/unreachable"}  # its robots.txt could not be read: the page was not asked


def could_not_check(report: DatasetReport) -> Finding | None:
    """The finding that says why the page was never checked, or None when it was."""
    if report.fetched is not None or report.status is not None or report.datasets:
        return None
    return next((f for f in report.findings if f.code in UNREACHED), None)


def verdict(report: DatasetReport) -> str:
    """harvestable | not-harvestable | could-not-check: not checked is not refused."""
    if report.harvestable:
        return "harvestable"
    return "could-not-check" if could_not_check(report) else "not-harvestable"


def blockers(d: DatasetResult) -> list[str]:
    """The codes that keep one Dataset from being harvested, in order: an unmet requirement
    of the profile by the codes that say why (as the report's "to fix" line does)."""
    unmet = [
        code
        for item in d.checklist
        if item.blocking and not item.met
        for code in item.codes
        if code != PROFILE_UNMET.code
    ]
    codes: list[str] = []
    for f in d.findings:
        if f.severity is Severity.ERROR:
            codes += unmet if f.code == PROFILE_UNMET.code and unmet else [f.code]
    return list(dict.fromkeys(codes))


def to_fix(report: DatasetReport) -> list[str]:
    """The codes of the errors, in order; a profile's unmet requirement by the codes behind it."""
    codes = [f.code for f in report.findings if f.severity is Severity.ERROR]
    for d in report.datasets:
        codes += blockers(d)
    return list(dict.fromkeys(codes))
