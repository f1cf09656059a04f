"""A fetched page, rendered when it needs it: what the page thread and check-dataset call.

`render_if_needed` takes the page's own response (or how its fetch failed) and gives
back the response to check: unchanged, or with the rendered DOM as its body (the
headers, Link fields and validators stay the real response's) and what rendering
found as findings (`Fetched.render_findings`, which the pipeline puts in the report).
The same extraction and signposting code then read it as any other page.

Playwright is an extra: this module imports it only when a page is rendered, so a
node that never renders needs none of it; `require` says in one line what to install.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from adapter.errors import ConfigError, FetchError
from adapter.extras import require as require_extra
from adapter.findings import Finding
from adapter.http.fetcher import Fetcher
from adapter.models import Fetched
from adapter.render import findings
from adapter.render.need import Mode, holds_dataset, wants_rendering
from adapter.render.result import PageRender

FEATURE = "rendering pages in a browser (--render, rendering.mode)"
# Debian's headless shell (`rendering.browser`; Playwright's download never): the same engine
# without the desktop browser around it, a third of the CPU per page (BENCHMARKS.md)
CHROMIUM = "/usr/bin/chromium-headless-shell"
ENDINGS = {
    "dataset": "a Dataset appeared",
    "quiet": "its scripts went quiet",
    "budget": "its render_budget ran out",
}


def require(browser: str) -> None:
    """ConfigError in one line unless Playwright is installed and `browser` exists."""
    require_extra("playwright", FEATURE)
    if not Path(browser).is_file():
        raise ConfigError(
            f"{FEATURE} needs chromium at {browser}, which is not there: "
            "apt-get install chromium-headless-shell (Playwright's own download is never used)"
        )


def render_if_needed(
    page: Fetched | FetchError,
    fetcher: Fetcher,
    mode: Mode,
    at_once: int,
    browser: str = CHROMIUM,
) -> Fetched | FetchError:
    """`page` rendered when `mode` asks for it (see `adapter.render.need`), else as it is."""
    if isinstance(page, FetchError) or not wants_rendering(page, mode, fetcher.limits):
        return page
    # under auto, wants_rendering has just read the page and found no Dataset: not again
    static_dataset = mode == "always" and holds_dataset(page, fetcher.limits)
    return render(page, fetcher, at_once, browser, static_dataset=static_dataset)


def render(
    page: Fetched, fetcher: Fetcher, at_once: int, browser: str, *, static_dataset: bool
) -> Fetched:
    """`page` rendered in the process's browser; on failure, as it was, with the reason.
    `static_dataset`: whether its HTML as served holds a Dataset already."""
    from adapter.render.browser import service  # lazy: Playwright is an extra

    result = service(browser).render(page, fetcher, at_once)
    return as_fetched(page, result, static_dataset=static_dataset)


def as_fetched(page: Fetched, result: PageRender, *, static_dataset: bool) -> Fetched:
    """The response to check: the rendered DOM as body, or the page as served."""
    url = page.final_url
    notes = _request_findings(url, result)
    if result.html is None:
        failed = findings.RENDER_FAILED.at(
            url,
            f"{url} could not be rendered ({result.ended} after {result.seconds:.1f} s: "
            f"{result.error or 'no reason given'}); the HTML as served was read instead.",
        )
        return replace(page, render_findings=(*page.render_findings, *notes, failed))
    out: list[Finding] = []
    if not static_dataset:
        how = ENDINGS.get(result.ended, result.ended)
        out.append(
            findings.RENDERED.at(
                url,
                f"{url} holds no schema.org Dataset in the HTML it serves; the adapter "
                f"rendered it in a browser ({how} after {result.seconds:.1f} s) and read the "
                "JSON-LD and <link>s its scripts wrote. Most harvesters run no JavaScript: "
                "serve them in the HTML itself, as COAR Notify's Signposting guide asks.",
            )
        )
    if result.ended == "budget":
        out.append(
            findings.BUDGET_SPENT.at(
                url,
                f"{url} was still busy when its render_budget ({result.seconds:.1f} s) ran "
                "out; it was read as it stood then.",
            )
        )
    headers = {**page.headers, "content-type": "text/html; charset=utf-8"}
    return replace(
        page,
        body=result.html.encode("utf-8", "replace"),
        headers=headers,
        rendered=True,
        render_findings=(*page.render_findings, *out, *notes),
    )


def _request_findings(url: str, result: PageRender) -> list[Finding]:
    out = [
        findings.REQUEST_BLOCKED.at(
            url,
            f"A script of {url} asked for {target}, which the adapter refused "
            f"({why.removeprefix('refused: ')}); the request never left the browser.",
        )
        for target, why in result.blocked
    ]
    out += [
        findings.REQUEST_FAILED.at(
            url, f"A script of {url} asked for {target}, which failed: {why}."
        )
        for target, why in result.failed
    ]
    return out
