"""One parse of a landing page's HTML, shared by the signposting links and the extract stage.

Both read the page with lxml's HTML parser, but from different inputs:
`adapter.signposting.htmllinks` from the bytes as served (decoded by the HTTP charset,
else by libxml2's own detection), `adapter.page.extract` from the text its charset
rules decoded, re-encoded as UTF-8. They parse to the same document exactly
when those inputs are the same bytes and no decoder can read them
differently: an ASCII body without NUL bytes (libxml2 takes "<\\0" for UTF-16),
every charset it or the header declares one that reads ASCII as ASCII, and a
full document (`<html` or `<!doctype` first: else lxml's `fromstring`, which
extract uses, edits the tree). Then the page is parsed once; otherwise each
reader parses its own, as it always did. Neither reader changes the tree.
"""

from __future__ import annotations

import re

import lxml.etree
import lxml.html
from lxml.html import HtmlElement

# charset labels that read ASCII bytes as ASCII, spelled as libxml2 knows them
ASCII_READERS = frozenset({"utf-8", "us-ascii", "iso-8859-1", "windows-1252"})
# every place a page may declare its encoding to libxml2 (meta charset, http-equiv, <?xml?>)
# (matched on the lowercased body: an IGNORECASE scan of a whole page cost more than its parse)
_DECLARED = re.compile(rb"(?:charset|encoding)\s*=\s*[\"']?\s*([^\s\"'>;/]*)")
_FULL_HTML = re.compile(rb"^\s*<(?:html|!doctype)", re.IGNORECASE)  # as lxml.html decides it
_XHTML = "application/xhtml+xml"


def _ascii_only(body: bytes) -> bool:
    """ASCII, no NUL, and every declared charset one of `ASCII_READERS`."""
    if not body.isascii() or b"\x00" in body:
        return False
    return _declared(body.lower()) <= ASCII_READERS


def _declared(low: bytes) -> set[str]:
    """The charsets `_DECLARED.finditer(low)` finds, the same matches: tried only where
    "charset" or "encoding" starts (a scan of every position of a page cost 0.15 ms)."""
    found: set[str] = set()
    at = 0
    for start in sorted(_starts(low, b"charset") + _starts(low, b"encoding")):
        if start < at:  # inside the match before
            continue
        match = _DECLARED.match(low, start)
        if match is not None:
            found.add(match.group(1).decode("ascii"))
            at = match.end()
    return found


def _starts(low: bytes, word: bytes) -> list[int]:
    out: list[int] = []
    at = low.find(word)
    while at >= 0:
        out.append(at)
        at = low.find(word, at + 1)
    return out


class PageTree:
    """A page body's HTML document, parsed on first use by whichever reader comes first."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self._shareable = bool(_FULL_HTML.match(body)) and _ascii_only(body)
        self._doc: HtmlElement | None = None
        self._failed = False

    def for_links(self, body: bytes, content_type: str, charset: str | None) -> HtmlElement | None:
        """What htmllinks' HTML parse of `body` gives, or None: then it parses its own."""
        if content_type == _XHTML or body.lstrip()[:5] == b"<?xml":
            return None  # read as XML first
        if charset is not None and charset.strip().lower() not in ASCII_READERS:
            return None
        return self._document(body)

    def for_extract(self, html: bytes) -> HtmlElement | None:
        """What `extract.parse_html(html)` gives, or None: then it parses its own."""
        return self._document(html)

    def _document(self, body: bytes) -> HtmlElement | None:
        if not self._shareable or self._failed or body != self.body:
            return None
        if self._doc is None:
            try:
                parser = lxml.html.HTMLParser(encoding="utf-8")
                self._doc = lxml.html.document_fromstring(self.body, parser=parser)
            except (lxml.etree.ParserError, ValueError):
                self._failed = True  # each reader meets the failure in its own way
                return None
        return self._doc
