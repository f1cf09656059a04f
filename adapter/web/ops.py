"""The operator's view of the store: what each node's runs did, and why a page failed.

    /ops                           nodes: profile, last and next run, pages by outcome,
                                   queue; a chart of each node's recent runs
    /ops/node?node=N               one node: its pages by outcome, every finding code
                                   across its pages, its runs chart
    /ops/runs?node=N               every run, newest first
    /ops/runs/ID                   one run's summary, its finding codes with page counts
    /ops/pages?node=N&code=C       the pages whose last report has code C (or &status=S)
    /ops/page?node=N&url=U         one page's stored report: checklist, errors first
    /ops/queue?node=N              the outbox events not yet acknowledged
    /ops/failures?node=N           what DataONE reported through POST /error
    /ops/notify[/sent]?node=N      COAR Notify: received (and what became of each), sent

Every list is a page of rows (`?page=P`) with its true total
(`adapter.store.overview.Listing`). Read-only: every query is
`adapter.store.overview` or the store's history. The next run comes from the
caller (`next_run`), since the schedule's arithmetic lives with the
scheduler, above this layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from adapter.store import overview
from adapter.store.db import Store
from adapter.store.history import RunInfo
from adapter.web.opsaccess import OpsAccess

# node id -> its last run -> when the next is due (None: unknown, no configuration)
NextRun = Callable[[str, RunInfo | None], str | None]
RECENT_RUNS = 30
CHART_W, CHART_H = 640, 160
# the pages a run fetched, by outcome, in the chart's stacking order: (key, label, css class);
# "changed" is what is left of `fetched`: pages that gave new objects or versions
OUTCOMES = (
    ("changed", "new or changed", "new"),
    ("unchanged", "unchanged", "same"),
    ("not_modified", "not modified (304)", "same304"),
    ("pages_not_harvestable", "not harvestable", "bad"),
    ("gone", "gone (404/410)", "gone"),
    ("errors", "errors", "error"),
)


@dataclass(frozen=True, slots=True)
class NodeView:
    id: str
    name: str
    profile: str  # the requirement profile its pages are checked under ("" unknown)
    last: RunInfo | None
    next_run: str | None
    counts: dict[str, int]
    pending: int

    @property
    def pages(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    width: float
    run: RunInfo
    segments: list[tuple[float, float, str, str, int]]  # y, height, css class, label, value
    duration_y: float


@dataclass(slots=True)
class Chart:
    width: int
    height: int
    node_id: str = ""
    bars: list[Bar] = field(default_factory=list)
    top: int = 0  # the largest bar's pages
    slowest: float = 0.0  # seconds
    legend: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ticks(self) -> list[tuple[float, int]]:
        """The y axis: (y, pages) at 0, half and the top."""
        if not self.top:
            return []
        half = self.top // 2
        return [
            (float(self.height), 0),
            (self.height - self.height * half / self.top, half),
            (0.0, self.top),
        ]

    @property
    def labelled(self) -> list[Bar]:
        """The bars whose run id is written under them (at most about ten)."""
        step = max(1, -(-len(self.bars) // 10))
        return self.bars[::-1][::step]

    @property
    def duration_points(self) -> str:
        return " ".join(f"{b.x + b.width / 2:.1f},{b.duration_y:.1f}" for b in self.bars)


@dataclass(frozen=True, slots=True)
class CodeCount:
    code: str
    pages: int
    kind: str  # not harvestable | error | discovery


class Ops:
    def __init__(
        self,
        store: Store,
        names: dict[str, str] | None = None,
        next_run: NextRun | None = None,
        profiles: dict[str, str] | None = None,
        access: OpsAccess | None = None,
    ) -> None:
        self.store = store
        self.names = dict(names or {})  # node id -> name, from the configuration
        self.next_run = next_run
        self.profiles = dict(profiles or {})  # node id -> requirement profile, configured
        self.access = access or OpsAccess()  # loopback callers only, unless a secret is set

    def node_ids(self) -> list[str]:
        return sorted({*self.names, *overview.node_ids(self.store)})

    def nodes(self) -> list[NodeView]:
        return [self.node(node_id) for node_id in self.node_ids()]

    def node(self, node_id: str) -> NodeView:
        runs = self.store.runs(node_id, 1)
        last = runs[0] if runs else None
        return NodeView(
            id=node_id,
            name=self.names.get(node_id, ""),
            profile=self.profile(node_id),
            last=last,
            next_run=self.next_run(node_id, last) if self.next_run else None,
            counts=overview.status_counts(self.store, node_id),
            pending=overview.pending_events(self.store, node_id),
        )

    def profile(self, node_id: str) -> str:
        """The configured profile, else the one a stored report of the node was checked under."""
        found = self.profiles.get(node_id) or overview.recorded_profile(self.store, node_id)
        return found or ""

    def recent_runs(self, node_id: str | None = None) -> list[RunInfo]:
        return self.store.runs(node_id or None, RECENT_RUNS)

    def charts(self, node_ids: Sequence[str]) -> list[Chart]:
        """One chart per node: the pages of its recent runs."""
        return [run_chart(self.recent_runs(n), n) for n in node_ids]


def code_counts(run: RunInfo) -> list[CodeCount]:
    """The run's finding codes with the pages that had them, most pages first."""
    s = run.summary
    out = [CodeCount(c, int(n), "not harvestable") for c, n in _items(s, "not_harvestable")]
    out += [CodeCount(c, int(n), "error") for c, n in _items(s, "error_codes")]
    out += [CodeCount(c, int(n), "discovery") for c, n in _items(s, "discovery_findings")]
    return sorted(out, key=lambda c: (-c.pages, c.code))


