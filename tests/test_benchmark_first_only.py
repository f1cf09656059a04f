"""`throughput.py --first-only --tree`: each tree's first sync beside the same naive run."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from benchmarks.throughput import Measure, commit_of, first_only


def measure(seconds: float, cpu: float) -> Measure:
    m = Measure(seconds, 0.0, 0.0, 1.0)
    m.tree_cpu = cpu
    return m


def test_each_tree_gets_its_row_per_run_and_its_own_median(tmp_path: Path) -> None:
    other = tmp_path / "older-tree"  # not a checkout: named by its folder
    other.mkdir()
    args = argparse.Namespace(pages=1500, naive_pages=300, iso_copies=True)
    here = Path(__file__).resolve().parent.parent
    runs = [
        (measure(10.0, 9.0), [(here, measure(5.0, 7.5)), (other, measure(7.5, 9.0))]),
        (measure(10.0, 9.0), [(here, measure(6.0, 7.5)), (other, measure(5.0, 9.0))]),
        (measure(10.0, 9.0), [(here, measure(4.0, 7.5)), (other, measure(6.0, 9.0))]),
    ]
    text = "\n".join(first_only(args, runs, "nginx"))
    rows = [line for line in text.splitlines() if line.startswith("| ") and "x |" in line]
    assert len(rows) == 6
    assert [r.split(" | ")[0] for r in rows[:2]] == [f"| {commit_of(here)}", "| older-tree"]
    # naive 30 pages/s; this tree 300 pages/s (median of 5, 6 and 4 s), the other 250
    assert f"Median ratio of {commit_of(here)}: 10.0x by pages/s" in text
    assert "Median ratio of older-tree: 8.3x by pages/s" in text
    assert "| older-tree | 30 | 200 (7.5 s) | 6.7x | 30.0 / 6.0 (5.0x) | 1.0 / 1.0 |" in rows


def test_a_checkout_is_named_by_its_commit() -> None:
    here = Path(__file__).resolve().parent.parent
    if not (here / ".git").exists():
        pytest.skip("this tree is not a git checkout")
    name = commit_of(here)
    assert name.rstrip("+") and all(c in "0123456789abcdef" for c in name.rstrip("+"))
