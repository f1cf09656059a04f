"""Fast paths of the signposting stage against their references: they must agree everywhere.

- `url_key`, `iri_key` and `license_key` are memoized: the cached answer equals
  the uncached one (`__wrapped__`), on first and repeated calls, and across
  cache evictions.
- HTML `<link>`/`<base>` are found by tag name in C for HTML-parsed trees: the
  result equals the generic per-element walk on every fixture page and on
  generated HTML with odd case, namespaces, comments and nesting.
- The Dataset's links are read once per page and shared by the checks and the
  proposal: the findings equal those computed with each reading its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lxml.html
import pytest
from hypothesis import given

from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS
from adapter.models import Fetched
from adapter.pipeline.compose import _check
from adapter.pipeline.read import read_datasets
from adapter.signposting import htmllinks
from adapter.signposting import links as signposts
from adapter.signposting import stage as signposting
from adapter.signposting.crosscheck import crosscheck_dataset
from adapter.signposting.datasetlinks import dataset_links
from adapter.signposting.htmllinks import parse_html_links
from adapter.signposting.identities import iri_key, license_key
from adapter.signposting.linkheader import ParsedLinks
from adapter.signposting.links import url_key
from adapter.signposting.proposal import propose
from tests.support.fuzz_support import FUZZ, pieces

PAGES = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "pages").glob("*.html"))
PAGE = "https://repo.example/dataset/7"

URL_TOKENS = [
    "http://",
    "https://",
    "HTTP://",
    "Repo.Example",
    "repo.example",
    ":80",
    ":443",
    ":8080",
    ":99999",
    ":x",
    "/",
    "/a",
    "?q=1",
    "#frag",
    " ",
    "[::1]",
    "[bad",
    "%41",
    "\u00e9",
    "@",
    "user:pw@",
]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(pieces(URL_TOKENS, max_size=12))
@FUZZ
def test_url_key_cache_equals_reference(url: str) -> None:
    reference = url_key.__wrapped__(url)
    assert url_key(url) == reference
    assert url_key(url) == reference  # a second time: now from the cache


IRI_TOKENS = [
    *URL_TOKENS,
    "orcid.org/",
    "0000-0002-1825-0097",
    "000X",
    "doi:",
    "doi.org/",
    "10.5072/",
    "abc",
    "%2F",
    "spdx.org/licenses/",
    "CC-BY-4.0",
    ".html",
    "creativecommons.org/licenses/by/4.0/",
    "publicdomain/zero/1.0",
    "opensource.org/licenses/MIT",
    "MIT",
]


@given(pieces(IRI_TOKENS, max_size=12))
@FUZZ
def test_iri_and_license_key_caches_equal_reference(text: str) -> None:
    for cached in (iri_key, license_key):
        reference = cached.__wrapped__(text)
        assert cached(text) == reference
        assert cached(text) == reference


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_url_key_cache_survives_eviction_without_stale_answers() -> None:
    urls = [f"HTTP://Host{i % 7}.Example:{80 + i % 3}/p/{i}#f" for i in range(3 * 8192)]
    for url in urls:
        assert url_key(url) == url_key.__wrapped__(url)
    for url in reversed(urls):  # evicted and cached entries alike
        assert url_key(url) == url_key.__wrapped__(url)
    assert url_key("http://a.example") == "http://a.example/"
    assert url_key("http://a.example:8080") == "http://a.example:8080/"
    assert signposts.same_url("http://A.example:80/x#y", "http://a.example/x")


def _reference(body: bytes, content_type: str) -> ParsedLinks:
    """parse_html_links with the per-element walk for every tree (the code before the fast path)."""
    real = htmllinks._parse

    def walk_only(*args: Any) -> tuple[Any, bool]:
        return real(*args)[0], False

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(htmllinks, "_parse", walk_only)
        return parse_html_links(body, PAGE, content_type=content_type, max_links=40)


def _both_ways(body: bytes) -> None:
    """The C-side lookup equals the per-element walk: elements, <base>, and the whole result."""
    for content_type in ("text/html", "application/xhtml+xml"):
        got = parse_html_links(body, PAGE, content_type=content_type, max_links=40)
        assert got == _reference(body, content_type)
    root, is_html = htmllinks._parse(body, "text/html", None)
    if root is None:
        return
    assert is_html
    fast = list(htmllinks._link_elements(root, True))
    assert fast == list(htmllinks._link_elements_slow(root))
    assert htmllinks._base_url(root, PAGE, True) == htmllinks._base_url(root, PAGE, False)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_html_link_lookup_equals_reference_on_fixtures(path: Path) -> None:
    _both_ways(path.read_bytes())


HTML_TOKENS = [
    "<html>",
    "<HTML>",
    "<head>",
    "<HEAD>",
    "</head>",
    "<body>",
    "<BODY>",
    "</body>",
    "<Body >",
    "<link",
    "<LINK",
    "<Link",
    "<svg:link",
    "<lin\u212a",
    "<LIN\u212a",
    "<bod\u00ff",
    "<\u00c0",
    "<x:body>",
    "<base",
    "<BASE",
    ' href="a/"',
    ' HREF="/b/"',
    " href=''",
    ' rel="cite-as"',
    ' rel="item describedby"',
    ">",
    "/>",
    "<!-- <link rel=item href=c> -->",
    "<?pi x?>",
    "<div>",
    "</div>",
    "<p>",
    "<table><tr><td>",
    "<template>",
    "<noscript>",
    '<html xmlns="http://www.w3.org/1999/xhtml">',
    "text",
]


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
@given(pieces(HTML_TOKENS, max_size=30))
@FUZZ
def test_html_link_lookup_equals_reference_on_generated_html(text: str) -> None:
    """The lookup against its reference, and what it relies on, on each of the 200 texts
    (two tests drew two sets of texts, the most of their time, from this one strategy)."""
    _both_ways(text.encode())
    _both_ways(b"<!DOCTYPE html>" + text.encode())
    tree_tags_are_what_the_fast_path_looks_for(text)


def tree_tags_are_what_the_fast_path_looks_for(text: str) -> None:
    """What it relies on: no namespaces, and the tags the walk would take are the ones sought."""
    try:
        root = lxml.html.document_fromstring(text.encode() or b"<p>")
    except (lxml.etree.ParserError, ValueError):
        return
    for element in root.iter():
        if isinstance(element.tag, str):
            assert not element.tag.startswith("{")
            if element.tag.lower() == "link":
                assert element.tag in htmllinks._HTML_LINK_TAGS
            if element.tag.lower() in ("base", "body"):
                assert element.tag == element.tag.lower()


def test_kelvin_sign_link_is_found_both_ways() -> None:
    body = '<html><head><LIN\u212a rel="cite-as" href="https://doi.org/10.1/k"></head></html>'
    _both_ways(body.encode())
    assert [x.rel for x in parse_html_links(body.encode(), PAGE).links] == ["cite-as"]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_shared_dataset_links_give_the_same_findings(path: Path) -> None:
    fetched = Fetched(
        url=PAGE,
        final_url=PAGE,
        status=200,
        headers={"content-type": "text/html"},
        body=path.read_bytes(),
    )
    with Fetcher() as fetcher:
        links = signposting.collect(PAGE, fetched, fetcher).links
    pages = [PAGE]
    for found in read_datasets(fetched, DEFAULT_LIMITS).datasets:
        dataset = _check(found, PAGE)
        facts = dataset_links(dataset, PAGE)
        assert crosscheck_dataset(dataset, links, pages, facts) == crosscheck_dataset(
            dataset, links, pages
        )
        assert propose(dataset, PAGE, facts) == propose(dataset, PAGE)
