"""The operator's view of the store: what each node's runs did, and why a page failed.

    /ops                           nodes: last and next run, pages by outcome, queue;
                                   a chart of the recent runs
    /ops/runs/ID                   one run's summary, its finding codes with page counts
    /ops/pages?node=N&code=C       the pages whose last report has code C (or &status=S)
    /ops/page?node=N&url=U         one page's stored report
    /ops/queue?node=N              the outbox events not yet acknowledged
    /ops/failures?node=N           what DataONE reported through POST /error

Read-only: every query is `adapter.store.overview` or the store's history. The
next run comes from the caller (`next_run`), since the schedule's arithmetic
lives with the scheduler, above this layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from adapter.store import overview
from adapter.store.db import Store
from adapter.store.history import RunInfo

# node id -> its last run -> when the next is due (None: unknown, no configuration)
NextRun = Callable[[str, RunInfo | None], str | None]
RECENT_RUNS = 30
CHART_W, CHART_H = 640, 160
# the run summary's page outcomes, in the chart's stacking order: (key, label, css class)
OUTCOMES = (
    ("new_objects", "new objects", "new"),
    ("new_versions", "new versions", "version"),
    ("unchanged", "unchanged", "same"),
    ("not_modified", "not modified (304)", "same304"),
    ("pages_not_harvestable", "not harvestable", "bad"),
    ("errors", "errors", "error"),
)


@dataclass(frozen=True, slots=True)
class NodeView:
    id: str
    name: str
    last: RunInfo | None
    next_run: str | None
    counts: dict[str, int]
    pending: int


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
    bars: list[Bar] = field(default_factory=list)
    top: int = 0  # the largest bar's pages
    slowest: float = 0.0  # seconds
    legend: list[tuple[str, str]] = field(default_factory=list)

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
        self, store: Store, names: dict[str, str] | None = None, next_run: NextRun | None = None
    ) -> None:
        self.store = store
        self.names = dict(names or {})  # node id -> name, from the configuration
        self.next_run = next_run

    def node_ids(self) -> list[str]:
        found = {*self.names, *self.store.node_ids(), *overview.frontier_node_ids(self.store)}
        found.update(r.node_id for r in self.store.runs(None, RECENT_RUNS))
        return sorted(found)

    def nodes(self) -> list[NodeView]:
        out = []
        for node_id in self.node_ids():
            runs = self.store.runs(node_id, 1)
            last = runs[0] if runs else None
            out.append(
                NodeView(
                    id=node_id,
                    name=self.names.get(node_id, ""),
                    last=last,
                    next_run=self.next_run(node_id, last) if self.next_run else None,
                    counts=overview.status_counts(self.store, node_id),
                    pending=overview.pending_events(self.store, node_id),
                )
            )
        return out

    def recent_runs(self, node_id: str | None = None) -> list[RunInfo]:
        return self.store.runs(node_id or None, RECENT_RUNS)


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


def run_chart(runs: Sequence[RunInfo]) -> Chart:
    """Stacked bars of pages by outcome per run (oldest left), and the duration as a line."""
    chart = Chart(CHART_W, CHART_H, legend=[(cls, label) for _, label, cls in OUTCOMES])
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
    value = run.summary.get(key, 0)
    return int(value) if isinstance(value, int | float) else 0


def _seconds(run: RunInfo) -> float:
    value = run.summary.get("duration_s")
    if isinstance(value, int | float):
        return float(value)
    if run.finished_at is not None:
        return (run.finished_at - run.started_at).total_seconds()
    return 0.0


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else "-"
