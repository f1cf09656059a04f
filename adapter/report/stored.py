"""The part of a report a sync keeps on the page's frontier row, with its caps.

Findings and the text report are capped (MAX_REPORT_*) so one page with thousands of
findings cannot bloat the store; errors and warnings are kept over advice.
"""

from __future__ import annotations

from typing import Any

from adapter.dataone.profiles import as_json as checklist_json
from adapter.findings import Finding, Stage
from adapter.models import DatasetReport
from adapter.report.text import SEVERITY_ORDER, render_text

MAX_REPORT_FINDINGS = 200
MAX_REPORT_TEXT = 64_000  # characters of the text report kept for `adapter pages show`


def report_summary(report: DatasetReport, *, findings: bool = True) -> dict[str, Any]:
    """The part of a report kept on the frontier row (findings capped). `findings`: False
    for a sync, whose write adds them with its own (`capped_findings`): made here too, they
    were made, sent between processes and replaced for nothing."""
    summary = {
        "url": report.url,
        "final_url": report.final_url,
        "status": report.status,
        "not_modified": report.not_modified,
        "rendered": report.rendered,
        "harvestable": report.harvestable,
        "profile": report.profile,  # the operator view shows it, and checks again under it
        "datasets": [
            {"doi": d.doi, "harvestable": d.harvestable, "checklist": checklist_json(d.checklist)}
            for d in report.datasets
        ],
        "text": capped_text(render_text(report)),  # what `adapter pages show` prints
    }
    return capped_findings(summary, report.all_findings()) if findings else summary


def capped_findings(summary: dict[str, Any], findings: list[Finding]) -> dict[str, Any]:
    """`summary` with its findings replaced by `findings`, at most MAX_REPORT_FINDINGS of them.

    The sync's own findings (`sync/...`) are appended to the stored text report
    too, under a heading of their own, so `adapter pages show` says why a page
    that reads as harvestable was not synced.
    """
    if len(findings) > MAX_REPORT_FINDINGS:  # keep errors and warnings over advice (soso/ info)
        findings = sorted(findings, key=lambda f: SEVERITY_ORDER[f.severity])  # errors kept first
    out = {
        **summary,
        "findings": [f.as_dict() for f in findings[:MAX_REPORT_FINDINGS]],
        "findings_dropped": max(0, len(findings) - MAX_REPORT_FINDINGS),
    }
    text = summary.get("text")
    extra = [f for f in findings if f.stage == Stage.SYNC]  # no DOI, duplicate DOI, ...
    if isinstance(text, str) and extra and "\nFound by the sync\n" not in text:
        lines = ["", "Found by the sync"]
        for f in extra:
            lines.append(f"  {f.severity.upper():<8} {f.code}")
            lines.append("             " + f.message.replace("\n", "\n             "))
        out["text"] = capped_text(text + "\n".join(lines) + "\n")
    return out


def capped_text(text: str) -> str:
    """At most MAX_REPORT_TEXT characters of a text report, saying what was cut."""
    if len(text) <= MAX_REPORT_TEXT:
        return text
    cut = len(text) - MAX_REPORT_TEXT
    return (
        text[:MAX_REPORT_TEXT]
        + f"\n... ({cut} more characters; `adapter check-dataset URL` prints the whole report)\n"
    )
