"""Extract stage: a landing page's bytes -> its JSON-LD blocks, with findings.

Each `<script type="application/ld+json">` block is read on its own (extruct's
HTML parser, our lenient JSON reader; extruct's own JsonLdExtractor parses all
blocks in one go and one bad block raises for the page): one broken block is
a finding naming the block and where it broke, and the other blocks still count. Microdata and
RDFa are read (and turned into JSON-LD) only when no JSON-LD block mentions a
Dataset. A body served as JSON-LD is the document itself. Pure: bytes in,
values out; never raises on bad input. The finding types are declared in
`adapter.page.findings` and importable from here as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import lxml.html
from lxml import etree
from lxml.html import HtmlElement

from adapter.findings import Finding
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.page import charset as charsets
from adapter.page.findings import (
    BODY_TOO_LARGE,
    EMPTY_BLOCK,
    INVALID_ENCODING,
    INVALID_JSON,
    JS_RENDERED,
    NO_JSONLD,
    NON_JSONLD_MARKUP,
    NOT_HTML,
    NOT_JSONLD,
    REPAIRED_JSON,
    TOO_DEEP,
    TOO_MANY_BLOCKS,
    TOO_MANY_NODES,
    UNKNOWN_CHARSET,
    WRONG_CONTENT_TYPE,
)
from adapter.page.jsonrepair import FailureKind, JsonFailure, parse_lenient
from adapter.page.jsshell import shell_signs
from adapter.page.markup import markup_syntaxes, read_markup
from adapter.page.sniff import (
    HTML_TYPES,
    JSON_TYPES,
    is_jsonld,
    looks_binary,
    mentions_dataset,
    route,
)
from adapter.page.tree import PageTree

_DATASET_TYPE = re.compile(r'"@?type"\s*:\s*\[?\s*"[^"]{0,40}dataset"', re.IGNORECASE)
_SCRIPTS = etree.XPath(
    "descendant-or-self::script[starts-with(translate(normalize-space(@type),"
    " 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), 'application/ld+json')]"
)


@dataclass(frozen=True, slots=True)
class JsonLdBlock:
    index: int  # 1-based position among the page's JSON-LD sources
    data: Any  # parsed JSON: dict or list
    syntax: str  # "json-ld" | "microdata" | "rdfa" | "document"
    repairs: tuple[str, ...] = ()  # what the lenient reader repaired, in words


@dataclass(frozen=True, slots=True)
class Skipped:
    """A JSON-LD candidate that was not used, and why."""

    where: str  # "block 2", or "document"
    failure: FailureKind | None = None  # None: empty, or no JSON object

    @property
    def why(self) -> str:
        """In words, for a repository manager."""
        return _SKIP_WORDS[self.failure]

    @property
    def limit(self) -> str | None:
        """The `Limits` field whose cap skipped it; None for the page's own fault."""
        return self.failure.limit if self.failure is not None else None


_SKIP_WORDS: dict[FailureKind | None, str] = {
    None: "empty",
    FailureKind.SYNTAX: "not valid JSON",
    FailureKind.TOO_DEEP: "nested too deep",
    FailureKind.TOO_MANY_NODES: "too many nodes",
}


@dataclass(slots=True)
class Extraction:
    blocks: list[JsonLdBlock]
    findings: list[Finding]
    base_url: str | None = None  # the page's <base href>, resolved; use it as the JSON-LD base
    skipped: list[Skipped] = field(default_factory=list)  # candidates not used, and why


def _failure_finding(failure: JsonFailure, url: str, where: str, origin: str) -> Finding:
    if failure.kind is FailureKind.TOO_DEEP:
        return TOO_DEEP.at(url, f"{origin} is skipped: {failure.message}.", where)
    if failure.kind is FailureKind.TOO_MANY_NODES:
        return TOO_MANY_NODES.at(url, f"{origin} is skipped: {failure.message}.", where)
    at = f" at line {failure.line}, column {failure.column}" if failure.line else ""
    return INVALID_JSON.at(
        url, f"{origin} is not valid JSON{at}: {failure.message}; it is skipped.", where
    )


