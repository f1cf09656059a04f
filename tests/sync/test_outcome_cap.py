"""A page's stored findings are capped; a full list keeps errors and warnings over advice."""

from __future__ import annotations

from adapter.findings import Finding, Severity
from adapter.report.stored import MAX_REPORT_FINDINGS, capped_findings


def finding(code: str, severity: Severity) -> Finding:
    return Finding(code, severity, code, "https://repo.example/d")


def test_a_short_list_is_kept_in_order() -> None:
    found = [finding("soso/version-missing", Severity.INFO), finding("x/e", Severity.ERROR)]
    out = capped_findings({}, found)
    assert [f["code"] for f in out["findings"]] == ["soso/version-missing", "x/e"]
    assert out["findings_dropped"] == 0


def test_a_full_list_drops_advice_before_errors() -> None:
    # 214 Datasets with ten soso/ infos each, the one error in the last Dataset
    advice = [finding("soso/funding-missing", Severity.INFO)] * (MAX_REPORT_FINDINGS + 40)
    found = [*advice, finding("soso/license-missing", Severity.WARNING)]
    found.append(finding("dataone/identifier-missing", Severity.ERROR))
    out = capped_findings({}, found)
    codes = [f["code"] for f in out["findings"]]
    assert len(codes) == MAX_REPORT_FINDINGS
    assert codes[:2] == ["dataone/identifier-missing", "soso/license-missing"]
    assert out["findings_dropped"] == 42
