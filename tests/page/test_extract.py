"""Extract stage: blocks read one by one, charsets, caps, routing by content, JS shells."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.findings import FindingType, Severity
from adapter.limits import Limits
from adapter.page import extract as extract_module
from adapter.page.charset import decode
from adapter.page.extract import Extraction, Skipped, extract
from adapter.page.findings import JS_RENDERED
from adapter.page.jsonrepair import FailureKind
from adapter.page.markup import markup_syntaxes

URL = "https://repo.example/dataset/1"
DATASET = '{"@context": "https://schema.org/", "@type": "Dataset", "name": "%s"}'


def page(*blocks: str, head: str = "", body: str = "") -> bytes:
    scripts = "".join(f'<script type="application/ld+json">{b}</script>\n' for b in blocks)
    return (
        f"<!DOCTYPE html>\n<html><head>{head}\n{scripts}</head><body>{body}</body></html>".encode()
    )


def run(
    body: bytes, content_type: str = "text/html", charset: str | None = None, **limits: int
) -> Extraction:
    return extract(
        body, url=URL, content_type=content_type, charset=charset, limits=Limits(**limits)
    )


def codes(result: Extraction) -> list[str]:
    return [f.code for f in result.findings]


def is_js_rendered(result: Extraction) -> bool:
    return any(f.code == JS_RENDERED.code for f in result.findings)


def test_each_block_is_read_and_numbered() -> None:
    result = run(page(DATASET % "a", '{"@context": "https://schema.org", "@type": "WebPage"}'))
    assert [(b.index, b.syntax) for b in result.blocks] == [(1, "json-ld"), (2, "json-ld")]
    assert result.blocks[0].data["name"] == "a"
    assert result.findings == []


def test_a_broken_block_names_block_line_and_column_and_the_others_still_count() -> None:
    broken = '{\n  "@context": "https://schema.org",\n  "name": ,\n  "x": 1\n}'
    result = run(page(DATASET % "first", broken, DATASET % "third"))
    assert [b.index for b in result.blocks] == [1, 3]
    (finding,) = result.findings
    assert finding.code == "extract/invalid-json"
    assert finding.where == "block 2"
    assert "line 3, column 11" in finding.message
    assert "script at line 4 of the page" in finding.message


def test_a_broken_block_that_holds_the_dataset_says_so() -> None:
    result = run(page('{"@context": "https://schema.org/", "@type": "Dataset", "name": ,}'))
    assert "appears to hold the Dataset" in result.findings[0].message
    other = run(page('{"@context": "https://schema.org/", "@type": "WebSite", "name": ,}'))
    assert "Dataset" not in other.findings[0].message


def test_repairs_are_named_in_a_warning() -> None:
    result = run(page('// CMS\n{"@context": "https://schema.org/", "@type": "Dataset",};'))
    (block,) = result.blocks
    assert block.data == {"@context": "https://schema.org/", "@type": "Dataset"}
    (finding,) = result.findings
    assert finding.code == "extract/repaired-json"
    assert finding.severity is Severity.WARNING
    assert "JavaScript comments" in finding.message and "trailing semicolon" in finding.message


def test_script_type_with_parameters_or_capitals_is_still_json_ld() -> None:
    body = (
        b'<html><head><script type=" Application/LD+JSON; charset=utf-8">'
        + (DATASET % "x").encode()
        + b"</script></head></html>"
    )
    assert len(run(body).blocks) == 1


def test_json_nested_100000_deep_is_a_finding_not_a_crash() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    result = run(page(DATASET % "kept", deep))
    assert [b.index for b in result.blocks] == [1]
    assert codes(result) == ["extract/too-deep"]
    as_document = run(deep.encode(), content_type="application/ld+json")
    assert codes(as_document) == ["extract/too-deep"]


def test_node_and_block_caps() -> None:
    many = json.dumps({"@context": "https://schema.org/", "k": list(range(100))})
    assert codes(run(page(many), max_json_nodes=50)) == ["extract/too-many-nodes"]
    result = run(page(DATASET % "1", DATASET % "2", DATASET % "3"), max_jsonld_blocks=2)
    assert [b.index for b in result.blocks] == [1, 2]
    assert codes(result) == ["extract/too-many-blocks"]
    assert codes(run(page(DATASET % "x"), max_page_bytes=20)) == ["extract/body-too-large"]


def test_header_charset_wins_over_meta() -> None:
    body = page(DATASET % "Jörgensen", head='<meta charset="utf-8">').decode().encode("latin-1")
    result = run(body, charset="iso-8859-1")
    assert result.blocks[0].data["name"] == "Jörgensen"
    assert decode(body, "iso-8859-1").encoding == "cp1252"  # windows-1252, as in browsers
    assert result.findings == []


def test_latin1_and_ascii_labels_mean_windows_1252_as_in_browsers() -> None:
    body = page(DATASET % "5@").replace(b"@", b"\x80")
    for label in ("iso-8859-1", "ISO_8859-1", "latin1", "ascii", "us-ascii", "windows-1252"):
        result = run(body, charset=label)
        assert result.blocks[0].data["name"] == "5\u20ac", label
        assert decode(body, label).encoding == "cp1252" and result.findings == []
    meta = page(DATASET % "5@", head='<meta charset="iso-8859-1">').replace(b"@", b"\x80")
    assert run(meta).blocks[0].data["name"] == "5\u20ac"
    # the five bytes cp1252 leaves undefined are the code points of their number
    undefined = page(DATASET % "@").replace(b"@", b"\x81\x8d\x8f\x90\x9d")
    result = run(undefined, charset="latin1")
    assert result.blocks[0].data["name"] == "\x81\x8d\x8f\x90\x9d" and result.findings == []


def test_meta_charset_is_used_without_a_header() -> None:
    body = page(DATASET % "Åland", head='<meta charset="windows-1252">').decode().encode("cp1252")
    assert run(body).blocks[0].data["name"] == "Åland"


def test_byte_order_marks() -> None:
    text = page(DATASET % "Ölfus").decode()
    assert run(b"\xef\xbb\xbf" + text.encode()).blocks[0].data["name"] == "Ölfus"
    utf16 = run(b"\xff\xfe" + text.encode("utf-16-le"), charset="iso-8859-1")
    assert utf16.blocks[0].data["name"] == "Ölfus"


def test_invalid_utf8_is_replaced_with_a_finding() -> None:
    body = page(DATASET % "Caf@").replace(b"@", b"\xff")
    result = run(body)
    assert codes(result) == ["extract/invalid-encoding"]
    assert result.blocks[0].data["name"] == "Caf\ufffd"


def test_unknown_charset_is_read_as_utf8() -> None:
    result = run(page(DATASET % "ok"), charset="x-klingon")
    assert codes(result) == ["extract/unknown-charset"]
    assert len(result.blocks) == 1


def test_a_json_ld_body_is_the_document() -> None:
    result = run((DATASET % "doc").encode(), content_type="application/ld+json")
    (block,) = result.blocks
    assert (block.syntax, block.data["name"]) == ("document", "doc")


def test_json_that_is_not_json_ld_and_json_sent_as_text() -> None:
    assert codes(run(b'{"status": "ok"}', content_type="application/json")) == [
        "extract/not-jsonld"
    ]
    sent_as_text = run((DATASET % "t").encode(), content_type="text/plain")
    assert codes(sent_as_text) == ["extract/wrong-content-type"]
    assert sent_as_text.blocks[0].syntax == "document"


def test_binary_and_other_formats_are_findings() -> None:
    pdf = run(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", content_type="application/pdf")
    assert codes(pdf) == ["extract/not-html"]
    png_as_html = run(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", content_type="text/html")
    assert codes(png_as_html) == ["extract/not-html"]
    assert "binary" in png_as_html.findings[0].message


def test_no_json_ld_and_empty_body() -> None:
    assert codes(run(page(body="<p>hello</p>"))) == ["extract/no-jsonld"]
    assert codes(run(b"")) == ["extract/no-jsonld"]


def test_a_body_that_is_only_a_comment_is_a_page_without_json_ld() -> None:
    """lxml hands back the comment itself for such a body, which XPath refuses (found by
    test_fuzz_dataset's broken pages)."""
    assert codes(run(b"\x1f<!--")) == ["extract/no-jsonld"]
    assert codes(run(b"<!-- a comment, and nothing else -->\n")) == ["extract/no-jsonld"]


def test_js_shell_is_explained() -> None:
    shell = page(
        head='<script src="/assets/index-4f2a.js" type="module"></script>',
        body='<noscript>Please enable JavaScript.</noscript><div id="app"></div>',
    )
    result = run(shell)
    assert is_js_rendered(result)
    assert codes(result) == ["extract/no-jsonld", "extract/js-rendered"]
    message = result.findings[1].message
    assert "index-4f2a.js" in message and '<div id="app">' in message and "noscript" in message


def test_scripts_alone_are_not_a_js_shell() -> None:
    result = run(page(head='<script src="/main.js"></script>', body="<h1>Dataset</h1><p>..</p>"))
    assert not is_js_rendered(result)
    assert codes(result) == ["extract/no-jsonld"]


def test_a_server_rendered_page_asking_for_javascript_is_not_a_shell() -> None:
    text = "<p>" + "Daily discharge at station 42, quality-controlled. " * 10 + "</p>"
    body = text + "<noscript>Enable JavaScript to see the map.</noscript>"
    result = run(page(head='<script src="/js/bundle.min.js"></script>', body=body))
    assert not is_js_rendered(result)
    shell = run(page(head='<script src="/js/bundle.min.js"></script>', body=body[len(text) :]))
    assert is_js_rendered(shell)


def test_a_shell_with_static_json_ld_but_no_dataset_is_explained_too() -> None:
    website = '{"@context": "https://schema.org", "@type": "WebSite", "name": "Portal"}'
    result = run(
        page(website, head='<script src="/app.js"></script>', body='<div id="root"></div>')
    )
    assert is_js_rendered(result)
    assert codes(result) == ["extract/js-rendered"]
    assert "no JSON-LD Dataset" in result.findings[0].message
    with_dataset = run(
        page(DATASET % "d", body='<script src="/app.js"></script><app-root></app-root>')
    )
    assert not is_js_rendered(with_dataset)


def test_microdata_is_read_only_without_a_json_ld_dataset() -> None:
    microdata = (
        '<div itemscope itemtype="https://schema.org/Dataset"><span itemprop="name">M</span></div>'
    )
    with_jsonld = run(page(DATASET % "J", body=microdata))
    assert [b.syntax for b in with_jsonld.blocks] == ["json-ld"]
    org_only = '{"@context": "https://schema.org/", "@type": "Organization", "name": "O"}'
    fallback = run(page(org_only, body=microdata))
    assert [b.syntax for b in fallback.blocks] == ["json-ld", "microdata"]
    assert fallback.blocks[1].index == 2
    assert fallback.blocks[1].data["@type"] == "http://schema.org/Dataset"
    assert codes(fallback) == ["extract/non-jsonld-markup"]


def test_empty_and_external_blocks_are_skipped_with_the_reason() -> None:
    body = (
        b'<html><head><script type="application/ld+json" src="/meta/ds.jsonld"></script>'
        b'<script type="application/ld+json">  </script></head></html>'
    )
    result = run(body)
    assert result.blocks == []
    assert codes(result) == ["extract/empty-block", "extract/empty-block"]
    assert "/meta/ds.jsonld" in result.findings[0].message


def test_base_href_is_reported() -> None:
    result = run(page(DATASET % "b", head='<base href="/records/">'))
    assert result.base_url == "https://repo.example/records/"


def test_every_extract_code_is_declared_with_an_explanation() -> None:
    declared = [v for v in vars(extract_module).values() if isinstance(v, FindingType)]
    assert {t.code for t in declared} >= {"extract/no-jsonld", "extract/invalid-json"}
    assert all(t.code.startswith("extract/") and len(t.explanation) > 40 for t in declared)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(["text/html", "application/ld+json", ""]))
