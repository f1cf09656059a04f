"""The check page in a real browser: Debian's chromium (its headless shell), driven by Playwright.

Fills the form with a fixture site's URL, submits, reads the verdict and the
findings, follows a finding's link to its catalogue entry, and keeps a
screenshot of every page under `test-output/screenshots/` (listed in
.gitignore). Skips only when no chromium is installed (`.ci/run` installs it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from adapter.findings import catalogue
from adapter.manydatasets import FEW, FIRST, ODD_ONES
from tests.support.browser import (
    CASTS,
    CHROMIUM,
    CRUISE,
    NO_CHROMIUM,
    NO_DOI,
    SCREENSHOTS,
    fresh_context,
    shot,
)
from tests.web.conftest import NODE_ID, MakeWeb, World, origins

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
    pytest.mark.slow,  # a real chromium: seconds a test
]


@pytest.fixture
def browser(chromium: Any) -> Iterator[Any]:
    """A desktop-sized context of the worker's chromium, this test's alone."""
    with fresh_context(chromium) as opened:
        yield opened


def test_form_check_reads_verdict_findings_and_catalogue(
    browser: Any, make_web: MakeWeb, sites: Any
) -> None:
    site = sites("real-shapes")  # a CKAN-style page with no identifier and no DOI
    web = make_web(origins(site))
    page = browser.new_page()
    page.goto(web.url("/check"))
    shot(page, "check-form")
    page.fill("#url", site[0].url("/dataset/ckan-no-identifier.html"))
    page.click("form.by-url button[type=submit]")
    page.wait_for_selector("#verdict")
    assert page.inner_text("#verdict .word") == "NOT HARVESTABLE"
    assert "/check?url=" in page.url  # the form's address is the report's permalink
    codes = page.locator(".finding a.code").all_inner_texts()
    assert "dataone/identifier-missing" in codes
    errors = page.locator("#stage-dataone .finding.error .message").all_inner_texts()
    assert any("identifier" in text for text in errors)
    shot(page, "check-report-not-harvestable")

    page.click("#stage-dataone a.code:text-is('dataone/identifier-missing')")
    page.wait_for_url("**/findings#dataone/identifier-missing")
    entry = page.locator("[id='dataone/identifier-missing']")
    assert entry.is_visible()
    meaning = next(t for t in catalogue() if t.code == "dataone/identifier-missing")
    assert entry.locator("dd").inner_text() == meaning.explanation.replace("`", "")
    assert entry.locator(".sev").inner_text().lower() == "warning"  # the profile blocks it
    shot(page, "findings-catalogue-entry", full_page=False)  # the entry, scrolled to
    page.close()


def test_good_page_shows_signposting_table(browser: Any, make_web: MakeWeb, sites: Any) -> None:
    site = sites("sp-good")
    web = make_web(origins(site))
    page = browser.new_page()
    page.goto(web.url("/check"))
    page.fill("#url", site[0].url("/dataset/7"))
    page.select_option("#profile", "mnlite")  # its copy is EML, not dataone's ISO one
    page.click("form.by-url button")
    page.wait_for_selector("#verdict")
    assert page.inner_text("#verdict .word") == "HARVESTABLE"
    rels = page.locator(".signposts table tbody tr td:first-child").all_inner_texts()
    assert {"cite-as", "author", "license", "describedby", "item"} <= set(rels)
    header = page.input_value("#link-header")
    assert header.startswith("Link: ") and 'rel="cite-as"' in header
    browser.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#link-header + button.copy-button")
    page.wait_for_selector("#link-header + button.copy-button:text-is('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == header
    shot(page, "check-report-harvestable")
    page.close()


def test_the_dataone_search_preview_card(browser: Any, make_web: MakeWeb, sites: Any) -> None:
    site = sites("page-index")
    web = make_web(origins(site))
    page = browser.new_page()
    page.goto(web.url("/check"))
    page.fill("#url", site[0].url("/dataset/people.html"))  # people in `author`, not `creator`
    page.click("form.by-url button[type=submit]")
    page.wait_for_selector(".search-card")
    card = page.locator(".search-card")
    assert card.locator(".search-title").inner_text() == "Snowpack chemistry, Niwot Ridge, 2019"
    rows = dict(
        zip(
            card.locator("dt").all_inner_texts(),
            card.locator("dd").all_inner_texts(),
            strict=True,
        )
    )
    assert rows["author"] == "not shown"
    assert rows["abstract"].startswith("Major ion and stable isotope chemistry")
    assert rows["place"] == "not shown"  # a GeoCoordinates point: no box for the index
    assert rows["licence"] == "CC BY 4.0"
    assert "author" in card.locator("p.muted").inner_text()
    codes = page.locator("#stage-dataone a.code").all_inner_texts()
    assert "dataone/index-author-not-creator" in codes
    shot(page, "check-search-card")
    card.screenshot(path=str(SCREENSHOTS / "search-card.png"))  # the card alone, to look at
    page.close()


def test_pasted_jsonld_is_checked_without_a_fetch(browser: Any, make_web: MakeWeb) -> None:
    web = make_web()
    page = browser.new_page()
    page.goto(web.url("/check"))
    page.click("details.by-content summary")
    page.fill(
        "#content",
        '{"@context": "https://schema.org/", "@type": "Dataset", "name": "Pasted cores",'
        ' "identifier": "doi:10.5061/pasted.1"}',
    )
    page.fill("#address", "https://repository.example/dataset/pasted")
    page.click("details.by-content button[type=submit]")
    page.wait_for_selector("#verdict")
    assert "Pasted cores" in page.inner_text(".dataset h2")
    assert "https://repository.example/dataset/pasted" in page.inner_text("#verdict .target")
    shot(page, "check-report-pasted")
    page.close()


def test_hostile_page_runs_no_script(browser: Any, make_web: MakeWeb, sites: Any) -> None:
    site = sites("web-hostile")
    web = make_web(origins(site))
    page = browser.new_page()
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(web.url("/check"))
    page.fill("#url", site[0].url("/dataset/1"))
    page.click("form.by-url button[type=submit]")
    page.wait_for_selector("#verdict")
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("main script, main img").count() == 0
    assert "<script>window.pwned='name'</script>" in page.inner_text(".dataset h2")
    assert dialogs == []
    shot(page, "check-report-hostile")
    page.close()


def test_operator_drills_down_from_a_run_to_a_pages_report(browser: Any, world: World) -> None:
    page = browser.new_page()
    page.goto(world.web.url("/ops"))
    assert NODE_ID in page.inner_text("table.nodes")
    assert page.locator(".chart svg rect.seg").count() >= len(world.runs)
    shot(page, "ops-nodes")
    first = world.runs[0]
    page.click(f"table.runs a:text-is('{first.run_id}')")
    page.wait_for_url(f"**/ops/runs/{first.run_id}")
    shot(page, "ops-run")
    code = sorted(first.not_harvestable)[0]
    row = page.locator("tr", has=page.locator(f"a.code:text-is('{code}')"))
    row.locator("text=the pages").click()
    page.wait_for_url(re.compile(r".*/ops/pages\?.*code="))
    shot(page, "ops-pages-with-code")
    page.locator("td.url a").first.click()
    page.wait_for_url(re.compile(r".*/ops/page\?.*url="))
    assert code in page.locator(".finding a.code").all_inner_texts()
    shot(page, "ops-page-report")
    page.close()


def test_everything_works_without_javascript(chromium: Any, make_web: MakeWeb, sites: Any) -> None:
    site = sites("real-shapes")  # a CKAN-style page with no identifier and no DOI
    web = make_web(origins(site))
    with fresh_context(chromium, java_script_enabled=False) as without:
        page = without.new_page()
        page.goto(web.url("/check"))
        page.fill("#url", site[0].url("/dataset/ckan-no-identifier.html"))
        page.click("form.by-url button[type=submit]")
        page.wait_for_selector("#verdict")
        assert page.inner_text("#verdict .word") == "NOT HARVESTABLE"
        assert page.locator("button.copy-button").count() == 0  # no script ran
        assert page.input_value("#link-header").startswith("Link: ")
        shot(page, "check-report-without-javascript")  # the report, as its name says
        page.click("#stage-dataone a.code:text-is('dataone/identifier-missing')")
        page.wait_for_url("**/findings#dataone/identifier-missing")
        # the entry, scrolled to: the whole catalogue is 21,000 px tall, 2-5 s to shoot
        shot(page, "findings-catalogue-entry-without-javascript", full_page=False)


def test_a_page_of_many_datasets_totals_first_the_rest_folded(
    browser: Any, make_web: MakeWeb, sites: Any
) -> None:
    """The cruise page's casts: the totals above everything else, the first three and the
    three without a DOI shown whole, the others folded until clicked."""
    assert CASTS > FEW and min(NO_DOI) > FIRST and len(NO_DOI) <= ODD_ONES
    site = sites("real-shapes", rules=CRUISE)
    web = make_web(origins(site))
    page = browser.new_page()
    page.goto(web.url("/check"))
    page.fill("#url", site[0].url("/cruise/at50-12-short.html"))
    page.click("form.by-url button[type=submit]")
    page.wait_for_selector("#verdict", timeout=120_000)
    totals = page.locator("section.many")
    assert totals.locator("h2").inner_text() == f"{CASTS} Datasets on this page"
    tops = page.evaluate(
        """['section.many', 'section.checklist', '#dataset-1', 'section.folded-datasets']
            .map(s => document.querySelector(s).getBoundingClientRect().top)"""
    )
    assert tops == sorted(tops), tops  # totals first
    whole = page.locator("section.dataset").evaluate_all("all => all.map(s => s.id)")
    assert whole == [f"dataset-{n}" for n in sorted({*range(1, FIRST + 1), *NO_DOI})]
    assert page.locator("section.folded-datasets details").count() == CASTS - len(whole)
    shot(page, "check-many-datasets", full_page=False)  # what the manager sees first

    folded = page.locator("#dataset-10")
    facts = folded.locator("dl.facts")
    assert folded.get_attribute("open") is None and not facts.is_visible()
    summary = folded.locator("summary")
    assert "CTD cast 010" in summary.inner_text() and "harvestable" in summary.inner_text()
    summary.click()
    assert folded.get_attribute("open") is not None and facts.is_visible()
    assert "at50-12-ctd-010.csv" in facts.inner_text()
    folded.scroll_into_view_if_needed()
    shot(page, "check-many-datasets-one-opened", full_page=False)
    assert page.locator("#dataset-13 .badge.bad").is_visible()  # an odd one out, whole
    page.close()
