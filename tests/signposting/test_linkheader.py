"""RFC 8288 Link header parsing: the grammar's corners and what real servers send."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.models import Link
from adapter.signposting.linkformat import format_link_header
from adapter.signposting.linkheader import ParsedLinks, parse_link_fields

PAGE = "https://repo.example/dataset/7"


def parse(*fields: str, context: str = PAGE, cap: int = 500) -> ParsedLinks:
    return parse_link_fields(fields, context, max_links=cap)


def codes(result: ParsedLinks) -> list[str]:
    return [f.code for f in result.findings]


def test_commas_and_semicolons_inside_target_and_quotes_are_data() -> None:
    r = parse(
        '<https://ex.org/a;b,c>; rel="item"; type="text/csv"; title="a; b, c", '
        "<https://ex.org/d>; rel=license"
    )
    assert [(link.href, link.rel) for link in r.links] == [
        ("https://ex.org/a;b,c", "item"),
        ("https://ex.org/d", "license"),
    ]
    assert r.links[0].type == "text/csv"
    assert ("title", "a; b, c") in r.links[0].extra
    assert r.findings == []


def test_several_relations_in_one_rel_are_several_links() -> None:
    r = parse('<https://ex.org/m.xml>; rel="describedby item"; type="application/xml"')
    assert [link.rel for link in r.links] == ["describedby", "item"]
    assert {link.type for link in r.links} == {"application/xml"}


def test_repeated_fields_and_comma_joined_lists_are_equivalent() -> None:
    joined = parse("<https://a.org/1>; rel=cite-as, <https://a.org/2>; rel=item")
    separate = parse("<https://a.org/1>; rel=cite-as", "<https://a.org/2>; rel=item")
    assert joined.links == separate.links and len(joined.links) == 2


def test_only_first_rel_type_title_count() -> None:
    r = parse(
        '<https://a.org/1>; rel=item; type="text/csv"; rel=license; type="text/plain"; '
        "title=one; title=two"
    )
    assert [(link.rel, link.type) for link in r.links] == [("item", "text/csv")]
    assert ("title", "one") in r.links[0].extra
    assert codes(r) == ["signposting/link-repeated-param"]


def test_relative_target_and_anchor_resolve_against_context() -> None:
    r = parse('</files/a.csv>; rel=item; ANCHOR="../other"', context="https://r.org/ds/7/page")
    assert r.links[0].href == "https://r.org/files/a.csv"
    assert r.links[0].anchor == "https://r.org/ds/other"


def test_param_names_and_registered_rels_are_case_insensitive() -> None:
    r = parse('<https://a.org/1>; REL="Cite-As"; Type="Text/HTML"; Profile="https://p.org/x"')
    link = r.links[0]
    assert (link.rel, link.type, link.profile) == ("cite-as", "text/html", "https://p.org/x")


def test_extension_relation_uri_keeps_its_case() -> None:
    r = parse('<https://a.org/1>; rel="https://Example.org/Rels/Thing"')
    assert r.links[0].rel == "https://Example.org/Rels/Thing"


def test_unquoted_and_quoted_values_are_equivalent() -> None:
    a = parse("<https://a.org/1>; rel=item; type=text/csv")
    b = parse('<https://a.org/1>; rel="item"; type="text/csv"')
    assert a.links == b.links


def test_quoted_string_escapes() -> None:
    r = parse(r'<https://a.org/1>; rel=item; title="say \"hi\", \\ ok"')
    assert ("title", 'say "hi", \\ ok') in r.links[0].extra


def test_title_star_is_decoded_and_preferred() -> None:
    r = parse("<https://a.org/1>; rel=item; title=plain; title*=UTF-8'de'n%c3%a4chstes")
    assert ("title", "nächstes") in r.links[0].extra


def test_missing_comma_between_link_values_is_repaired_with_a_warning() -> None:
    r = parse('<https://a.org/1>; rel="cite-as" <https://a.org/2>; rel="item"')
    assert [link.href for link in r.links] == ["https://a.org/1", "https://a.org/2"]
    assert codes(r) == ["signposting/link-missing-comma"]


def test_doubled_closing_bracket_is_repaired_with_a_warning() -> None:
    r = parse("<https://orcid.org/0000-0001-8390-6171>>; rel=author")
    assert r.links[0].href == "https://orcid.org/0000-0001-8390-6171"
    assert codes(r) == ["signposting/link-doubled-bracket"]


def test_target_without_brackets_is_skipped_and_the_rest_read() -> None:
    # Dataverse once sent its license link like this
    r = parse(
        'https://creativecommons.org/publicdomain/zero/1.0/;rel="license", '
        '<https://doi.org/10.1/x>; rel="cite-as"'
    )
    assert [link.rel for link in r.links] == ["cite-as"]
    assert codes(r) == ["signposting/link-malformed"]


def test_link_without_rel_is_skipped() -> None:
    r = parse('<https://a.org/1>; type="text/csv", <https://a.org/2>; rel=item')
    assert [link.href for link in r.links] == ["https://a.org/2"]
    assert codes(r) == ["signposting/link-without-rel"]


def test_unclosed_bracket_and_quote_give_findings_not_exceptions() -> None:
    assert codes(parse("<https://a.org/1; rel=item")) == ["signposting/link-malformed"]
    r = parse('<https://a.org/1>; rel=item; title="never closed')
    assert "signposting/link-malformed" in codes(r) and len(r.links) == 1


def test_cap_on_links() -> None:
    header = ", ".join(f"<https://a.org/{i}>; rel=item" for i in range(20))
    r = parse(header, cap=5)
    assert len(r.links) == 5 and r.truncated
    assert codes(r) == ["signposting/too-many-links"]


def test_naive_comma_splitting_would_fail_here() -> None:
    """The case requests.utils.parse_header_links gets wrong (specs.md 3.5)."""
    r = parse('<https://ex.org/a;b,c>; rel="item"; profile="https://p.org/?a=b;c=d"')
    assert r.links[0].profile == "https://p.org/?a=b;c=d"


# -- hypothesis -----------------------------------------------------------------

_path = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._~/;,=%", max_size=20)
_url = st.builds(
    lambda host, path: f"https://{host}.org/{path}",
    st.text(alphabet="abcdefghij", min_size=1, max_size=8),
    _path,
)
_rel = st.sampled_from(
    [
        "cite-as",
        "item",
        "describedby",
        "author",
        "license",
        "type",
        "collection",
        "https://example.org/rel,with;odd=chars",
    ]
)
_type = st.none() | st.sampled_from(["text/csv", "application/ld+json", "application/xml"])
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)
# built once: a strategy made inside the composite is made and validated again for every link
_title = st.none() | _text
_anchor = st.sampled_from([PAGE, "https://other.org/x"])
_profile = st.none() | _url


@st.composite
def links(draw: st.DrawFn) -> Link:
    title = draw(_title)
    return Link(
        href=draw(_url),
        rel=draw(_rel),
        anchor=draw(_anchor),
        source="header",
        type=draw(_type),
        profile=draw(_profile),
        extra=(("title", title),) if title else (),
    )


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(st.lists(links(), max_size=8))
@settings(max_examples=200, deadline=None)
def test_serialized_links_parse_back_to_the_same_links(items: list[Link]) -> None:
    header = format_link_header(items, context=PAGE)
    r = parse(header)
    assert r.findings == []
    assert r.links == items


@given(st.text(max_size=300))
@settings(max_examples=500, deadline=None)
def test_parser_never_raises_on_any_text(text: str) -> None:
    r = parse(text)
    for link in r.links:
        assert link.rel and link.rel == link.rel.strip()
    assert all(f.code.startswith("signposting/") for f in r.findings)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
@given(
    st.lists(
        st.sampled_from(
            [
                "<",
                ">",
                ";",
                ",",
                '"',
                "\\",
                "=",
                " ",
                "rel",
                "a",
                "anchor",
                "https://x.org/",
                "type",
                "title*",
                "'",
                "\n",
            ]
        ),
        max_size=60,
    )
)
@settings(max_examples=500, deadline=None)
def test_parser_never_raises_on_link_like_fragments(parts: list[str]) -> None:
    parse("".join(parts))
