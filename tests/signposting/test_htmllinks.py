"""HTML and XHTML <link> elements: head vs body, <base href>, rel token lists."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.signposting.htmllinks import parse_html_links

PAGE = "https://repo.example/dataset/7"


def test_links_in_head_with_base_href() -> None:
    body = b"""<!DOCTYPE html><html><head><title>t</title><base href="/files/">
    <link rel="cite-as" href="https://doi.org/10.1234/abc">
    <link rel="item describedby" href="data.csv" type="Text/CSV">
    <link rel="describedby" href="meta.xml" type="application/xml"
          profile="http://www.isotc211.org/2005/gmd">
    <link rel="stylesheet" href="/s.css"></head><body><p>x</p></body></html>"""
    r = parse_html_links(body, PAGE)
    got = [(link.rel, link.href, link.type) for link in r.links]
    assert ("cite-as", "https://doi.org/10.1234/abc", None) in got
    assert ("item", "https://repo.example/files/data.csv", "text/csv") in got
    assert ("describedby", "https://repo.example/files/data.csv", "text/csv") in got
    meta = next(link for link in r.links if link.href.endswith("meta.xml"))
    assert meta.profile == "http://www.isotc211.org/2005/gmd"
    assert all(link.anchor == PAGE and link.source == "html" for link in r.links)
    assert r.findings == []


def test_signposting_links_in_body_are_reported_not_counted() -> None:
    body = b"""<html><head><link rel="cite-as" href="https://doi.org/10.1/a"></head>
    <body><link rel="license" href="https://spdx.org/licenses/CC0-1.0">
    <link rel="stylesheet" href="late.css"></body></html>"""
    r = parse_html_links(body, PAGE)
    assert [link.rel for link in r.links] == ["cite-as"]
    assert [f.code for f in r.findings] == ["signposting/html-link-in-body"]
    assert "license" in r.findings[0].message


def test_link_between_head_and_body_counts_as_head() -> None:
    body = b"<html><head></head><link rel=item href=/a.csv type=text/csv><body></body></html>"
    r = parse_html_links(body, PAGE)
    assert [link.href for link in r.links] == ["https://repo.example/a.csv"]


def test_xhtml_document() -> None:
    body = b"""<?xml version="1.0" encoding="UTF-8"?>
    <html xmlns="http://www.w3.org/1999/xhtml"><head>
    <link rel="cite-as" href="https://doi.org/10.1/x"/>
    <base href="https://cdn.example/"/>
    <link rel="item" href="f.nc" type="application/x-netcdf"/></head>
    <body><link rel="author" href="https://orcid.org/0000-0002-1825-0097"/></body></html>"""
    r = parse_html_links(body, PAGE, content_type="application/xhtml+xml")
    assert [(link.rel, link.href) for link in r.links] == [
        ("cite-as", "https://doi.org/10.1/x"),
        ("item", "https://cdn.example/f.nc"),
    ]
    assert [f.code for f in r.findings] == ["signposting/html-link-in-body"]


def test_broken_xhtml_falls_back_to_html() -> None:
    body = b'<?xml version="1.0"?><html><head><link rel="cite-as" href="/x"></head></html>'
    r = parse_html_links(body, PAGE, content_type="application/xhtml+xml")
    assert [link.href for link in r.links] == ["https://repo.example/x"]


def test_link_without_href_and_empty_pages() -> None:
    r = parse_html_links(b"<html><head><link rel=cite-as></head></html>", PAGE)
    assert r.links == [] and [f.code for f in r.findings] == ["signposting/html-link-without-href"]
    assert parse_html_links(b"", PAGE).links == []
    assert parse_html_links(b"\x00\xff\xfe garbage", PAGE).findings == []


def test_cap() -> None:
    links = b"".join(b'<link rel="item" href="/f%d">' % i for i in range(30))
    r = parse_html_links(b"<html><head>" + links + b"</head></html>", PAGE, max_links=10)
    assert len(r.links) == 10 and [f.code for f in r.findings] == ["signposting/too-many-links"]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
@settings(max_examples=200, deadline=None)
def test_any_bytes_never_raise(body: bytes) -> None:
    for ctype in ("text/html", "application/xhtml+xml"):
        r = parse_html_links(b"<html><head>" + body, PAGE, content_type=ctype)
        assert all(link.href for link in r.links)


def test_latin1_labels_read_links_as_windows_1252() -> None:
    head = b'<link rel="author" href="https://repo.example/J\xf6rg" title="5\x80 \x81">'
    body = b"<html><head>" + head + b'<link rel="license" href="/l"></head></html>'
    meta = b'<html><head><meta charset="latin1">' + body[12:]
    for found in (
        parse_html_links(
            body, "https://repo.example/d", content_type="text/html", charset="iso-8859-1"
        ),
        parse_html_links(body, "https://repo.example/d", content_type="text/html", charset="ascii"),
        parse_html_links(meta, "https://repo.example/d", content_type="text/html"),
    ):
        assert [x.rel for x in found.links] == ["author", "license"]
        assert found.links[0].href == "https://repo.example/J\u00f6rg"
        assert dict(found.links[0].extra)["title"] == "5\u20ac \x81"
