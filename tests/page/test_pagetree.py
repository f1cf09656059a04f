"""The page parse shared by htmllinks and extract (`adapter.page.tree`) against separate parses.

Differential: with the shared tree, `parse_html_links` and `extract` give exactly
what each gives parsing on its own, on every fixture page and on generated
pages, in the pipeline's order (links first); the shared document is the one
both parsers make (text and source lines); sharing is refused wherever the
inputs could parse differently; and no reader changes the shared tree.
"""

from __future__ import annotations

import re
from pathlib import Path

import lxml.etree
import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.page import charset as charsets
from adapter.page import tree as tree_module
from adapter.page.extract import Extraction, extract
from adapter.page.tree import PageTree
from adapter.signposting.htmllinks import parse_html_links
from tests.support.fuzz_support import FUZZ, pieces

PAGES = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "pages").glob("*.html"))
URL = "https://repo.example/dataset/1"
HEADERS = [
    ("text/html", None),
    ("text/html", "utf-8"),
    ("text/html", "iso-8859-1"),
    ("text/html", "utf-16"),
    ("application/xhtml+xml", None),
    ("text/plain", None),
]


def _shape(root: lxml.etree._Element) -> tuple[bytes, list[int | None]]:
    return lxml.etree.tostring(root), [e.sourceline for e in root.iter()]


def _blank_nodes_named(extraction: Extraction) -> str:
    """The extraction as text, RDFa's random blank node ids (`_:N<uuid>`) made one name."""
    return re.sub(r"_:N[0-9a-f]{32}", "_:b", repr(extraction))


def _check(body: bytes, content_type: str, charset: str | None) -> PageTree:
    """Links then extract with one PageTree equal links and extract each on its own."""
    tree = PageTree(body)
    shared_links = parse_html_links(
        body, URL, content_type=content_type, charset=charset, tree=tree
    )
    shared_doc = tree.for_links(body, content_type, charset)
    before = _shape(shared_doc) if shared_doc is not None else None
    full = f"{content_type}; charset={charset}" if charset else content_type
    shared_extract = extract(body, url=URL, content_type=full, charset=charset, tree=tree)
    assert shared_links == parse_html_links(body, URL, content_type=content_type, charset=charset)
    alone = extract(body, url=URL, content_type=full, charset=charset)
    assert _blank_nodes_named(shared_extract) == _blank_nodes_named(alone)
    if shared_doc is not None:
        assert _shape(shared_doc) == before  # neither reader changed it
    return tree


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
@pytest.mark.parametrize(("content_type", "charset"), HEADERS)
def test_fixture_pages_read_the_same_with_a_shared_tree(
    path: Path, content_type: str, charset: str | None
) -> None:
    _check(path.read_bytes(), content_type, charset)


TOKENS = [
    "<!DOCTYPE html>",
    "<html>",
    "<head>",
    "</head>",
    "<body>",
    "</body>",
    '<meta charset="utf-8">',
    "<meta charset=utf-16>",
    "<meta charset='ISO-8859-1'>",
    '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
    '<meta charset="bogus">',
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<script type="application/ld+json">',
    '{"@context": "https://schema.org/", "@type": "Dataset", "name": "x"}',
    "</script>",
    '<link rel="cite-as" href="https://doi.org/10.1/x">',
    '<link rel="item" href="d.csv" type="text/csv">',
    '<base href="/files/">',
    "<p>",
    "&eacute;",
    "\u00e9",
    "\x00",
    "<!-- c -->",
    "\n",
    " ",
]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(
    pieces(TOKENS, max_size=25),
    st.sampled_from(HEADERS),
    st.sampled_from(["", "<!DOCTYPE html>", "<html>", " \n<HTML>"]),
)
@FUZZ
def test_generated_pages_read_the_same_with_a_shared_tree(
    text: str, header: tuple[str, str | None], start: str
) -> None:
    _check((start + text).encode(), *header)


@given(pieces(TOKENS, max_size=25), st.sampled_from(["", "<!DOCTYPE html>", "<html>", " <p>"]))
@FUZZ
def test_the_shared_document_is_what_both_parsers_make(text: str, start: str) -> None:
    from extruct.utils import parse_html  # here: extruct costs each xdist worker ~0.4 CPU-s

    body = (start + text).encode()
    tree = PageTree(body)
    doc = tree.for_links(body, "text/html", None)
    assert doc is tree.for_extract(body)
    if doc is None:
        return
    assert _shape(doc) == _shape(lxml.html.document_fromstring(body))  # htmllinks' parse
    utf8 = charsets.decode(body, None).text.encode("utf-8")
    assert utf8 == body
    assert _shape(doc) == _shape(parse_html(utf8, encoding="utf-8"))  # extract's parse


def test_typical_page_is_parsed_once() -> None:
    body = b'<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head></html>'
    tree = PageTree(body)
    doc = tree.for_links(body, "text/html", None)
    assert doc is not None and tree.for_extract(body) is doc


@pytest.mark.parametrize(
    ("body", "content_type", "charset"),
    [
        ("<!DOCTYPE html><p>caf\u00e9</p>".encode(), "text/html", None),  # not ASCII
        (b"<!DOCTYPE html><meta charset=utf-16><p>x</p>", "text/html", None),
        (b'<!DOCTYPE html><meta content="text/html; charset=UTF-16"><p>x</p>', "text/html", None),
        (b"<!DOCTYPE html><p>x\x00</p>", "text/html", None),  # NUL: libxml2 may guess UTF-16
        (b"<p>a fragment</p>", "text/html", None),  # lxml.html.fromstring edits the tree
        (b"<!DOCTYPE html><p>x</p>", "application/xhtml+xml", None),  # read as XML first
        (b'<?xml version="1.0"?><html><p>x</p></html>', "text/html", None),
        (b"<!DOCTYPE html><p>x</p>", "text/html", "utf-16"),  # the header's charset
        (b"<!DOCTYPE html><p>x</p>", "text/html", "shift_jis"),
        (b"", "text/html", None),
    ],
)
def test_no_sharing_where_the_parses_could_differ(
    body: bytes, content_type: str, charset: str | None
) -> None:
    assert PageTree(body).for_links(body, content_type, charset) is None
    _check(body, content_type, charset)


def test_other_bytes_are_never_given_the_page_tree() -> None:
    body = b"<!DOCTYPE html><p>x</p>"
    tree = PageTree(body)
    assert tree.for_extract(b"<!DOCTYPE html><p>y</p>") is None
    assert tree.for_links(b"<!DOCTYPE html><p>y</p>", "text/html", None) is None
    assert tree.for_extract(body) is not None


_DECLARING = st.lists(
    st.sampled_from(["charset", "encoding", "=", " ", '"', "'", "utf-8", "x", ">", ";", "chars"]),
    max_size=14,
)


@FUZZ
@given(_DECLARING)
def test_declared_charsets_are_the_full_scans(parts: list[str]) -> None:
    # tried only where a keyword starts, the matches are still finditer's, overlaps and all
    low = "".join(parts).encode()
    everywhere = {m.group(1).decode("ascii") for m in tree_module._DECLARED.finditer(low)}
    assert tree_module._declared(low) == everywhere