def test_any_bytes_give_an_extraction(body: bytes, content_type: str) -> None:
    result = run(body, content_type=content_type)
    assert all(f.code.startswith("extract/") for f in result.findings)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet='{}[]",:;/*<>!-@ abcx01\n\t\\', max_size=120))
def test_any_script_text_gives_blocks_or_findings(text: str) -> None:
    result = run(page(text))
    assert len(result.blocks) + len(result.findings) >= 1
    assert all(f.code.startswith("extract/") for f in result.findings)


def test_markup_is_read_only_when_the_page_uses_it() -> None:
    from extruct.utils import parse_html  # here: extruct costs each xdist worker ~0.4 CPU-s

    # pyRdfa is quadratic in one element's attributes: a page without RDFa never reaches it
    wide = b" ".join(b'data-a%d="v"' % i for i in range(3000))
    page = b"<html><head><title>x</title></head><body><div " + wide + b">x</div></body></html>"
    result = extract(page, url="http://repo.example/p", content_type="text/html", charset="utf-8")
    assert [f.code for f in result.findings] == ["extract/no-jsonld"]
    assert markup_syntaxes(parse_html(page, encoding="utf-8")) == []
    rdfa = b'<html><body vocab="http://schema.org/"><div typeof="Dataset">x</div></body></html>'
    assert markup_syntaxes(parse_html(rdfa, encoding="utf-8")) == ["rdfa"]
    microdata = (
        b'<html><body><div itemscope itemtype="https://schema.org/Dataset"></div></body></html>'
    )
    assert markup_syntaxes(parse_html(microdata, encoding="utf-8")) == ["microdata"]


