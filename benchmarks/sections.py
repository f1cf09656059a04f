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
        end = section_end(doc, start)
        doc = doc[:start] + text.rstrip("\n") + "\n" + ("\n" + doc[end:] if end < len(doc) else "")
    path.write_text(doc)


def write_on_top(title: str, text: str, *, after: str, path: Path = BENCHMARKS) -> None:
    """Put a run (`text`, `title` first) on top of the section `title`. The run it replaces
    becomes the section's first subsection (`### The run before`) and the `### ` subsections
    stay: each round's record of what it measured and tried, which writing the section whole
    erased. With no such section, the run goes after the section `after` (or at the end)."""
    doc = path.read_text()
    start = doc.find(title + "\n")
    if start < 0:
        anchor = doc.find(after + "\n")
        at = section_end(doc, anchor) if anchor >= 0 else len(doc)
        path.write_text(doc[:at] + text + ("\n" if at < len(doc) else "") + doc[at:])
        return
    body, end = start + len(title) + 1, section_end(doc, start)
    rounds = doc.find("\n### ", body, end)
    lead_end = rounds + 1 if rounds >= 0 else end
    before = doc[body:lead_end].strip("\n")
    kept = f"### The run before\n\n{before}\n\n" if before else ""
    section = (text.rstrip("\n") + "\n\n" + kept + doc[lead_end:end]).rstrip("\n") + "\n"
    after_it = "\n" + doc[end:].lstrip("\n") if end < len(doc) else ""
    path.write_text(doc[:start] + section + after_it)


def section_end(doc: str, start: int) -> int:
    """Where the section whose heading is at `start` ends: its next `## ` heading, or the end."""
    end = doc.find("\n## ", start + 3)
    return end + 1 if end >= 0 else len(doc)
