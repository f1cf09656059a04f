"""Fuzzing the typed-link parsers: Link headers, linksets, HTML <link>. Nothing raises;
only documented findings come out; the link cap holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.signposting.htmllinks import parse_html_links
from adapter.signposting.linkheader import parse_link_fields
from adapter.signposting.linkset import parse_linkset
from tests.support.fuzz_support import FUZZ, assert_documented, pieces

CONTEXT = "https://repo.example/dataset/1"
LINK_TOKENS = [
    "<",
    ">",
    ";",
    ",",
    '"',
    "=",
    " ",
    "\t",
    "\\",
    "'",
    "*",
    "rel",
    "anchor",
    "type",
    "profile",
    "title*",
    "UTF-8''",
    "https://repo.example/x",
    "../y",
    "//other.example/z",
    "item",
    "describedby cite-as",
    "#frag",
    "\u00e9",
    "%41",
    "hreflang",
    "media",
]
LINKSET_TOKENS = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    "linkset",
    '"anchor"',
    '"href"',
    '"type"',
    '"item"',
    '"cite-as"',
    '"https://repo.example/dataset/1"',
    '"../rel"',
    "null",
    "true",
    "1e999",
    '"title*"',
    '"value"',
    '"language"',
    "\\u0000",
    "<",
    ">",
    ";",
    "rel=",
    "anchor=",
]
HTML_TOKENS = [
    "<link ",
    'rel="',
    "describedby",
    "item",
    'href="',
    "https://repo.example/a",
    '"',
    ">",
    "<head>",
    "</head>",
    "<body>",
    "<base href=",
    "/>",
    "<!--",
    "-->",
    "<script>",
    "&amp;",
    "<?xml ",
    "<html xmlns='http://www.w3.org/1999/xhtml'>",
    "type=",
    "\x00",
    "\ufffd",
]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@FUZZ
@given(
    st.lists(pieces(LINK_TOKENS), max_size=4),
    st.integers(min_value=1, max_value=50),
)
def test_link_header_parser(fields: list[str], cap: int) -> None:
    parsed = parse_link_fields(fields, CONTEXT, max_links=cap)
    assert len(parsed.links) <= cap
    assert_documented(parsed.findings)
    for link in parsed.links:
        assert link.rel and link.rel == link.rel.strip()
        assert "://" in link.href or link.href.startswith(("urn:", "mailto:", "doi:")) or link.href


@FUZZ
@given(
    pieces(LINKSET_TOKENS, 80),
    st.sampled_from(
        ["application/linkset+json", "application/linkset", "application/json", "text/html", ""]
    ),
)
@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_linkset_parser(text: str, content_type: str) -> None:
    parsed = parse_linkset(
        text.encode("utf-8", "surrogatepass"), content_type, CONTEXT, max_links=40
    )
    assert len(parsed.links) <= 40
    assert_documented(parsed.findings)


@FUZZ
@given(st.binary(max_size=300))
def test_linkset_parser_on_bytes(body: bytes) -> None:
    parsed = parse_linkset(body, "application/linkset+json", CONTEXT)
    assert_documented(parsed.findings)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@FUZZ
@given(
    pieces(HTML_TOKENS, 80),
    st.sampled_from(["text/html", "application/xhtml+xml", "application/xml"]),
    st.sampled_from([None, "utf-8", "latin-1", "no-such-charset"]),
)
def test_html_link_parser(text: str, content_type: str, charset: str | None) -> None:
    body = text.encode("utf-8", "surrogatepass")
    parsed = parse_html_links(
        body, CONTEXT, content_type=content_type, charset=charset, max_links=30
    )
    assert len(parsed.links) <= 30
    assert_documented(parsed.findings)