def _read_block(script: HtmlElement, index: int, url: str, limits: Limits, out: Extraction) -> None:
    text, line, src = script.text or "", script.sourceline, script.get("src")
    where = f"block {index}"
    origin = f"JSON-LD block {index}" + (f" (script at line {line} of the page)" if line else "")
    if not text.strip():
        why = (
            f" it points to {src}, but harvesters read only JSON-LD inside the page;" if src else ""
        )
        message = f"{origin} is empty;{why} it is skipped."
        out.findings.append(EMPTY_BLOCK.at(url, message, where))
        out.skipped.append(Skipped(where))
        return
    parsed = parse_lenient(text, limits)
    if parsed.failure is not None:
        if _DATASET_TYPE.search(text[:100_000]):
            origin += ", which appears to hold the Dataset,"
        out.findings.append(_failure_finding(parsed.failure, url, where, origin))
        out.skipped.append(Skipped(where, parsed.failure.kind))
        return
    if parsed.repairs:
        message = f"{origin} needed repairs: {'; '.join(parsed.repairs)}."
        out.findings.append(REPAIRED_JSON.at(url, message, where))
    if not isinstance(parsed.data, dict | list) or not parsed.data:
        out.findings.append(
            EMPTY_BLOCK.at(url, f"{origin} holds no JSON object; it is skipped.", where)
        )
        out.skipped.append(Skipped(where))
        return
    out.blocks.append(JsonLdBlock(index, parsed.data, "json-ld", parsed.repairs))


def _extract_document(text: str, url: str, limits: Limits, out: Extraction) -> None:
    parsed = parse_lenient(text, limits)
    if parsed.failure is not None:
        out.findings.append(
            _failure_finding(parsed.failure, url, "document", "The JSON-LD document")
        )
        out.skipped.append(Skipped("document", parsed.failure.kind))
        return
    data = parsed.data
    if isinstance(data, dict | list) and is_jsonld(data):
        if parsed.repairs:
            message = f"The JSON-LD document needed repairs: {'; '.join(parsed.repairs)}."
            out.findings.append(REPAIRED_JSON.at(url, message, "document"))
        out.blocks.append(JsonLdBlock(1, data, "document", parsed.repairs))
    else:
        out.findings.append(NOT_JSONLD.at(url))


def parse_html(html: bytes) -> HtmlElement:
    """The page's tree as extruct reads it (`extruct.utils.parse_html(html, "utf-8")`),
    without importing extruct, which only pages with no JSON-LD need."""
    tree: HtmlElement = lxml.html.fromstring(html, parser=lxml.html.HTMLParser(encoding="utf-8"))
    if not isinstance(tree.tag, str):
        # a body that is one comment (b"\x1f<!--") comes back as that comment, which XPath
        # refuses ("not an XML element"): read the document it sits in instead
        tree = tree.getroottree().getroot()
    return tree


def _base_href(tree: HtmlElement, url: str) -> str:
    for base in tree.iter("base"):
        href = str(base.get("href") or "").strip()
        if href:
            return urljoin(url, href)
    return url


