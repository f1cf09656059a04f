"""A page with many Datasets, summed up for the person who has to fix it.

A catalogue page or a JSON-LD feed can carry hundreds of Datasets (one real page has
214), each with its checklist, its DataONE-search preview and a dozen recommendations:
shown whole, the check page was 1.7 MB of HTML and the text report 10,000 lines, with
the one thing a repository manager needs (which problem, on how many Datasets) nowhere.
Pages made from one template fail the same way on every Dataset, so the summary says
that first: how many are harvestable, and each finding code with the number of
Datasets that have it. Then one verdict line per Dataset, and in full only the first
few (enough to see the pattern) and the odd ones out: when most Datasets pass and a
few do not, those few are what the manager is looking for. A page where all fail gets
its totals and its first few, not the same advice 214 times.

Pure, over the models alone: the text report (`adapter.report.text`, which says what blocks
each Dataset) and the check page (`adapter.web.view`) both lay out what `summarize`
decides; the JSON report always lists everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adapter.findings import Severity
from adapter.models import DatasetResult

FEW = 5  # up to this many Datasets, every one is shown whole, as before
FIRST = 3  # with more, the first ones shown whole, in the page's order
ODD_ONES = FEW  # and the Datasets that are not harvestable, when at most this many
_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True, slots=True)
class CodeTotal:
    """One finding code across the page's Datasets."""

    code: str
    severity: Severity
    datasets: int  # how many Datasets have it
    first: int  # the first of them (1-based, the page's order)


@dataclass(frozen=True, slots=True)
class Many:
    """What a page with more than FEW Datasets shows of them."""

    total: int
    harvestable: int
    codes: list[CodeTotal]  # errors first, then warnings, then info; most Datasets first
    whole: frozenset[int]  # 1-based numbers of the Datasets shown in full

    @property
    def not_harvestable(self) -> int:
        return self.total - self.harvestable

    def folded(self) -> int:
        return self.total - len(self.whole)


def summarize(datasets: Sequence[DatasetResult]) -> Many | None:
    """The totals and the Datasets shown whole; None when there are few (all shown whole)."""
    if len(datasets) <= FEW:
        return None
    failing = [n for n, d in enumerate(datasets, 1) if not d.harvestable]
    whole = set(range(1, FIRST + 1))
    if len(failing) <= ODD_ONES:
        whole.update(failing)
    return Many(
        total=len(datasets),
        harvestable=len(datasets) - len(failing),
        codes=code_totals(datasets),
        whole=frozenset(whole),
    )


def code_totals(datasets: Sequence[DatasetResult]) -> list[CodeTotal]:
    """Each code with the number of Datasets that have it (a Dataset counts once)."""
    by_code = _numbers_by_code(datasets, frozenset())
    totals = [CodeTotal(code, sev, len(ns), ns[0]) for code, (_, sev, ns) in by_code.items()]
    return sorted(totals, key=lambda t: (_SEVERITY_ORDER[t.severity], -t.datasets, t.code))


def folded_codes(
    datasets: Sequence[DatasetResult], many: Many
) -> dict[str, dict[str, tuple[Severity, list[int]]]]:
    """The findings of the Datasets not shown whole: stage -> code -> (severity, the
    numbers of the Datasets that have it), to say once per code, not once per Dataset."""
    out: dict[str, dict[str, tuple[Severity, list[int]]]] = {}
    for code, (stage, severity, found) in _numbers_by_code(datasets, many.whole).items():
        out.setdefault(stage, {})[code] = (severity, found)
    return out


def _numbers_by_code(
    datasets: Sequence[DatasetResult], skipped: frozenset[int]
) -> dict[str, tuple[str, Severity, list[int]]]:
    """code -> (its stage and severity, as first seen; the 1-based numbers of the Datasets
    that have it, each once), in the order the codes first appear; `skipped` left out."""
    out: dict[str, tuple[str, Severity, list[int]]] = {}
    for n, d in enumerate(datasets, 1):
        if n in skipped:
            continue
        for f in d.findings:
            _, _, found = out.setdefault(f.code, (f.stage, f.severity, []))
            if not found or found[-1] != n:
                found.append(n)
    return out


def numbers(found: Sequence[int], shown: int = 12) -> str:
    """Dataset numbers as a short list: "4, 5, 6" or "4, 5, 6, ..., 214"."""
    if len(found) <= shown:
        return ", ".join(str(n) for n in found)
    return ", ".join(str(n) for n in found[: shown - 1]) + f", ..., {found[-1]}"
