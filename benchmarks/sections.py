"""BENCHMARKS.md is written by several scripts, each owning its own `## ` sections."""

from __future__ import annotations

from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def write_section(title: str, text: str, path: Path = BENCHMARKS) -> None:
    """Replace the section `title` (up to the next `## `) with `text`, or append it."""
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    start = doc.find(title + "\n")
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        end = doc.find("\n## ", start + len(title))
        doc = doc[:start] + text.rstrip("\n") + "\n" + ("\n" + doc[end + 1 :] if end >= 0 else "")
    path.write_text(doc)