@pytest.mark.timeout(60)  # a hang guard: pyRdfa took minutes on such an element
def test_rdfa_is_read_past_an_element_with_thousands_of_attributes() -> None:
    wide = b" ".join(b'data-a%d="v"' % i for i in range(5000))
    page = (
        b'<html><body vocab="http://schema.org/"><div typeof="Dataset" ' + wide + b">"
        b'<span property="name">Ice cores</span></div></body></html>'
    )
    result = extract(page, url="http://repo.example/p", content_type="text/html", charset="utf-8")
    (block,) = result.blocks
    assert block.syntax == "rdfa"
    assert "Ice cores" in json.dumps(block.data)


def test_skipped_candidates_say_where_why_and_which_cap() -> None:
    deep = '{"@context": "https://schema.org/", "a": ' + "[" * 10 + "]" * 10 + "}"
    result = run(page("   ", "{not json", deep), max_json_depth=5)
    assert result.blocks == []
    assert result.skipped == [
        Skipped("block 1"),
        Skipped("block 2", FailureKind.SYNTAX),
        Skipped("block 3", FailureKind.TOO_DEEP),
    ]
    assert [s.why for s in result.skipped] == ["empty", "not valid JSON", "nested too deep"]
    assert [s.limit for s in result.skipped] == [None, None, "max_json_depth"]
    document = run(
        b'{"a": ' + b"[" * 10 + b"]" * 10 + b"}", "application/ld+json", max_json_nodes=5
    )
    assert document.skipped == [Skipped("document", FailureKind.TOO_MANY_NODES)]
    assert document.skipped[0].limit == "max_json_nodes"
