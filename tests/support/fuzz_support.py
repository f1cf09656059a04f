"""Shared pieces of the hypothesis fuzz tests: the catalogue check and token alphabets."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from adapter.findings import Finding, FindingType, catalogue


@cache
def known() -> dict[str, FindingType]:
    """Every catalogued finding type by code, listed at the first check rather than at
    import: `catalogue()` imports every module of the package (Playwright's, COAR
    Notify's, the scheduler's...), and seven test modules import this one."""
    return {t.code: t for t in catalogue()}


FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def assert_documented(findings: Iterable[Finding]) -> None:
    """Every finding carries a catalogued code with its declared severity, and says where."""
    types = known()
    for finding in findings:
        assert finding.code in types, f"undocumented finding code {finding.code!r}"
        assert finding.severity == types[finding.code].severity, finding
        assert finding.message


def pieces(tokens: list[str], max_size: int = 60) -> st.SearchStrategy[str]:
    """Text made of meaningful tokens and arbitrary characters, so parsers go deep."""
    return st.lists(st.sampled_from(tokens) | st.text(max_size=4), max_size=max_size).map("".join)
