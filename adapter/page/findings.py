"""The findings of the extract stage (`adapter.page.extract`, which re-exports them).

Declared apart so the extract stage's reading code stays short; the codes
and texts are what the reports, the docs and DataONE operators see.
"""

from __future__ import annotations

from adapter.findings import FindingType, Severity

NO_JSONLD = FindingType(
    "extract/no-jsonld",
    Severity.ERROR,
    'The page has no JSON-LD (no <script type="application/ld+json"> block), so there is no '
    "schema.org Dataset for DataONE to harvest.",
)
JS_RENDERED = FindingType(
    "extract/js-rendered",
    Severity.ERROR,
    "The page looks built by JavaScript in the browser; the harvester reads the HTML as the "
    "server sends it and runs no JavaScript, so it sees no metadata. Put the JSON-LD into the "
    "HTML the server sends.",
)
SITEMAP_GIVEN = FindingType(  # raised by adapter.pipeline, which sniffs the body's root
    "extract/sitemap-given",
    Severity.ERROR,
    "The URL is a sitemap (<urlset> or <sitemapindex>), not a landing page: it lists pages "
    "rather than describing a Dataset. List its pages with `adapter discover URL` and check "
    "each of them.",
)
INVALID_JSON = FindingType(
    "extract/invalid-json",
    Severity.WARNING,
    "A JSON-LD block is not valid JSON even after lenient repairs; it is skipped and the "
    "other blocks still count.",
)
REPAIRED_JSON = FindingType(
    "extract/repaired-json",
    Severity.WARNING,
    "A JSON-LD block is not strictly valid JSON; the adapter repaired it, but other "
    "harvesters may not. Publish strict JSON.",
)
EMPTY_BLOCK = FindingType(
    "extract/empty-block",
    Severity.WARNING,
    "A JSON-LD block is empty or holds no JSON object (an unfilled template?); it is skipped.",
)
TOO_DEEP = FindingType(
    "extract/too-deep",
    Severity.WARNING,
    "A JSON-LD block is nested deeper than the adapter's limit (max_json_depth); it is skipped.",
)
TOO_MANY_NODES = FindingType(
    "extract/too-many-nodes",
    Severity.WARNING,
    "A JSON-LD block holds more JSON values than the adapter's limit (max_json_nodes); "
    "it is skipped.",
)
TOO_MANY_BLOCKS = FindingType(
    "extract/too-many-blocks",
    Severity.WARNING,
    "The page has more JSON-LD blocks than the adapter reads (max_jsonld_blocks); the rest "
    "are ignored.",
)
NOT_HTML = FindingType(
    "extract/not-html",
    Severity.ERROR,
    "The landing page is neither HTML nor JSON-LD (binary or another format), so no metadata "
    "can be read from it.",
)
NOT_JSONLD = FindingType(
    "extract/not-jsonld",
    Severity.ERROR,
    "The URL answered with JSON that is not JSON-LD (no @context), so no schema.org metadata "
    "can be read from it.",
)
WRONG_CONTENT_TYPE = FindingType(
    "extract/wrong-content-type",
    Severity.WARNING,
    "The Content-Type header does not match the body (e.g. HTML sent as text/plain); the "
    "adapter read it by its content, other harvesters may not.",
)
INVALID_ENCODING = FindingType(
    "extract/invalid-encoding",
    Severity.WARNING,
    "The page has bytes that are invalid in its character encoding; they were replaced, so "
    "some text may be garbled. Serve UTF-8 and declare it.",
)
UNKNOWN_CHARSET = FindingType(
    "extract/unknown-charset",
    Severity.WARNING,
    "The page declares a character encoding the adapter does not know; it was read as UTF-8.",
)
BODY_TOO_LARGE = FindingType(
    "extract/body-too-large",
    Severity.ERROR,
    "The page is larger than the adapter reads (max_page_bytes); it was not parsed.",
)
NON_JSONLD_MARKUP = FindingType(
    "extract/non-jsonld-markup",
    Severity.WARNING,
    "The metadata was found only as microdata or RDFa and converted; science-on-schema.org and "
    'most harvesters expect JSON-LD in a <script type="application/ld+json"> block.',
)
