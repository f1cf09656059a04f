"""RFC 9264 link sets in both formats, and the deviations real repositories publish."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.models import Link
from adapter.signposting.linkheader import ParsedLinks
from adapter.signposting.linkset import check_anchors, check_linkset_link, parse_linkset

LS = "https://repo.example/linkset/7"
PAGE = "https://repo.example/page/7"

FAIR_SP_JSON = {
    "linkset": [
        {
            "anchor": PAGE,
            "cite-as": [{"href": "https://doi.org/10.5061/dryad.5d23f"}],
            "type": [
                {"href": "https://schema.org/Dataset"},
                {"href": "https://schema.org/AboutPage"},
            ],
            "item": [{"href": "https://repo.example/file/7507/2", "type": "text/csv"}],
            "describedby": [
                {
                    "href": "https://repo.example/meta/7507.xml",
                    "type": "application/xml",
                    "profile": ["http://www.isotc211.org/2005/gmd"],
                }
            ],
        },
        {
            "anchor": "https://repo.example/file/7507/2",
            "collection": [{"href": PAGE, "type": "text/html"}],
        },
    ]
}


def codes(result: ParsedLinks) -> list[str]:
    return [f.code for f in result.findings]


def test_json_linkset() -> None:
    r = parse_linkset(json.dumps(FAIR_SP_JSON).encode(), "application/linkset+json", LS)
    assert r.findings == []
    got = {(link.anchor, link.rel, link.href) for link in r.links}
    assert (PAGE, "cite-as", "https://doi.org/10.5061/dryad.5d23f") in got
    assert ("https://repo.example/file/7507/2", "collection", PAGE) in got
    meta = next(link for link in r.links if link.rel == "describedby")
    assert (meta.type, meta.profile) == ("application/xml", "http://www.isotc211.org/2005/gmd")
    assert all(link.source == "linkset" for link in r.links)


def test_text_linkset_with_newlines() -> None:
    body = (
        f'<https://doi.org/10.5061/dryad.5d23f> ; rel="cite-as" ; anchor="{PAGE}" ,\n'
        f'<https://repo.example/file/7507/2> ; rel="item" ; type="text/csv" ;\n'
        f'   anchor="{PAGE}" ,\n'
        f'<{PAGE}> ; rel="collection" ; type="text/html" ;'
        f' anchor="https://repo.example/file/7507/2"\n'
    ).encode()
    r = parse_linkset(body, "application/linkset", LS)
    assert r.findings == []
    assert [(link.rel, link.anchor) for link in r.links] == [
        ("cite-as", PAGE),
        ("item", PAGE),
        ("collection", "https://repo.example/file/7507/2"),
    ]


def test_text_linkset_without_commas_like_a2a_case_28() -> None:
    body = (
        f'<https://doi.org/10.1/x> ; rel="cite-as" ; anchor="{PAGE}"\n'
        f'<https://repo.example/f.csv> ; rel="item" ; type="text/csv" ; anchor="{PAGE}"\n'
    )
    r = parse_linkset(body.encode(), "application/linkset", LS)
    assert len(r.links) == 2
    assert codes(r) == ["signposting/link-missing-comma"]


def test_misspelled_media_type_is_read_with_a_finding() -> None:
    r = parse_linkset(json.dumps(FAIR_SP_JSON).encode(), "application/json+linkset", LS)
    assert len(r.links) == 6
    assert codes(r) == ["signposting/linkset-media-type"]


def test_served_as_plain_json_or_text_is_sniffed() -> None:
    r = parse_linkset(json.dumps(FAIR_SP_JSON).encode(), "application/json", LS)
    assert len(r.links) == 6 and codes(r) == ["signposting/linkset-media-type"]
    r = parse_linkset(
        b'<https://a.org/x>; rel=item; anchor="' + PAGE.encode() + b'"', "text/plain", LS
    )
    assert len(r.links) == 1 and codes(r) == ["signposting/linkset-media-type"]


def test_dataverse_style_wrapper_and_string_attributes() -> None:
    data = {
        "status": "OK",
        "data": {
            "linkset": [
                {
                    "anchor": PAGE,
                    "describedby": [
                        {
                            "href": "https://repo.example/api/export?format=ddi",
                            "type": "application/xml",
                            "profile": "http://www.ddialliance.org",
                        }
                    ],
                    "license": {"href": "https://spdx.org/licenses/CC0-1.0"},
                }
            ]
        },
    }
    r = parse_linkset(json.dumps(data).encode(), "application/linkset+json", LS)
    assert {link.rel for link in r.links} == {"describedby", "license"}
    assert next(link for link in r.links if link.rel == "describedby").profile == (
        "http://www.ddialliance.org"
    )
    assert codes(r) == ["signposting/linkset-wrapped", "signposting/linkset-invalid"]


def test_missing_and_relative_anchors() -> None:
    data = {
        "linkset": [
            {"item": [{"href": "/f.csv", "type": "text/csv"}]},
            {"anchor": "/page/7", "cite-as": [{"href": "https://doi.org/10.1/x"}]},
        ]
    }
    r = parse_linkset(json.dumps(data).encode(), "application/linkset+json", LS)
    assert [(link.anchor, link.href) for link in r.links] == [
        (LS, "https://repo.example/f.csv"),
        (PAGE, "https://doi.org/10.1/x"),
    ]
    assert codes(r) == ["signposting/linkset-anchor", "signposting/linkset-anchor"]


def test_broken_json_and_hostile_nesting() -> None:
    assert codes(parse_linkset(b'{"linkset": [', "application/linkset+json", LS)) == [
        "signposting/linkset-invalid"
    ]
    deep = b"[" * 100_000 + b"]" * 100_000
    assert codes(parse_linkset(deep, "application/linkset+json", LS)) == [
        "signposting/linkset-invalid"
    ]
    r = parse_linkset(
        b'{"linkset": [{"anchor": 5, "item": [{"nohref": 1}, 7]}, 3]}',
        "application/linkset+json",
        LS,
    )
    assert r.links == [] and "signposting/linkset-invalid" in codes(r)


def test_cap() -> None:
    data = {"linkset": [{"anchor": PAGE, "item": [{"href": f"/f{i}"} for i in range(50)]}]}
    r = parse_linkset(json.dumps(data).encode(), "application/linkset+json", LS, max_links=7)
    assert len(r.links) == 7 and "signposting/too-many-links" in codes(r)


def test_anchors_that_miss_the_landing_page() -> None:
    data = {
        "linkset": [
            {
                "anchor": "http://repo.example/page/7",
                "cite-as": [{"href": "https://doi.org/10.1/x"}],
            }
        ]
    }
    r = parse_linkset(json.dumps(data).encode(), "application/linkset+json", LS)
    r.findings.extend(check_anchors(r.links, LS, [PAGE]))
    assert codes(r) == ["signposting/linkset-not-for-page"]
    ok = parse_linkset(json.dumps(FAIR_SP_JSON).encode(), "application/linkset+json", LS)
    ok.findings.extend(check_anchors(ok.links, LS, [PAGE + "#top"]))
    assert ok.findings == []


def test_linkset_link_needs_a_type() -> None:
    link = Link(href=LS, rel="linkset", anchor=PAGE, source="header")
    assert [f.code for f in check_linkset_link(link)] == ["signposting/linkset-type-missing"]
    typed = Link(
        href=LS, rel="linkset", anchor=PAGE, source="header", type="application/linkset+json"
    )
    assert check_linkset_link(typed) == []
    wrong = Link(href=LS, rel="linkset", anchor=PAGE, source="html", type="application/json")
    assert [f.code for f in check_linkset_link(wrong)] == ["signposting/linkset-media-type"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["linkset", "anchor", "href", "type", "item", "profile", "data", "title*"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=30,
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(_json, st.sampled_from(["application/linkset+json", "application/json", "text/plain"]))
@settings(max_examples=300, deadline=None)
def test_json_linksets_never_raise(data: object, ctype: str) -> None:
    r = parse_linkset(json.dumps(data).encode(), ctype, LS)
    assert all(f.code.startswith("signposting/") for f in r.findings)
    assert all(link.href and link.anchor for link in r.links)


@given(st.binary(max_size=300))
@settings(max_examples=300, deadline=None)
def test_any_bytes_as_linkset_never_raise(body: bytes) -> None:
    parse_linkset(body, "application/linkset", LS)
    parse_linkset(body, "application/linkset+json", LS)