def _items(summary: dict[str, Any], key: str) -> list[tuple[str, Any]]:
    value = summary.get(key) or {}
    return list(value.items()) if isinstance(value, dict) else []


def run_chart(runs: Sequence[RunInfo], node_id: str = "") -> Chart:
    """Stacked bars of the pages each run fetched, by outcome (oldest left), and the
    duration as a line: one node's runs, so the bars compare like with like."""
    legend = [(cls, label) for _, label, cls in OUTCOMES]
    chart = Chart(CHART_W, CHART_H, node_id, legend=legend)
    ordered = sorted(runs, key=lambda r: r.id)[-RECENT_RUNS:]
    if not ordered:
        return chart
    totals = [sum(_count(r, key) for key, _, _ in OUTCOMES) for r in ordered]
    chart.top = max(max(totals), 1)
    chart.slowest = max(max(_seconds(r) for r in ordered), 1e-9)
    slot = CHART_W / len(ordered)
    width = max(2.0, min(28.0, slot * 0.7))
    for i, r in enumerate(ordered):
        y = float(CHART_H)
        segments = []
        for key, label, cls in OUTCOMES:
            value = _count(r, key)
            if value <= 0:
                continue
            height = CHART_H * value / chart.top
            y -= height
            segments.append((round(y, 1), round(height, 1), cls, label, value))
        duration_y = CHART_H - (CHART_H - 4) * _seconds(r) / chart.slowest
        x = i * slot + (slot - width) / 2
        chart.bars.append(Bar(round(x, 1), round(width, 1), r, segments, round(duration_y, 1)))
    return chart


def _count(run: RunInfo, key: str) -> int:
    """Pages of the run with this outcome (the summary's counts; "changed" by difference)."""
    if key == "changed":
        rest = sum(_count(run, k) for k, _, _ in OUTCOMES if k != "changed")
        return max(0, _count(run, "fetched") - rest)
    value = run.summary.get(key, 0)
    return int(value) if isinstance(value, int | float) else 0


def page_count(run: RunInfo) -> int:
    """The pages a run fetched, whatever their outcome."""
    return sum(_count(run, key) for key, _, _ in OUTCOMES)


def _seconds(run: RunInfo) -> float:
    value = run.summary.get("duration_s")
    if isinstance(value, int | float):
        return float(value)
    if run.finished_at is not None:
        return (run.finished_at - run.started_at).total_seconds()
    return 0.0


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else "-"


@dataclass(frozen=True, slots=True)
class StoredItem:
    label: str
    essential: bool
    state: str  # ok | missing | improve, as on the check page
    codes: list[str]


@dataclass(frozen=True, slots=True)
class StoredView:
    """A page's stored report laid out as the check page lays out a fresh one."""

    harvestable: bool | None
    profile: str
    checklist: list[StoredItem]  # the primary Dataset's; [] for a report stored before them
    findings: list[dict[str, Any]]  # errors first, then warnings, then advice
    errors: int
    warnings: int
    datasets: list[dict[str, Any]]
    dropped: int


_RANK = {"error": 0, "warning": 1, "info": 2}


def stored_view(report: dict[str, Any] | None, profile: str = "") -> StoredView:
    """The stored summary (`adapter.report.stored.report_summary`) for the page's template."""
    r = report or {}
    datasets = [d for d in r.get("datasets") or [] if isinstance(d, dict)]
    findings = [f for f in r.get("findings") or [] if isinstance(f, dict)]
    findings.sort(key=lambda f: _RANK.get(str(f.get("severity")), 3))
    primary = next((d for d in datasets if d.get("harvestable")), datasets[0] if datasets else {})
    items = [_stored_item(i) for i in primary.get("checklist") or [] if isinstance(i, dict)]
    harvestable = r.get("harvestable")
    return StoredView(
        harvestable=harvestable if isinstance(harvestable, bool) else None,
        profile=str(r.get("profile") or profile or ""),
        checklist=items,
        findings=findings,
        errors=sum(f.get("severity") == "error" for f in findings),
        warnings=sum(f.get("severity") == "warning" for f in findings),
        datasets=datasets,
        dropped=int(r.get("findings_dropped") or 0),
    )


def _stored_item(item: dict[str, Any]) -> StoredItem:
    codes = [str(c) for c in item.get("codes") or []]
    blocking = bool(item.get("blocking"))
    if item.get("met"):
        state = "improve" if codes else "ok"
    else:
        state = "missing" if blocking else "improve"
    return StoredItem(
        str(item.get("label") or item.get("requirement") or "?"), blocking, state, codes
    )
