"""HTML and XHTML `<link>` elements -> `Link` values.

Unlike HTTP Link headers, HTML hrefs resolve against the document base URL,
which a `<base href>` changes; the link context stays the page URL. Links
belong in `<head>`: signposting links placed in `<body>` are reported and not
counted, as strict clients do not see them. XHTML is read as XML (no entities,
no network) and falls back to the HTML parser when it is not well-formed.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urljoin

import lxml.etree
import lxml.html

from adapter.findings import FindingType, Severity
from adapter.limits import DEFAULT_LIMITS
from adapter.models import Link
from adapter.page import charset as charsets
from adapter.page.tree import PageTree
from adapter.signposting.linkheader import TOO_MANY, ParsedLinks, normalize_rel, resolve
from adapter.signposting.links import SIGNPOSTING_RELS

IN_BODY = FindingType(
    "signposting/html-link-in-body",
    Severity.WARNING,
    "A signposting <link> element is in the page's <body>; it belongs in <head>, and "
    "clients that follow FAIR Signposting ignore it where it is.",
)
WITHOUT_HREF = FindingType(
    "signposting/html-link-without-href",
    Severity.WARNING,
    "A signposting <link> element has no href (or an unusable one), so it links to nothing.",
)

XHTML_NS = "http://www.w3.org/1999/xhtml"
_ATTRS = ("title", "hreflang", "media")
_HTML_LINK_TAGS = ("link", "lin\u212a")  # every tag an HTML tree has whose .lower() is "link"


def looks_like_html(content_type: str, body: bytes) -> bool:
    if content_type in ("text/html", "application/xhtml+xml"):
        return True
    if content_type not in ("", "text/plain", "application/octet-stream"):
        return False
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))  # HTML served with a wrong type


def parse_html_links(
    body: bytes,
    url: str,
    *,
    content_type: str = "text/html",
    charset: str | None = None,
    max_links: int = DEFAULT_LIMITS.max_links,
    tree: PageTree | None = None,
) -> ParsedLinks:
    """Every `<link rel href>` of the page at `url` (its final URL).

    `tree`: the page's parse shared with the extract stage, used where it is
    the same document this function would parse (see `adapter.page.tree`).
    """
    out = ParsedLinks()
    shared = tree.for_links(body, content_type, charset) if tree is not None else None
    root, is_html = (shared, True) if shared is not None else _parse(body, content_type, charset)
    if root is None:
        return out
    base = _base_url(root, url, is_html)
    for element, in_head in _link_elements(root, is_html):
        rels = (element.get("rel") or "").split()
        if not rels:
            continue
        raw_href = element.get("href")
        href = resolve(base, raw_href) if raw_href is not None and raw_href.strip() else None
        signposting = sorted({normalize_rel(r) for r in rels} & SIGNPOSTING_RELS)
        if href is None:
            if signposting:
                out.findings.append(
                    WITHOUT_HREF.at(
                        url, f'<link rel="{" ".join(rels)}"> has no usable href', "HTML <link>"
                    )
                )
            continue
        if not in_head:
            if signposting:
                out.findings.append(
                    IN_BODY.at(
                        url,
                        f'<link rel="{" ".join(rels)}" href="{href}"> is in '
                        "<body>, not <head>; it was not counted",
                        "HTML <body>",
                    )
                )
            continue
        if not _append(out, element, rels, href, url, max_links):
            break
    return out


def _append(
    out: ParsedLinks, element: lxml.etree._Element, rels: list[str], href: str, url: str, cap: int
) -> bool:
    type_ = (element.get("type") or "").strip().lower() or None
    profile = (element.get("profile") or "").strip() or None
    extra = tuple((a, str(element.get(a))) for a in _ATTRS if element.get(a) is not None)
    for rel in rels:
        if len(out.links) >= cap:
            out.truncated = True
            out.findings.append(
                TOO_MANY.at(url, f"more than {cap} HTML <link> elements; the rest were ignored")
            )
            return False
        out.links.append(
            Link(
                href=href,
                rel=normalize_rel(rel),
                anchor=url,
                source="html",
                type=type_,
                profile=profile,
                extra=extra,
            )
        )
    return True


def _parse(
    body: bytes, content_type: str, charset: str | None
) -> tuple[lxml.etree._Element | None, bool]:
    """The document's root, and whether the HTML parser read it (tags lower-case, no ns)."""
    if not body.strip():
        return None, False
    if content_type == "application/xhtml+xml" or body.lstrip()[:5] == b"<?xml":
        parser = lxml.etree.XMLParser(
            resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
        )
        try:
            return lxml.etree.fromstring(body, parser), False
        except lxml.etree.XMLSyntaxError:
            pass  # not well-formed: read it as HTML like a browser would
    if charsets.chosen_codec(body, charset) == charsets.WINDOWS_1252:
        # libxml2 reads iso-8859-1 as Latin-1 and drops what follows a byte its cp1252
        # leaves undefined: decode as a browser does, and give it UTF-8
        body, charset = charsets.decode(body, charset).text.encode("utf-8"), "utf-8"
    try:
        parser = lxml.html.HTMLParser(encoding=charset) if charset else None
    except LookupError:
        parser = None
    try:
        return lxml.html.document_fromstring(body, parser=parser), True
    except (lxml.etree.ParserError, ValueError, LookupError):
        return None, False


def _local(tag: object) -> str:
    if not isinstance(tag, str):
        return ""  # comments and processing instructions
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return name.lower() if ns == XHTML_NS else ""
    return tag.lower()


def _link_elements(
    root: lxml.etree._Element, is_html: bool = False
) -> Iterator[tuple[lxml.etree._Element, bool]]:
    """Each <link> and whether it counts as in <head> (links between head and body do).

    The HTML parser lower-cases ASCII in tag names and makes no namespaces, so
    for its trees lxml finds the elements by name in C (`_link_elements_slow`
    is the reference, and the way for XHTML read as XML, where case and
    namespace vary). The one non-ASCII letter that lower-cases to ASCII is the
    Kelvin sign (to "k"), hence the second spelling of "link".
    """
    if not is_html:
        yield from _link_elements_slow(root)
        return
    for element in root.iter(*_HTML_LINK_TAGS):
        yield element, next(element.iterancestors("body"), None) is None


def _link_elements_slow(root: lxml.etree._Element) -> Iterator[tuple[lxml.etree._Element, bool]]:
    for element in root.iter():
        if _local(element.tag) != "link":
            continue
        in_body = any(_local(a.tag) == "body" for a in element.iterancestors())
        yield element, not in_body


def _base_url(root: lxml.etree._Element, url: str, is_html: bool = False) -> str:
    """The first <base href>, resolved; found by name in C for HTML trees (see above)."""
    found = root.iter("base") if is_html else (e for e in root.iter() if _local(e.tag) == "base")
    for element in found:
        if element.get("href"):
            try:
                return urljoin(url, str(element.get("href")).strip())
            except ValueError:
                return url
    return url
