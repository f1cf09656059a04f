"""What rendering one page gave, as a value (no Playwright here: its callers need none)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# dataset: a Dataset appeared; quiet: the page went quiet; budget: render_budget ran out;
# crashed: its process died; hung: its scripts never yielded; failed: no browser, or a bug
Ended = Literal["dataset", "quiet", "budget", "crashed", "hung", "failed"]


@dataclass(slots=True)
class PageRender:
    """What rendering one page gave: its DOM as HTML (None when it could not be read)."""

    html: str | None
    ended: Ended
    seconds: float
    blocked: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None  # why it could not be rendered
