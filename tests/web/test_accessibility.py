"""Accessibility in the real browser: axe-core in the page, focus, and a 390 px screen.

axe-core (the npm package the project's package.json pins; `npm ci` installs it,
as .ci/run does) is injected by Playwright into Debian's chromium on the check
page, a result, and every /ops page; no violation of serious or critical impact
may remain. After a check the focus is on the verdict, so a screen reader reads
it first. At 390 px wide nothing scrolls the page sideways and every control is
at least 24 px high. A screenshot of each page is kept under
`test-output/screenshots/`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.browser import CHROMIUM, CRUISE, NO_CHROMIUM, fresh_context, shot
from tests.web.conftest import NODE_ID, MakeWeb, World, origins

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_SOURCE = (AXE.read_text() + "\n;0") if AXE.exists() else ""  # a script, as an expression
BLOCKING = ("serious", "critical")
CONTROLS = "button, input:not([type=hidden]), select, textarea, summary, .pager a"

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
    pytest.mark.skipif(not AXE.exists(), reason="axe-core is not installed: run `npm ci`"),
    pytest.mark.slow,  # a real chromium: seconds a test
]


@pytest.fixture
def browser(chromium: Any) -> Iterator[Any]:
    """A desktop-sized context of the worker's chromium, this test's alone; the pages' CSP
    in force (axe is evaluated by the driver, which no CSP stops, not added as a script)."""
    with fresh_context(chromium) as opened:
        yield opened


@pytest.fixture
def narrow(chromium: Any) -> Iterator[Any]:
    """A phone: 390 px wide."""
    with fresh_context(chromium) as opened:
        opened.set_default_timeout(30_000)
        yield opened


def violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    page.evaluate(AXE_SOURCE)
    # every rule runs and every violating node is listed; passes and incomplete results are
    # listed by rule with one node each (axe's `resultTypes`), not every node of the page:
    # gathering those was 70 % of axe's CPU on a long page (2.5 -> 0.7 CPU-s on the cruise's)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    assert len(result["passes"]) > 10, "axe-core did not run its rules"
    found = result["violations"]
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [n["target"] for n in v["nodes"][:5]],
        }
        for v in found
        if v["impact"] in BLOCKING
    ]


def assert_accessible(page: Any, name: str, full_page: bool = True) -> None:
    shot(page, f"a11y-{name}", full_page)
    found = violations(page)
    assert found == [], json.dumps(found, indent=1)


def ops_paths(world: World) -> list[tuple[str, str]]:
    node = quote(NODE_ID, safe="")
    first = world.runs[0]
    code = sorted(first.not_harvestable)[0]
    url = world.store.runs(NODE_ID, 1) and _a_page(world)
    return [
        ("ops", "/ops"),
        ("ops-node", f"/ops/node?node={node}"),
        ("ops-runs", f"/ops/runs?node={node}"),
        ("ops-run", f"/ops/runs/{first.run_id}"),
        ("ops-pages", f"/ops/pages?node={node}"),
        ("ops-pages-code", f"/ops/pages?node={node}&code={quote(code, safe='')}"),
        ("ops-page", f"/ops/page?node={node}&url={quote(str(url), safe='')}"),
        ("ops-queue", f"/ops/queue?node={node}"),
        ("ops-failures", "/ops/failures"),
        ("ops-login", "/ops/login"),
    ]


def _a_page(world: World) -> str:
    from adapter.store import overview

    return overview.pages(world.store, NODE_ID, status="not-harvestable").rows[0].url


def test_the_check_page_and_a_result_have_no_serious_violation_and_focus_the_verdict(
    browser: Any, make_web: MakeWeb, sites: Any
) -> None:
    site = sites("sp-good")
    web = make_web(origins(site))
    page = browser.new_page()
    page.goto(web.url("/check"))
    assert_accessible(page, "check-form")
    page.fill("#url", site[0].url("/dataset/7"))
    page.click("form.by-url button[type=submit]")
    page.wait_for_selector("#verdict")
    assert page.evaluate("document.activeElement && document.activeElement.id") == "verdict"
    assert_accessible(page, "check-result")
    page.close()


def test_every_ops_page_has_no_serious_violation(browser: Any, world: World) -> None:
    page = browser.new_page()
    for name, path in ops_paths(world):
        response = page.goto(world.web.url(path))
        assert response is not None and response.status == 200, path
        assert page.locator("h1").count() == 1, path
        assert_accessible(page, name)
    page.close()


def fits(page: Any, name: str, full_page: bool = True) -> None:
    """Nothing wider than the screen, and every control at least 24 px high."""
    shot(page, f"390-{name}", full_page)
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, (name, wide)
    small = page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)]
            .filter(e => e.offsetParent !== null)
            .map(e => [e.tagName + (e.id ? '#' + e.id : ''), e.getBoundingClientRect().height])
            .filter(([, h]) => h < 24)""",
        CONTROLS,
    )
    assert small == [], (name, small)


def test_at_390_px_wide_the_pages_fit_and_controls_are_24_px_high(
    narrow: Any, make_web: MakeWeb, sites: Any, world: World
) -> None:
    site = sites("sp-good")
    web = make_web(origins(site))
    page = narrow.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(web.url("/check"))
    fits(page, "check-form")
    page.goto(web.url(f"/check?url={quote(site[0].url('/dataset/7'), safe='')}"))
    page.wait_for_selector("#verdict")
    assert page.locator(".signposts table").count() >= 1
    fits(page, "check-result")
    # the signposting table wraps: no row wider than the screen, no sideways scroll in it
    sideways = page.evaluate(
        """[...document.querySelectorAll('.signposts .scroll')]
            .map(e => e.scrollWidth - e.clientWidth)"""
    )
    assert sideways and max(sideways) <= 0, sideways
    for name, path in ops_paths(world):
        page.goto(world.web.url(path))
        fits(page, name)
    page.close()


def test_a_page_of_many_datasets_has_no_serious_violation_and_fits_390_px(
    browser: Any, make_web: MakeWeb, sites: Any
) -> None:
    """The cruise page's casts, folded as 214 are (tests/web/test_browser.py's page of them),
    checked once: read by axe at the desktop's width, then measured at 390 px."""
    site = sites("real-shapes", rules=CRUISE)
    web = make_web(origins(site))
    cruise = site[0].url("/cruise/at50-12-short.html")
    page = browser.new_page()
    page.goto(web.url(f"/check?url={quote(cruise, safe='')}"))
    page.wait_for_selector("#verdict", timeout=120_000)
    assert page.locator("section.folded-datasets details").count() > 0
    page.locator("#dataset-10 summary").click()  # one folded Dataset opened, too
    # shot by the viewport, at the Dataset just opened, as test_browser.py keeps this page:
    # it is 16,000 px tall (30,000 at 390 px) of the same few shapes, 3-8 s a full shot
    assert_accessible(page, "check-many-datasets", full_page=False)
    page.set_viewport_size({"width": 390, "height": 844})  # the phone, the page laid out anew
    fits(page, "check-many-datasets", full_page=False)
    page.close()
