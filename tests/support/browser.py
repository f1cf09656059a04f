"""Debian's chromium driven by Playwright, for the tests that look at the pages in a browser.

tests/web/test_browser.py and tests/web/test_accessibility.py share what is here: the
executable, its flags, the screenshot folder, and (through tests/web/conftest.py) one
Playwright driver and one chromium a worker, each test in a browser context of its own.
A chromium and its driver cost about a CPU-second to start; each module started its own.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "screenshots"
# the headless shell when installed (Playwright's own headless default: the same Blink without
# the desktop browser, about half the CPU a page), else the desktop chromium in headless mode
CHROMIUM = next(
    (
        p
        for p in (
            "/usr/bin/chromium-headless-shell",
            "/usr/bin/chromium",
            shutil.which("chromium") or "",
        )
        if p and Path(p).exists()
    ),
    None,
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1100, "height": 900}
NO_CHROMIUM = "no chromium installed (apt-get install chromium; .ci/run does)"


# The cruise page's casts (tests/web/test_check_page.py checks all 214 of them), fewer: the
# same folding (more than FEW Datasets: the FIRST shown whole, and the ones without a DOI as
# odd ones out, being at most ODD_ONES), checked in a tenth of the time, in a tenth the DOM
CASTS = 24
NO_DOI = (7, 13, 21)
CRUISE = {
    "/cruise/at50-12-short.html": {
        "generate": "many_datasets",
        "count": CASTS,
        "no_doi": list(NO_DOI),
        "content_type": "text/html; charset=utf-8",
    }
}


@contextmanager
def playwright_driver() -> Iterator[Any]:
    """Playwright's sync driver. While it runs, this thread counts as inside an event loop
    (`asyncio.run` refuses): hold it only around tests that drive the browser."""
    from playwright import sync_api  # the test extra; only a missing chromium skips

    with sync_api.sync_playwright() as pw:
        yield pw


def launch(pw: Any) -> Any:
    """Debian's chromium with the CI flags, on a fresh temporary profile; its contexts are
    apart from each other (cookies, permissions, JavaScript on or off)."""
    return pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)


@contextmanager
def fresh_context(chromium: Any, **options: Any) -> Iterator[Any]:
    """A fresh browser context (its own cookies, cache, permissions), closed afterwards."""
    opened = chromium.new_context(**{"viewport": VIEWPORT, **options})
    try:
        yield opened
    finally:
        opened.close()


def shot(page: Any, name: str, full_page: bool = True) -> Path:
    """Keep a screenshot of the page as it is now, to look at (the project's rule)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
