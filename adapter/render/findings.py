"""The findings of rendering a page in the browser (`adapter.render`).

A rendered page is still read by the same extraction as any other; these codes say
that it was rendered, what its scripts were refused, and when the browser could not
finish. None is an error: what the page gave (rendered or static) is judged as usual.
"""

from __future__ import annotations

from adapter.findings import FindingType, Severity

RENDERED = FindingType(
    "render/rendered",
    Severity.INFO,
    "The page holds its schema.org JSON-LD only after JavaScript runs, so the adapter read it "
    "from the page rendered in a browser. Most harvesters run no JavaScript: serve the JSON-LD "
    "and the Signposting <link>s in the HTML itself, as COAR Notify's Signposting guide asks.",
)
REQUEST_BLOCKED = FindingType(
    "render/request-blocked",
    Severity.WARNING,
    "A script of the rendered page asked for a URL the adapter refuses (a private, loopback "
    "or link-local address, a robots.txt disallow, a method other than GET, or past the "
    "page's request cap); the request never left the browser.",
)
REQUEST_FAILED = FindingType(
    "render/request-failed",
    Severity.WARNING,
    "A request a script of the rendered page made failed (an HTTP error, a timeout, too "
    "large); what the script would have written from it may be missing.",
)
BUDGET_SPENT = FindingType(
    "render/budget-spent",
    Severity.WARNING,
    "The page was still busy (requests, timers, DOM changes) when its render budget "
    "(render_budget) ran out; the page was read as it stood then.",
)
RENDER_FAILED = FindingType(
    "render/failed",
    Severity.WARNING,
    "The page could not be rendered (its scripts hung the page, the browser crashed or "
    "could not start); the HTML as served was read instead, and the browser is restarted "
    "for the next page.",
)
