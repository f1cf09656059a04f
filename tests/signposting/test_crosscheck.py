"""Signposts against the Dataset: each rule, on JSON-LD run through the real stages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.dataone.requirements import check_requirements as dataone_check
from adapter.findings import catalogue
from adapter.http.fetcher import Fetcher
from adapter.jsonld.normalize import normalize
from adapter.models import DatasetResult, Link, LinkSource
from adapter.page.extract import JsonLdBlock
from adapter.signposting.crosscheck import crosscheck_dataset, primary_dataset
from adapter.signposting.datasetlinks import dataset_links
from adapter.signposting.follow import FOLLOW_CODES
from adapter.signposting.identities import iri_key, license_key, orcid, spdx_uri
from adapter.signposting.linkheader import parse_link_fields
from adapter.signposting.proposal import propose
from adapter.signposting.sources import check_sources
from adapter.signposting.stage import crosscheck

PAGE = "https://repo.example/dataset/7"
DOI = "10.5061/dryad.5d23f"


def dataset_from(doc: dict[str, Any], page: str = PAGE) -> DatasetResult:
    found, _ = normalize([JsonLdBlock(1, doc, "json-ld")], base_url=page)
    f = found[0]
    c = dataone_check(f.framed, page)
    return DatasetResult(
        id=f.id,
        doi=c.doi,
        identifiers=c.identifiers,
        encoding=c.encoding,
        distributions=c.distributions,
        framed=f.framed,
        original=f.original,
    )


def soso(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "@context": {"@vocab": "https://schema.org/"},
        "@type": "Dataset",
        "@id": f"https://doi.org/{DOI}",
        "name": "Soil cores",
        "description": "Cores.",
        "url": PAGE,
        "identifier": {
            "@type": "PropertyValue",
            "propertyID": "https://registry.identifiers.org/registry/doi",
            "value": f"doi:{DOI}",
            "url": f"https://doi.org/{DOI}",
        },
        "creator": [
            {
                "@type": "Person",
                "@id": "http://orcid.org/0000-0002-1825-0097",
                "name": "Josiah Carberry",
            }
        ],
        "license": "https://spdx.org/licenses/CC-BY-4.0.html",
        "subjectOf": {
            "@type": "DataDownload",
            "contentUrl": "https://repo.example/meta/7.xml",
            "encodingFormat": ["application/xml", "https://eml.ecoinformatics.org/eml-2.2.0"],
            "dateModified": "2024-01-01",
        },
        "distribution": [
            {
                "@type": "DataDownload",
                "contentUrl": "https://repo.example/files/7/cores.csv",
                "encodingFormat": "text/csv",
            }
        ],
    }
    doc.update(extra)
    return doc


GOOD_HEADER = (
    f'<https://doi.org/{DOI}>; rel="cite-as", '
    '<https://schema.org/Dataset>; rel="type", <https://schema.org/AboutPage>; rel="type", '
    '<https://orcid.org/0000-0002-1825-0097>; rel="author", '
    '<https://spdx.org/licenses/CC-BY-4.0>; rel="license", '
    '<https://repo.example/meta/7.xml>; rel="describedby"; type="application/xml"; '
    'profile="https://eml.ecoinformatics.org/eml-2.2.0", '
    '<https://repo.example/files/7/cores.csv>; rel="item"; type="text/csv"'
)


def links(header: str, source: LinkSource = "header") -> list[Link]:
    parsed = parse_link_fields([header], PAGE, source=source)
    assert parsed.findings == []
    return parsed.links


def codes(doc: dict[str, Any], header: str, *more: Link) -> set[str]:
    page, found = crosscheck_dataset(dataset_from(doc), [*links(header), *more], [PAGE])
    return {f.code for f in page + found}


def test_good_page_has_no_findings() -> None:
    assert codes(soso(), GOOD_HEADER) == set()


def test_no_signposting_at_all_is_one_finding() -> None:
    assert codes(soso(), "") == {"signposting/absent"}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (f'<https://doi.org/{DOI}>; rel="cite-as", ', "", "signposting/cite-as-missing"),
        (
            f'<https://doi.org/{DOI}>; rel="cite-as", ',
            f'<https://doi.org/{DOI}>; rel="cite-as", '
            "<https://repo.example/dataset/7>; rel=cite-as, ",
            "signposting/cite-as-several",
        ),
        (
            f"<https://doi.org/{DOI}>",
            "<https://doi.org/10.5061/dryad.other>",
            "signposting/cite-as-mismatch",
        ),
        (f"<https://doi.org/{DOI}>", f"<http://dx.doi.org/{DOI}>", "signposting/cite-as-form"),
        (
            '<https://schema.org/Dataset>; rel="type", '
            '<https://schema.org/AboutPage>; rel="type", ',
            "",
            "signposting/type-missing",
        ),
        (
            "<https://schema.org/Dataset>",
            "<https://schema.org/ScholarlyArticle>",
            "signposting/type-not-dataset",
        ),
        ('<https://schema.org/AboutPage>; rel="type", ', "", "signposting/type-aboutpage-missing"),
        (
            "<https://orcid.org/0000-0002-1825-0097>",
            "<https://orcid.org/0000-0001-5109-3700>",
            "signposting/author-not-in-dataset",
        ),
        (
            "<https://spdx.org/licenses/CC-BY-4.0>",
            "<https://spdx.org/licenses/CC0-1.0>",
            "signposting/license-mismatch",
        ),
        (
            "<https://spdx.org/licenses/CC-BY-4.0>",
            "<https://spdx.org/licenses/CC-BY-4.0.html>",
            "signposting/license-form",
        ),
        (
            '<https://spdx.org/licenses/CC-BY-4.0>; rel="license", ',
            '<https://spdx.org/licenses/CC-BY-4.0>; rel="license", '
            "<https://spdx.org/licenses/MIT>; rel=license, ",
            "signposting/license-several",
        ),
        (
            '<https://spdx.org/licenses/CC-BY-4.0>; rel="license", ',
            "",
            "signposting/license-not-linked",
        ),
        (
            '; type="application/xml"; profile="https://eml.ecoinformatics.org/eml-2.2.0"',
            "",
            "signposting/describedby-type-missing",
        ),
        (
            '; profile="https://eml.ecoinformatics.org/eml-2.2.0"',
            "",
            "signposting/describedby-profile-missing",
        ),
        (
            'type="application/xml"',
            'type="application/json"',
            "signposting/describedby-type-mismatch",
        ),
        ("eml-2.2.0", "eml-2.1.1", "signposting/describedby-profile-mismatch"),
        (
            "<https://repo.example/meta/7.xml>",
            "<https://repo.example/meta/7.ttl>",
            "signposting/describedby-not-linked",
        ),
        (
            "<https://repo.example/meta/7.xml>",
            "<https://repo.example/meta/7.ttl>",
            "signposting/describedby-not-in-dataset",
        ),
        ('; rel="item"; type="text/csv"', '; rel="item"', "signposting/item-type-missing"),
        ('type="text/csv"', 'type="application/zip"', "signposting/item-type-mismatch"),
        (
            "<https://repo.example/files/7/cores.csv>",
            "<https://repo.example/files/7/cores.zip>",
            "signposting/item-not-linked",
        ),
        (
            "<https://repo.example/files/7/cores.csv>",
            "<https://repo.example/files/7/cores.zip>",
            "signposting/item-not-in-dataset",
        ),
    ],
)
def test_each_rule(old: str, new: str, expected: str) -> None:
    assert old in GOOD_HEADER
    assert expected in codes(soso(), GOOD_HEADER.replace(old, new))


def test_describedby_missing() -> None:
    header = GOOD_HEADER.split(", <https://repo.example/meta/7.xml>")[0]
    assert "signposting/describedby-missing" in codes(soso(), header)


def test_author_not_linked_and_orcid_http_https_are_the_same() -> None:
    doc = soso(
        creator=[
            {"@type": "Person", "@id": "https://orcid.org/0000-0002-1825-0097"},
            {
                "@type": "Person",
                "name": "Second",
                "identifier": {
                    "@type": "PropertyValue",
                    "propertyID": "ORCID",
                    "value": "0000-0001-5109-3700",
                },
            },
        ]
    )
    found = codes(doc, GOOD_HEADER)
    assert found == {"signposting/author-not-linked"}


def test_cite_as_doi_only_when_dataset_has_no_doi() -> None:
    doc = soso(identifier="local-17")
    doc["@id"] = PAGE
    assert "signposting/cite-as-doi-only" in codes(doc, GOOD_HEADER)


def test_cite_as_against_id_when_no_doi_anywhere() -> None:
    doc = soso(identifier="local-17")
    doc["@id"] = "https://hdl.handle.net/1234/7"
    header = GOOD_HEADER.replace(f"<https://doi.org/{DOI}>", "<https://hdl.handle.net/1234/7>")
    assert "signposting/cite-as-mismatch" not in codes(doc, header)
    header = GOOD_HEADER.replace(f"<https://doi.org/{DOI}>", "<https://hdl.handle.net/1234/8>")
    assert "signposting/cite-as-mismatch" in codes(doc, header)


def test_cite_as_against_a_doi_id() -> None:
    doc = soso()
    doc["@id"] = "https://doi.org/10.5061/dryad.elsewhere"
    assert "signposting/cite-as-mismatch" in codes(doc, GOOD_HEADER)


def test_type_vs_additional_type() -> None:
    header = GOOD_HEADER + ', <https://w3id.org/cdif/Thing>; rel="type"'
    assert "signposting/type-not-in-dataset" in codes(soso(), header)
    doc = soso(additionalType=["https://w3id.org/cdif/Thing"])
    assert "signposting/type-not-in-dataset" not in codes(doc, header)


def test_collection_vs_catalog_is_part_of_and_related_link() -> None:
    header = GOOD_HEADER + ', <https://repo.example/collections/soils>; rel="collection"'
    assert "signposting/collection-mismatch" in codes(soso(), header)
    for extra in (
        {
            "includedInDataCatalog": {
                "@type": "DataCatalog",
                "url": "https://repo.example/collections/soils",
            }
        },
        {"isPartOf": "https://repo.example/collections/soils"},
        {
            "relatedLink": {
                "@type": "LinkRole",
                "linkRelationship": "IsPartOf",
                "target": {"@type": "EntryPoint", "url": "https://repo.example/collections/soils"},
            }
        },
    ):
        assert "signposting/collection-mismatch" not in codes(soso(**extra), header), extra


def test_item_vs_cdif_related_link_has_part() -> None:
    doc = soso(
        relatedLink=[
            {
                "@type": "LinkRole",
                "linkRelationship": "hasPart",
                "target": {
                    "@type": "EntryPoint",
                    "encodingFormat": "image/png",
                    "url": "https://repo.example/files/7/map.png",
                },
            }
        ]
    )
    assert "signposting/item-not-linked" in codes(doc, GOOD_HEADER)
    header = GOOD_HEADER + ', <https://repo.example/files/7/map.png>; rel="item"; type="image/png"'
    assert codes(doc, header) == set()


def test_describes_from_metadata_record_and_cdif_catalog_record() -> None:
    doc = soso(
        subjectOf=[
            {
                "@type": "DataDownload",
                "contentUrl": "https://repo.example/meta/7.xml",
                "encodingFormat": ["application/xml", "https://eml.ecoinformatics.org/eml-2.2.0"],
                "dateModified": "2024-01-01",
            },
            {
                "@type": "Dataset",
                "@id": "https://repo.example/record/7",
                "additionalType": "dcat:CatalogRecord",
                "about": {"@id": f"https://doi.org/{DOI}"},
            },
        ]
    )
    back = Link(
        href=PAGE, rel="describes", anchor="https://repo.example/meta/7.xml", source="linkset"
    )
    assert codes(doc, GOOD_HEADER, back) == set()
    wrong = Link(
        href="https://repo.example/dataset/8",
        rel="describes",
        anchor="https://repo.example/record/7",
        source="linkset",
    )
    assert "signposting/describes-mismatch" in codes(doc, GOOD_HEADER, wrong)
    page_says = GOOD_HEADER + ', <https://repo.example/dataset/9>; rel="describes"'
    assert "signposting/describes-mismatch" in codes(doc, page_says)


def test_links_of_other_anchors_do_not_count_for_the_page() -> None:
    other = Link(
        href="https://doi.org/10.1/other",
        rel="cite-as",
        anchor="https://repo.example/files/7/cores.csv",
        source="linkset",
    )
    assert codes(soso(), GOOD_HEADER, other) == set()


def test_several_datasets_check_the_one_cite_as_names() -> None:
    first = dataset_from(soso(identifier="doi:10.1/first", **{"@id": "https://repo.example/a"}))
    second = dataset_from(soso())
    chosen, note = primary_dataset([first, second], links(GOOD_HEADER), [PAGE])
    assert chosen is second and note is not None and note.code == "signposting/several-datasets"


def test_sources_disagree_and_conflicts() -> None:
    header = links(
        f"<https://doi.org/{DOI}>; rel=cite-as, <https://repo.example/m.xml>; "
        'rel=describedby; type="application/xml"'
    )
    html = links(
        "<https://doi.org/10.1/else>; rel=cite-as, <https://repo.example/m.xml>; "
        'rel=describedby; type="text/xml"',
        source="html",
    )
    found = {f.code for f in check_sources([*header, *html], PAGE)}
    assert found == {"signposting/sources-disagree", "signposting/conflicting-attributes"}


def test_signmap_vs_page() -> None:
    page_links = links(
        f"<https://doi.org/{DOI}>; rel=cite-as, <https://repo.example/a.csv>; rel=item"
    )
    signmap = [
        Link(href="https://doi.org/10.1/else", rel="cite-as", anchor=PAGE, source="signmap"),
        Link(href="https://repo.example/b.csv", rel="item", anchor=PAGE, source="signmap"),
        Link(href="https://repo.example/m.xml", rel="describedby", anchor=PAGE, source="signmap"),
    ]
    found = [f.code for f in check_sources([*page_links, *signmap], PAGE)]
    assert sorted(found) == [
        "signposting/signmap-differs",
        "signposting/signmap-missing-on-page",
        "signposting/signmap-missing-on-page",
    ]


def test_linkset_may_list_more_items_and_authors_than_the_header() -> None:
    header = links("<https://repo.example/a.csv>; rel=item")
    linkset = [
        Link(href=h, rel="item", anchor=PAGE, source="linkset")
        for h in ("https://repo.example/a.csv", "https://repo.example/b.csv")
    ]
    assert check_sources([*header, *linkset], PAGE) == []


def test_identities() -> None:
    assert orcid("http://orcid.org/0000-0002-1825-0097") == "0000-0002-1825-0097"
    assert orcid("0000-0002-1825-009x") == "0000-0002-1825-009X"
    assert iri_key("http://orcid.org/0000-0002-1825-0097/") == iri_key(
        "https://orcid.org/0000-0002-1825-0097"
    )
    keys = {
        license_key(v)
        for v in (
            "https://spdx.org/licenses/CC-BY-4.0",
            "http://spdx.org/licenses/CC-BY-4.0.html",
            "CC-BY-4.0",
            "https://creativecommons.org/licenses/by/4.0/legalcode",
        )
    }
    assert keys == {"spdx:cc-by-4.0"}
    assert license_key("https://creativecommons.org/publicdomain/zero/1.0/") == "spdx:cc0-1.0"
    assert (
        spdx_uri("https://creativecommons.org/publicdomain/zero/1.0/")
        == "https://spdx.org/licenses/CC0-1.0"
    )
    assert license_key("https://example.org/my-license") != license_key("https://example.org/other")


def test_cdif_creator_list_and_identifier_shapes() -> None:
    doc = soso(
        creator={
            "@list": [
                {
                    "@type": "Person",
                    "name": "A",
                    "identifier": "https://orcid.org/0000-0001-2345-6789",
                },
                {
                    "@type": "Person",
                    "name": "B",
                    "identifier": {
                        "@type": "PropertyValue",
                        "propertyID": "https://registry.identifiers.org/registry/orcid",
                        "url": "https://orcid.org/0000-0002-1825-0097",
                    },
                },
            ]
        }
    )
    people = dataset_links(dataset_from(doc), PAGE).people
    assert [orcid(p.ids[0]) for p in people] == ["0000-0001-2345-6789", "0000-0002-1825-0097"]


def test_proposal_is_derived_from_the_dataset_and_parses_back() -> None:
    proposal = propose(dataset_from(soso()), PAGE)
    parsed = parse_link_fields([proposal.link_header], PAGE)
    assert parsed.findings == []
    assert list(proposal.links) == parsed.links
    got = {(x.rel, x.href, x.type, x.profile) for x in parsed.links}
    assert ("cite-as", f"https://doi.org/{DOI}", None, None) in got
    assert ("author", "https://orcid.org/0000-0002-1825-0097", None, None) in got
    assert ("license", "https://spdx.org/licenses/CC-BY-4.0", None, None) in got
    assert (
        "describedby",
        "https://repo.example/meta/7.xml",
        "application/xml",
        "https://eml.ecoinformatics.org/eml-2.2.0",
    ) in got
    assert ("item", "https://repo.example/files/7/cores.csv", "text/csv", None) in got
    assert '<link rel="cite-as" href="https://doi.org/10.5061/dryad.5d23f">' in proposal.html_links
    # the proposal passes every cross-check it was derived for
    page, found = crosscheck_dataset(dataset_from(soso()), parsed.links, [PAGE])
    assert page + found == []


_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(
        [
            "https://orcid.org/0000-0002-1825-0097",
            "doi:10.1/x",
            "hasPart",
            "IsPartOf",
            "",
            "CC0-1.0",
            "/files/a.csv",
            "text/csv",
            "_:b0",
        ]
    )
)
_keys = st.sampled_from(
    [
        "@id",
        "@type",
        "@list",
        "@value",
        "url",
        "identifier",
        "creator",
        "author",
        "license",
        "subjectOf",
        "about",
        "relatedLink",
        "linkRelationship",
        "target",
        "isPartOf",
        "includedInDataCatalog",
        "additionalType",
        "value",
        "sameAs",
        "contentUrl",
        "encodingFormat",
    ]
)
_framed = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=40,
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(st.dictionaries(_keys, _framed, max_size=8), st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_any_dataset_shape_and_links_never_raise(framed: dict[str, Any], header: str) -> None:
    dataset = DatasetResult(id=None, doi=None, framed=framed)
    found = parse_link_fields([header], PAGE).links
    found += links(GOOD_HEADER)
    crosscheck_dataset(dataset, found, [PAGE])
    propose(dataset, PAGE)


def test_the_stage_returns_its_findings_and_changes_no_dataset() -> None:
    first = dataset_from(soso(identifier="doi:10.1/first", **{"@id": "https://repo.example/a"}))
    second = dataset_from(soso(license="https://example.org/other-licence"))
    with Fetcher() as fetcher:
        checked = crosscheck([first, second], links(GOOD_HEADER), [PAGE], fetcher)
    assert checked.dataset is second  # the one cite-as names
    assert "signposting/several-datasets" in {f.code for f in checked.findings}
    assert "signposting/license-mismatch" in {f.code for f in checked.dataset_findings}
    assert first.findings == [] and second.findings == []  # the pipeline adds them


def test_follow_codes_are_every_follow_finding() -> None:
    follow = {t.code for t in catalogue() if t.code.startswith("signposting/follow-")}
    assert follow == FOLLOW_CODES
