"""Sitemap, sitemap index and Signmap parsing on literal documents; lenient lastmod."""

from __future__ import annotations

import gzip
import zlib
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.discovery.sitemap import ChildSitemap, SitemapItem, SitemapParser, parse_sitemap
from adapter.discovery.w3cdate import parse_w3c_datetime
from adapter.findings import Finding
from adapter.limits import DEFAULT_LIMITS
from adapter.models import Link, SitemapEntry

URL = "https://repo.example/sitemap.xml"
HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:rs="http://www.openarchives.org/rs/terms/">\n'
)


def urlset(body: str) -> bytes:
    return (HEAD + body + "</urlset>\n").encode()


def many(n: int, start: int = 0) -> bytes:
    return urlset(
        "".join(
            f"<url><loc>https://repo.example/d/{i}</loc></url>\n" for i in range(start, start + n)
        )
    )


def parse(body: bytes, url: str = URL, **limits: int) -> list[SitemapItem]:
    return list(parse_sitemap(body, url, DEFAULT_LIMITS.with_overrides(limits)))


def entries(items: list[SitemapItem]) -> list[SitemapEntry]:
    return [i for i in items if isinstance(i, SitemapEntry)]


def codes(items: list[SitemapItem]) -> list[str]:
    return [i.code for i in items if isinstance(i, Finding)]


SIGNMAP = urlset(
    """
  <rs:md capability="resourcelist" at="2024-01-03T09:00:00Z"/>
  <url>
    <loc>https://repo.example/res1</loc>
    <lastmod>2024-01-02T14:00:00Z</lastmod>
    <rs:md hash="md5:1e0d5cb8ef6ba40c99b14c0237be735e" length="8876" type="text/html"/>
    <rs:ln rel="describedby" href="https://repo.example/res1.jsonld"
           type="application/ld+json" profile="https://w3id.org/ro/crate"/>
    <rs:ln rel="duplicate" href="https://mirror.example/res1" pri="1" hash="md5:ab"
           length="10" modified="2024-01-01"/>
    <rs:ln rel="cite-as item" href="https://doi.org/10.5072/x"/>
  </url>
"""
)


def test_signmap_links_and_md_attributes_are_kept() -> None:
    (entry,) = entries(parse(SIGNMAP))
    assert entry.loc == "https://repo.example/res1"
    assert entry.sitemap == URL
    assert entry.lastmod == datetime(2024, 1, 2, 14, tzinfo=UTC)
    assert entry.attributes == (
        ("hash", "md5:1e0d5cb8ef6ba40c99b14c0237be735e"),
        ("length", "8876"),
        ("type", "text/html"),
    )
    anchor = "https://repo.example/res1"
    assert entry.links == (
        Link(
            "https://repo.example/res1.jsonld",
            "describedby",
            anchor,
            "signmap",
            "application/ld+json",
            "https://w3id.org/ro/crate",
        ),
        Link(
            "https://mirror.example/res1",
            "duplicate",
            anchor,
            "signmap",
            extra=(("hash", "md5:ab"), ("length", "10"), ("modified", "2024-01-01"), ("pri", "1")),
        ),
        Link("https://doi.org/10.5072/x", "cite-as", anchor, "signmap"),
        Link("https://doi.org/10.5072/x", "item", anchor, "signmap"),
    )


def test_signmap_link_without_href_or_rel_is_a_finding() -> None:
    body = urlset(
        "<url><loc>https://repo.example/a</loc><rs:ln rel='describedby'/>"
        "<rs:ln href='https://repo.example/a.json'/></url>"
    )
    items = parse(body)
    assert codes(items) == ["sitemap/bad-signmap-link", "sitemap/bad-signmap-link"]
    assert entries(items)[0].links == ()


def test_sitemap_index_yields_child_sitemaps() -> None:
    body = b"""<?xml version="1.0"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
 <sitemap><loc>https://repo.example/s1.xml.gz</loc><lastmod>2024-05</lastmod></sitemap>
 <sitemap><loc> https://repo.example/s2.xml </loc></sitemap>
 <url><loc>https://repo.example/not-an-entry</loc></url>
</sitemapindex>"""
    parser = SitemapParser(URL)
    items = parser.feed(body) + parser.close()
    assert parser.kind == "sitemapindex"
    assert items == [
        ChildSitemap("https://repo.example/s1.xml.gz", URL, datetime(2024, 5, 1, tzinfo=UTC)),
        ChildSitemap("https://repo.example/s2.xml", URL, None),
    ]


