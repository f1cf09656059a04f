"""A run written on top of its section (`throughput.py --first-only`) keeps the rounds before."""

from __future__ import annotations

from pathlib import Path

from benchmarks.sections import write_on_top

PAIRED = "## First sync against the naive pipeline, run by run"

DOC = f"""# Benchmarks

## Throughput

t

## Scale-out workers

w

{PAIRED}

The last run: 6.1x.

Why it is not 10x.

### Round 9 (its machine)

7.9x, and what it tried.

## The check page

c
"""


def test_a_new_run_goes_on_top_and_the_rounds_before_stay(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(DOC)
    write_on_top(PAIRED, f"{PAIRED}\n\nThis run: 7.1x.\n", after="## Scale-out workers", path=path)
    assert path.read_text() == DOC.replace(
        f"{PAIRED}\n\n",
        f"{PAIRED}\n\nThis run: 7.1x.\n\n### The run before\n\n",
    )


def test_the_section_is_made_after_the_throughput_sections(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    doc = DOC[: DOC.index(PAIRED)] + "## The check page\n\nc\n"
    path.write_text(doc)
    write_on_top(PAIRED, f"{PAIRED}\n\nThis run: 7.1x.\n", after="## Scale-out workers", path=path)
    assert path.read_text() == doc.replace(
        "## The check page", f"{PAIRED}\n\nThis run: 7.1x.\n\n## The check page"
    )