def _extract_html(
    html: bytes, url: str, limits: Limits, out: Extraction, shared: PageTree | None
) -> None:
    try:
        tree = shared.for_extract(html) if shared is not None else None
        if tree is None:
            tree = parse_html(html)
    except (etree.ParserError, ValueError):
        out.findings.append(NO_JSONLD.at(url, "The page is empty: there is no JSON-LD to read."))
        return
    out.base_url = _base_href(tree, url)
    scripts = _SCRIPTS(tree)
    if len(scripts) > limits.max_jsonld_blocks:
        message = (
            f"The page has {len(scripts)} JSON-LD blocks; only the first "
            f"{limits.max_jsonld_blocks} are read (limit max_jsonld_blocks)."
        )
        out.findings.append(TOO_MANY_BLOCKS.at(url, message))
    for index, script in enumerate(scripts[: limits.max_jsonld_blocks], start=1):
        _read_block(script, index, url, limits, out)
    if any(mentions_dataset(b.data) for b in out.blocks):
        return
    _add_markup(html, url, len(scripts), markup_syntaxes(tree), out)
    if not scripts and not out.blocks:
        out.findings.append(NO_JSONLD.at(url))
    if any(mentions_dataset(b.data) for b in out.blocks):
        return
    signs = shell_signs(tree)
    if signs:
        what = "no JSON-LD" if not scripts else "no JSON-LD Dataset"
        message = (
            f"The page has {what} and looks built by JavaScript in the browser: "
            f"{', '.join(signs)}. The harvester reads the HTML as the server sends it and runs "
            "no JavaScript, so it sees no Dataset metadata here. Render the JSON-LD on the "
            'server (a <script type="application/ld+json"> block in the HTML as sent). '
            "Meanwhile the adapter can run the page in a browser: check-dataset --render, "
            "or the node's rendering.mode: auto."
        )
        out.findings.append(JS_RENDERED.at(url, message))


def _add_markup(html: bytes, url: str, scripts: int, syntaxes: list[str], out: Extraction) -> None:
    microdata, rdfa = read_markup(html, out.base_url or url, syntaxes)
    index = scripts
    for document in microdata:
        index += 1
        out.blocks.append(JsonLdBlock(index, document, "microdata"))
    if rdfa:
        index += 1
        out.blocks.append(JsonLdBlock(index, rdfa, "rdfa"))
    used = [name for name, found in (("microdata", microdata), ("RDFa", rdfa)) if found]
    if used and any(mentions_dataset(b.data) for b in out.blocks):
        message = (
            f"No JSON-LD Dataset on the page; the Dataset was read from {' and '.join(used)} "
            'and converted. Publish it as JSON-LD in a <script type="application/ld+json"> block.'
        )
        out.findings.append(NON_JSONLD_MARKUP.at(url, message))


def extract(
    body: bytes,
    *,
    url: str,
    content_type: str,
    charset: str | None,
    limits: Limits = DEFAULT_LIMITS,
    tree: PageTree | None = None,
) -> Extraction:
    """The JSON-LD blocks of one fetched landing page (or JSON-LD document), with findings.

    `tree`: the page's HTML parse, shared with the signposting links where it
    is the same document (`adapter.page.tree`); else the page is parsed here.
    """
    out = Extraction(blocks=[], findings=[], base_url=url)
    if len(body) > limits.max_page_bytes:
        message = (
            f"The page is {len(body)} bytes, over the limit max_page_bytes "
            f"({limits.max_page_bytes})."
        )
        out.findings.append(BODY_TOO_LARGE.at(url, message))
        return out
    kind_of_body = route(body, content_type)
    kind = content_type.split(";", 1)[0].strip().lower() or "no Content-Type"
    if kind_of_body == "other":
        what = f"binary content (served as {kind})" if looks_binary(body) else kind
        out.findings.append(NOT_HTML.at(url, f"The URL answered with {what}, not HTML or JSON-LD."))
        return out
    declared = kind in JSON_TYPES or kind.endswith("+json") or kind in HTML_TYPES
    if not declared and kind != "no Content-Type":
        message = f"The body is {kind_of_body.upper()} but the server says Content-Type {kind}."
        out.findings.append(WRONG_CONTENT_TYPE.at(url, message))
    decoded = charsets.decode(body, charset)
    if decoded.unknown_charset:
        message = f"The page declares charset {decoded.unknown_charset!r}, unknown; read as UTF-8."
        out.findings.append(UNKNOWN_CHARSET.at(url, message))
    if decoded.invalid_bytes:
        message = (
            f"{decoded.invalid_bytes} invalid byte sequence(s) for {decoded.encoding} "
            f"(chosen from the {decoded.source}) were replaced."
        )
        out.findings.append(INVALID_ENCODING.at(url, message))
    if kind_of_body == "json":
        _extract_document(decoded.text, url, limits, out)
    else:
        _extract_html(decoded.text.encode("utf-8"), url, limits, out, tree)
    return out
