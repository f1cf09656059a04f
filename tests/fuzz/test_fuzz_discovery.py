"""Fuzzing discovery's parsers: robots.txt, sitemaps (XML, text, gzip), lastmod dates."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.discovery.robotstxt import parse_robots
from adapter.discovery.sitemap import ChildSitemap, parse_sitemap
from adapter.discovery.w3cdate import parse_w3c_datetime
from adapter.findings import Finding
from adapter.limits import Limits
from adapter.models import SitemapEntry
from tests.support.fuzz_support import FUZZ, assert_documented, pieces

ROBOTS_TOKENS = [
    "User-agent: ",
    "*",
    "DataONE-SlenderAdapter",
    "\n",
    "\r\n",
    "Disallow: ",
    "Allow: ",
    "/",
    "/data",
    "$",
    "Crawl-delay: ",
    "5",
    "-1",
    "1e400",
    "nan",
    "Sitemap: ",
    "https://repo.example/sitemap.xml",
    "#",
    "%2A",
    "\ufeff",
    "\x00",
    ":",
]
SITEMAP_TOKENS = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/'
    'sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">',
    "</urlset>",
    '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    "</sitemapindex>",
    "<url>",
    "</url>",
    "<sitemap>",
    "</sitemap>",
    "<loc>",
    "</loc>",
    "<lastmod>",
    "</lastmod>",
    "https://repo.example/d/1",
    "/relative",
    "file:///etc/passwd",
    "2024-01-01",
    "2024-13",
    '<rs:ln rel="describedby" href="https://repo.example/m.xml" type="application/xml"/>',
    '<rs:md hash="md5:00" length="x"/>',
    "&amp;",
    "&lol;",
    "<!DOCTYPE x [<!ENTITY lol 'a'>]>",
    "<![CDATA[",
    "]]>",
    "\n",
    " ",
    "<!--",
    "-->",
    "<html>",
]
DATE_TOKENS = [
    "2024",
    "-",
    "01",
    "13",
    "31",
    "T",
    ":",
    "00",
    "60",
    "Z",
    "+",
    "05:30",
    ".",
    "123456789",
    " ",
    "0000",
    "9999",
    "24",
    "W",
    "\u0661",
]
SMALL = Limits(max_sitemap_entries=20, max_url_length=200, max_sitemap_bytes=20_000)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
@FUZZ
@given(pieces(ROBOTS_TOKENS, 80), st.text(max_size=40))
def test_robots_parser(text: str, path: str) -> None:
    policy = parse_robots(text.encode("utf-8", "surrogatepass"), "DataONE-SlenderAdapter/0.1")
    allowed = policy.can_fetch("https://repo.example/" + path)
    assert isinstance(allowed, bool)
    assert policy.crawl_delay is None or policy.crawl_delay >= 0


@FUZZ
@given(st.binary(max_size=400))
def test_robots_parser_on_bytes(body: bytes) -> None:
    policy = parse_robots(body, "DataONE-SlenderAdapter/0.1", max_bytes=100)
    assert isinstance(policy.can_fetch("https://repo.example/x"), bool)


def _check_items(items: Sequence[SitemapEntry | ChildSitemap | Finding]) -> None:
    entries = [i for i in items if isinstance(i, SitemapEntry | ChildSitemap)]
    assert len(entries) <= SMALL.max_sitemap_entries
    assert_documented(i for i in items if isinstance(i, Finding))
    for item in entries:
        assert item.loc.startswith(("http://", "https://"))
        assert len(item.loc) <= SMALL.max_url_length


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
@FUZZ
@given(pieces(SITEMAP_TOKENS, 60), st.booleans(), st.integers(min_value=1, max_value=64))
def test_sitemap_parser(text: str, zipped: bool, chunk: int) -> None:
    body = text.encode("utf-8", "surrogatepass")
    if zipped:
        body = gzip.compress(body)
    items = list(parse_sitemap(body, "https://repo.example/sitemap.xml", SMALL, chunk_size=chunk))
    _check_items(items)


@FUZZ
@given(st.binary(max_size=500))
def test_sitemap_parser_on_bytes(body: bytes) -> None:
    _check_items(list(parse_sitemap(body, "https://repo.example/sitemap.xml", SMALL)))


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@FUZZ
@given(pieces(DATE_TOKENS, 12))
def test_lastmod_dates(text: str) -> None:
    parsed = parse_w3c_datetime(text)
    assert parsed is None or (isinstance(parsed, datetime) and parsed.tzinfo is not None)