def test_feeding_one_byte_at_a_time_gives_the_same_result() -> None:
    whole = parse(SIGNMAP + b"")
    parser = SitemapParser(URL)
    pieces: list[SitemapItem] = []
    for i in range(len(SIGNMAP)):
        pieces += parser.feed(SIGNMAP[i : i + 1])
    pieces += parser.close()
    assert pieces == whole


@pytest.mark.parametrize("name", ["sitemap.xml", "sitemap.xml.gz", "sitemap", "s.txt"])
def test_gzip_is_recognised_by_magic_bytes_whatever_the_name(name: str) -> None:
    url = f"https://repo.example/{name}"
    items = parse(gzip.compress(many(3)), url)
    assert [e.loc for e in entries(items)] == [f"https://repo.example/d/{i}" for i in range(3)]
    assert codes(items) == []


def test_plain_text_sitemap() -> None:
    body = b"\xef\xbb\xbfhttps://repo.example/a\r\n\r\n  https://repo.example/b  \nnot a url\nftp://x/y"
    items = parse(body, "https://repo.example/sitemap.txt")
    assert [e.loc for e in entries(items)] == ["https://repo.example/a", "https://repo.example/b"]
    assert codes(items) == ["sitemap/loc-relative", "sitemap/loc-not-http"]


def test_a_loc_led_by_a_control_character_is_no_url() -> None:
    """urlsplit drops leading C0 controls, so the loc must not reach it to be judged a URL."""
    body = b"\x1bhttps://repo.example/d/1\n\x00https://repo.example/d/2\nhttps://repo.example/d/3"
    items = parse(body, "https://repo.example/sitemap.txt")
    assert [e.loc for e in entries(items)] == ["https://repo.example/d/3"]
    assert codes(items) == ["sitemap/loc-relative", "sitemap/loc-relative"]


def test_bad_locs_are_findings_and_skipped() -> None:
    long = "https://repo.example/" + "x" * 2100
    body = urlset(
        f"<url><loc>{long}</loc></url><url><loc>/relative/1</loc></url>"
        "<url><loc>mailto:a@b.example</loc></url><url><loc></loc></url>"
        "<url><loc>https://repo.example/ok</loc></url>"
    )
    items = parse(body)
    assert [e.loc for e in entries(items)] == ["https://repo.example/ok"]
    assert codes(items) == [
        "sitemap/loc-too-long",
        "sitemap/loc-relative",
        "sitemap/loc-not-http",
        "sitemap/loc-relative",
    ]


def test_repeated_findings_are_summarised() -> None:
    body = urlset("".join(f"<url><loc>/rel/{i}</loc></url>" for i in range(25)))
    items = parse(body)
    assert codes(items).count("sitemap/loc-relative") == 10
    assert codes(items)[-1] == "sitemap/more-findings"
    last = items[-1]
    assert isinstance(last, Finding) and "15 more" in last.message


def test_bad_lastmod_keeps_the_entry_without_it() -> None:
    body = urlset(
        "<url><loc>https://repo.example/a</loc><lastmod>yesterday</lastmod></url>"
        "<url><loc>https://repo.example/b</loc><lastmod>2024-13-45</lastmod></url>"
    )
    items = parse(body)
    assert [(e.loc, e.lastmod) for e in entries(items)] == [
        ("https://repo.example/a", None),
        ("https://repo.example/b", None),
    ]
    assert codes(items) == ["sitemap/bad-lastmod", "sitemap/bad-lastmod"]


def test_entry_cap_reads_up_to_the_cap_with_a_finding() -> None:
    items = parse(many(10), max_sitemap_entries=4)
    assert len(entries(items)) == 4
    assert codes(items) == ["sitemap/too-many-entries"]


