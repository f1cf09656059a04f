"""Fuzzing the Dataset path: DOIs, lenient JSON, charset decoding, extraction,
JSON-LD normalization and the DataONE rules. Nothing raises; only documented findings."""

from __future__ import annotations

import codecs
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.dataone.requirements import check_requirements
from adapter.doi import normalize_doi
from adapter.jsonld.normalize import normalize
from adapter.limits import Limits
from adapter.page.charset import decode
from adapter.page.extract import extract
from adapter.page.jsonrepair import parse_lenient
from tests.support.fuzz_support import FUZZ, assert_documented, pieces

PAGE = "https://repo.example/dataset/1"
DOI_TOKENS = [
    "doi:",
    "DOI:",
    "https://doi.org/",
    "http://dx.doi.org/",
    "10.",
    "5061",
    "/",
    "dryad.",
    "null",
    " ",
    "%2F",
    "\u00a0",
    "urn:doi:",
    "info:doi/",
    "10.1000/",
    "abc",
    "\n",
    "?",
    "#",
]
JSON_TOKENS = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"a"',
    '"@context"',
    "1",
    "-0.5e3",
    "true",
    "null",
    "//",
    "/*",
    "*/",
    ";",
    "<!--",
    "-->",
    "'",
    "\\",
    "\\u12",
    "NaN",
    "Infinity",
    "\n",
]
KEYS = [
    "@context",
    "@type",
    "@id",
    "@graph",
    "@vocab",
    "@value",
    "@list",
    "@language",
    "@reverse",
    "@base",
    "@included",
    "@nest",
    "name",
    "description",
    "identifier",
    "url",
    "encoding",
    "distribution",
    "contentUrl",
    "encodingFormat",
    "propertyID",
    "value",
    "dateModified",
    "subjectOf",
    "creator",
    "sameAs",
]
VALUES = [
    "Dataset",
    "DataSet",
    "schema:Dataset",
    "https://schema.org/",
    "http://schema.org",
    "https://schema.org/Dataset",
    "PropertyValue",
    "MediaObject",
    "DataDownload",
    "doi:10.5061/dryad.x1",
    "https://doi.org/10.5061/dryad.x1",
    "10.5061/x",
    "doi:null",
    "",
    "_:b0",
    "../rel",
    "https://repo.example/m.xml",
    "http://www.isotc211.org/2005/gmd",
    "2024-01-01",
    "file:///etc/passwd",
    "https://remote.example/context.jsonld",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(VALUES),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
    ),
    max_leaves=25,
)
SMALL = Limits(max_json_depth=12, max_json_nodes=300)
CONTEXTS = [
    "https://schema.org/",
    "http://schema.org",
    "https://schema.org/docs/jsonldcontext.jsonld",
    {"@vocab": "https://schema.org/"},
    {"@vocab": "http://schema.org/", "x": "@id"},
    ["https://schema.org/", {"@base": "https://repo.example/"}],
    "https://remote.example/context.jsonld",
    None,
]
datasets = st.builds(
    lambda context, kind, rest: {"@context": context, "@type": kind, **rest},
    st.sampled_from(CONTEXTS),
    st.sampled_from(["Dataset", "schema:Dataset", ["Dataset", "Thing"], "DataSet"]),
    st.dictionaries(st.sampled_from(KEYS[5:]), json_values, max_size=8),
)


@FUZZ
@given(pieces(DOI_TOKENS, 12) | st.text(max_size=30) | st.integers() | st.none())
def test_doi_normalizer(value: Any) -> None:
    doi = normalize_doi(value)
    if doi is not None:
        assert doi.startswith("10.") and "/" in doi
        ascii_lower = "".join(c.lower() if c.isascii() else c for c in doi)
        assert doi == ascii_lower.strip()  # DOIs are case-insensitive in ASCII only
        assert normalize_doi(doi) == doi  # idempotent


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


@FUZZ
@given(pieces(JSON_TOKENS, 50))
def test_lenient_json(text: str) -> None:
    parsed = parse_lenient(text, SMALL)
    if parsed.failure is not None:
        assert parsed.failure.kind in ("syntax", "too-deep", "too-many-nodes")
        assert parsed.failure.message
    else:
        json.dumps(parsed.data)  # plain JSON values, nothing exotic
        assert _depth(parsed.data) <= SMALL.max_json_depth


@FUZZ
@given(st.binary(max_size=300), st.sampled_from([None, "utf-8", "utf-16", "koi8-r", "bogus"]))
def test_charset_decoding(body: bytes, charset: str | None) -> None:
    decoded = decode(body, charset)
    assert isinstance(decoded.text, str)
    codecs.lookup(decoded.encoding)  # a codec Python knows, whatever was declared
    assert 0 <= decoded.invalid_bytes <= len(body)
    assert decoded.unknown_charset in (None, charset)


def _run_page(html: bytes, content_type: str = "text/html") -> None:
    extraction = extract(html, url=PAGE, content_type=content_type, charset="utf-8", limits=SMALL)
    assert_documented(extraction.findings)
    datasets, findings = normalize(extraction.blocks, base_url=PAGE, limits=SMALL)
    assert_documented(findings)
    for dataset in datasets:
        assert_documented(check_requirements(dataset.framed, PAGE).findings)


@pytest.mark.slow  # the whole normalization per example: seconds of CPU
@FUZZ
@given(json_values | datasets | st.lists(datasets, max_size=3).map(lambda g: {"@graph": g}))
def test_jsonld_normalization(document: Any) -> None:
    script = json.dumps(document).replace("</", "<\\/")
    _run_page(
        f'<html><head><script type="application/ld+json">{script}</script></head></html>'.encode()
    )


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@FUZZ
@given(json_values)
def test_jsonld_document(document: Any) -> None:
    _run_page(json.dumps(document).encode(), "application/ld+json")


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@FUZZ
@given(pieces([*JSON_TOKENS, '<script type="application/ld+json">', "</script>", "<html>"], 60))
def test_broken_pages(text: str) -> None:
    _run_page(text.encode("utf-8", "surrogatepass"))
