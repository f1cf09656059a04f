"""The runs chart counts pages, per node: gone pages too, and the rest of `fetched` as changed."""

from __future__ import annotations

from datetime import UTC, datetime

from adapter.store.history import RunInfo
from adapter.web.ops import page_count, run_chart


def run(run_id: int, **summary: int) -> RunInfo:
    return RunInfo(run_id, "urn:node:A", datetime.now(UTC), None, "ok", dict(summary), None)


def test_a_bar_is_the_pages_a_run_fetched_by_outcome_gone_included() -> None:
    # 100 pages fetched: 10 gone, 5 errors, 20 not harvestable, 30 unchanged, 15 not modified,
    # so 20 changed; 900 new objects are objects, not pages, and make no bar taller
    r = run(1, fetched=100, gone=10, errors=5, pages_not_harvestable=20, unchanged=30,
            not_modified=15, new_objects=900, new_versions=40)  # fmt: skip
    chart = run_chart([r], "urn:node:A")
    assert page_count(r) == 100 and chart.top == 100
    by_label = {s[3]: s[4] for s in chart.bars[0].segments}
    assert by_label == {
        "new or changed": 20,
        "unchanged": 30,
        "not modified (304)": 15,
        "not harvestable": 20,
        "gone (404/410)": 10,
        "errors": 5,
    }
    assert chart.node_id == "urn:node:A" and [v for _, v in chart.ticks] == [0, 50, 100]


def test_the_run_ids_under_the_bars_are_at_most_about_ten() -> None:
    chart = run_chart([run(i, fetched=i) for i in range(1, 31)], "urn:node:A")
    labelled = [b.run.id for b in chart.labelled]
    assert 30 in labelled and len(labelled) <= 10