def test_byte_cap_reads_up_to_the_cap_with_a_finding() -> None:
    body = many(1000)
    items = parse(body, max_sitemap_bytes=len(body) // 2)
    assert 400 < len(entries(items)) < 500
    assert codes(items) == ["sitemap/too-large"]


def test_gzip_bomb_stops_at_the_cap() -> None:
    bomb = gzip.compress(
        HEAD.encode() + b"<url><loc>https://repo.example/a</loc></url>" + b" " * 50_000_000
    )
    assert len(bomb) < 300_000
    items = parse(bomb, max_sitemap_bytes=1_000_000)
    assert [e.loc for e in entries(items)] == ["https://repo.example/a"]
    assert codes(items) == ["sitemap/too-large"]


def test_truncated_gzip_keeps_what_came_before() -> None:
    packed = gzip.compress(many(2000))
    items = parse(packed[: len(packed) // 2])
    assert 100 < len(entries(items)) < 2000
    assert codes(items) == ["sitemap/bad-gzip"]


def test_corrupt_gzip_is_a_finding() -> None:
    packed = bytearray(gzip.compress(many(50)))
    packed[30:40] = b"\x00" * 10
    items = parse(bytes(packed))
    assert "sitemap/bad-gzip" in codes(items) or "sitemap/bad-xml" in codes(items)


def test_broken_xml_keeps_what_came_before() -> None:
    body = many(5)[:-20] + b"<url><loc>https://repo.example/x</loc></url oops></urlset>"
    items = parse(body)
    assert len(entries(items)) == 4
    assert codes(items) == ["sitemap/bad-xml"]


@pytest.mark.parametrize(
    "body",
    [
        b"<!DOCTYPE html>\n<html><head><title>Error</title></head><body>Gone<br></body></html>",
        b"<html><body><p>Login required</p></body></html>",
        b"  \n<HTML><BODY>oops</BODY></HTML>",
    ],
)
def test_html_error_page_is_a_finding(body: bytes) -> None:
    assert codes(parse(body)) == ["sitemap/html"]


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE urlset [
 <!ENTITY a "aaaaaaaaaa">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
 <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
 <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
 <!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://x.example/&h;</loc></url></urlset>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://x.example/&secret;</loc></url></urlset>"""

EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/never.dtd">
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://x.example/1</loc></url></urlset>"""


@pytest.mark.parametrize("body", [BILLION_LAUGHS, XXE])
def test_entity_declarations_are_refused(body: bytes) -> None:
    items = parse(body)
    assert entries(items) == []
    assert codes(items) == ["sitemap/entities-refused"]


def test_external_dtd_is_not_loaded() -> None:
    items = parse(EXTERNAL_DTD)  # port 9 would refuse; nothing is fetched at all
    assert [e.loc for e in entries(items)] == ["https://x.example/1"]


def test_undeclared_entity_is_bad_xml_not_expanded() -> None:
    body = urlset("<url><loc>https://x.example/&nope;</loc></url>")
    assert codes(parse(body)) == ["sitemap/bad-xml"]


def test_other_xml_documents_are_not_sitemaps() -> None:
    rss = b'<?xml version="1.0"?><rss version="2.0"><channel><item/></channel></rss>'
    assert codes(parse(rss)) == ["sitemap/unsupported-format"]


def test_wrong_namespace_is_read_with_a_warning() -> None:
    body = b"<urlset><url><loc>https://repo.example/a</loc></url></urlset>"
    items = parse(body)
    assert [e.loc for e in entries(items)] == ["https://repo.example/a"]
    assert codes(items) == ["sitemap/wrong-namespace"]


def test_empty_body_is_a_finding() -> None:
    assert codes(parse(b"")) == ["sitemap/bad-xml"]
    assert codes(parse(b" \n ")) == ["sitemap/bad-xml"]


def test_entity_escaped_loc_is_unescaped() -> None:
    body = urlset("<url><loc>https://repo.example/d?a=1&amp;b=2</loc></url>")
    assert entries(parse(body))[0].loc == "https://repo.example/d?a=1&b=2"


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_50000_urls_in_one_file_are_all_read() -> None:
    items = parse(gzip.compress(many(50_000)))
    assert len(items) == 50_000
    last = items[-1]
    assert isinstance(last, SitemapEntry) and last.loc == "https://repo.example/d/49999"


# -- lastmod ------------------------------------------------------------------

UTC_ = UTC
PLUS1 = timezone(timedelta(hours=1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024", datetime(2024, 1, 1, tzinfo=UTC_)),
        ("2024-05", datetime(2024, 5, 1, tzinfo=UTC_)),
        ("2024-05-06", datetime(2024, 5, 6, tzinfo=UTC_)),
        ("2024-05-06T10:20Z", datetime(2024, 5, 6, 10, 20, tzinfo=UTC_)),
        ("2024-05-06T10:20+01:00", datetime(2024, 5, 6, 10, 20, tzinfo=PLUS1)),
        ("2024-05-06T10:20:30+01:00", datetime(2024, 5, 6, 10, 20, 30, tzinfo=PLUS1)),
        ("2024-05-06T10:20:30.45Z", datetime(2024, 5, 6, 10, 20, 30, 450000, tzinfo=UTC_)),
        ("2024-05-06T10:20:30.123456789Z", datetime(2024, 5, 6, 10, 20, 30, 123456, tzinfo=UTC_)),
        ("2024-05-06T10:20:30", datetime(2024, 5, 6, 10, 20, 30, tzinfo=UTC_)),
        ("2024-05-06 10:20:30", datetime(2024, 5, 6, 10, 20, 30, tzinfo=UTC_)),
        ("2024-05-06T10:20:30+0100", datetime(2024, 5, 6, 10, 20, 30, tzinfo=PLUS1)),
        ("  2024-05-06T10:20:30z ", datetime(2024, 5, 6, 10, 20, 30, tzinfo=UTC_)),
        ("2024-5-6", datetime(2024, 5, 6, tzinfo=UTC_)),
    ],
)
def test_lastmod_forms(text: str, expected: datetime) -> None:
    parsed = parse_w3c_datetime(text)
    assert parsed == expected
    assert parsed is not None and parsed.utcoffset() == expected.utcoffset()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "2024-13",
        "2024-02-30",
        "2024-05-06T25:00Z",
        "06/05/2024",
        "2024-05-06T10:20+25:00",
        "9" * 100,
    ],
)
def test_lastmod_rejects(text: str) -> None:
    assert parse_w3c_datetime(text) is None


# -- never raise ----------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_lastmod_parser_never_raises(text: str) -> None:
    parsed = parse_w3c_datetime(text)
    assert parsed is None or parsed.tzinfo is not None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000), st.integers(min_value=1, max_value=64))
def test_sitemap_parser_never_raises_on_bytes(data: bytes, chunk: int) -> None:
    list(parse_sitemap(data, URL, chunk_size=chunk))
    list(parse_sitemap(gzip.compress(data), URL, chunk_size=chunk * 7))


XMLISH = st.lists(
    st.sampled_from(
        [
            HEAD,
            "<url>",
            "</url>",
            "<loc>",
            "</loc>",
            "https://repo.example/a",
            "<lastmod>",
            "</lastmod>",
            "2024-01",
            "<rs:ln rel='x' href='y'/>",
            "<rs:md hash='md5:1'/>",
            "<sitemapindex>",
            "<sitemap>",
            "</sitemap>",
            "</urlset>",
            "&amp;",
            "&bogus;",
            "<!DOCTYPE x [<!ENTITY e 'e'>]>",
            "\x00",
            "\ufeff",
            "<html>",
            "]]>",
        ]
    ),
    max_size=40,
).map("".join)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
@settings(max_examples=300, deadline=None)
@given(XMLISH, st.integers(min_value=1, max_value=50))
def test_sitemap_parser_never_raises_on_xmlish_text(text: str, chunk: int) -> None:
    items = list(parse_sitemap(text.encode("utf-8", "surrogatepass"), URL, chunk_size=chunk))
    assert all(isinstance(i, SitemapEntry | ChildSitemap | Finding) for i in items)


def test_deflate_stream_without_gzip_header_is_not_mistaken_for_gzip() -> None:
    body = zlib.compress(many(2))
    assert entries(parse(body)) == []


def test_nested_elements_named_url_do_not_disturb_the_entry() -> None:
    body = urlset(
        '<url><loc>https://repo.example/a</loc><x:data xmlns:x="urn:x"><x:url>inner</x:url>'
        "<x:sitemap/></x:data><lastmod>2024-02-03</lastmod></url>"
        "<url><loc>https://repo.example/b</loc></url>"
    )
    items = parse(body)
    assert [(e.loc, e.lastmod) for e in entries(items)] == [
        ("https://repo.example/a", datetime(2024, 2, 3, tzinfo=UTC)),
        ("https://repo.example/b", None),
    ]
    assert codes(items) == []


def test_parser_reports_gzip_and_format() -> None:
    parser = SitemapParser(URL)
    parser.feed(gzip.compress(many(1)))
    parser.close()
    assert (parser.kind, parser.gzipped, parser.count) == ("urlset", True, 1)


def test_read_entries_leave_the_tree_so_memory_stays_flat() -> None:
    from adapter.discovery.sitemap_xml import SitemapXml

    xml = SitemapXml()
    body = many(5000)
    records = []
    for start in range(0, len(body), 4096):
        records += list(xml.feed(body[start : start + 4096]))
    root = xml._parser.close()  # what is left of the document once every entry was read
    assert len(records) == 5000
    assert len(root) <= 1 and all(len(child) == 0 for child in root)
