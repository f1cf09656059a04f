"""DataONE rules on framed Datasets, written the way normalize hands them over."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.dataone.requirements import check_requirements, enforce_required
from adapter.findings import Severity, catalogue

URL = "https://repo.example/dataset/1"

ISO = "http://www.isotc211.org/2005/gmd"


def good(**overrides: Any) -> dict[str, Any]:
    ds: dict[str, Any] = {
        "@id": "https://repo.example/dataset/1#dataset",
        "@type": "Dataset",
        "name": "Fish counts",
        "description": "Counts of fish.",
        "url": {"@id": URL},
        "dateModified": "2024-05-01",
        "identifier": {
            "@id": "https://doi.org/10.5066/F7VX0DMQ",
            "@type": "PropertyValue",
            "propertyID": "https://registry.identifiers.org/registry/doi",
            "value": "doi:10.5066/F7VX0DMQ",
            "url": {"@id": "https://doi.org/10.5066/F7VX0DMQ"},
        },
        "encoding": {
            "@type": "MediaObject",
            "contentUrl": {"@id": "https://repo.example/iso/1.xml"},
            "encodingFormat": ISO,
            "dateModified": "2024-05-01",
        },
        "distribution": [
            {
                "@type": "DataDownload",
                "contentUrl": {"@id": "https://repo.example/data/1.csv"},
                "encodingFormat": "text/csv",
            }
        ],
    }
    ds.update(overrides)
    return {k: v for k, v in ds.items() if v is not None}


def codes(ds: dict[str, Any]) -> set[str]:
    return {f.code for f in check_requirements(ds, URL).findings}


def test_a_complete_dataset_has_no_findings() -> None:
    result = check_requirements(good(), URL)
    assert result.findings == []
    assert result.doi == "10.5066/f7vx0dmq"
    assert result.identifiers == ["doi:10.5066/F7VX0DMQ"]
    assert [r.content_url for r in result.encoding] == ["https://repo.example/iso/1.xml"]
    assert result.encoding[0].encoding_format == (ISO,)
    assert result.distributions[0].encoding_format == ("text/csv",)


@pytest.mark.parametrize(
    "identifier",
    [
        "doi:10.5066/F7VX0DMQ",
        "https://doi.org/10.5066/f7vx0dmq",
        "http://dx.doi.org/10.5066/F7VX0DMQ",
        "10.5066/F7VX0DMQ",
        {"@id": "https://doi.org/10.5066/F7VX0DMQ"},
        {"@type": "PropertyValue", "propertyID": "DOI", "value": "10.5066/F7VX0DMQ"},
        {"@type": "PropertyValue", "url": "https://doi.org/10.5066%2FF7VX0DMQ"},
        ["ark:/13030/x", "info:doi/10.5066/F7VX0DMQ"],
        {"@value": "DOI: 10.5066/F7VX0DMQ", "@language": "en"},
    ],
)
def test_doi_in_any_spelling(identifier: Any) -> None:
    result = check_requirements(good(identifier=identifier), URL)
    assert result.doi == "10.5066/f7vx0dmq"
    assert not [f for f in result.findings if f.severity is Severity.ERROR]


@pytest.mark.parametrize(
    ("identifier", "code"),
    [
        (None, "dataone/identifier-missing"),
        ("doi:null", "dataone/identifier-empty"),
        ("", "dataone/identifier-empty"),
        (
            {"@type": "PropertyValue", "propertyID": "DOI", "value": "  "},
            "dataone/identifier-empty",
        ),
        ("Fish counts 2019", "dataone/identifier-not-doi"),
        (["ark:/13030/x", "local-42"], "dataone/identifier-not-doi"),
    ],
)
def test_identifier_errors(identifier: Any, code: str) -> None:
    result = check_requirements(good(identifier=identifier), URL)
    found = {f.code: f for f in result.findings}
    assert code in found
    # a placeholder is wrong under every profile; a missing or non-DOI identifier is a
    # warning that the profile judges (the dataone profile blocks it: test_profiles.py)
    blocking = code == "dataone/identifier-empty"
    assert (found[code].severity is Severity.ERROR) is blocking
    where = found[code].where
    assert where and where.startswith("$.identifier")
    assert result.doi is None


def test_doi_only_in_same_as_is_a_warning_and_still_reported() -> None:
    ds = good(identifier="local-42", sameAs="https://doi.org/10.1234/ABC")
    result = check_requirements(ds, URL)
    assert result.doi == "10.1234/abc"
    by_code = {f.code: f for f in result.findings}
    assert by_code["dataone/doi-not-in-identifier"].severity is Severity.WARNING
    assert by_code["dataone/doi-not-in-identifier"].where == "$.sameAs"
    assert "dataone/identifier-not-doi" not in by_code


@pytest.mark.parametrize(
    "where,extra",
    [
        ("$['@id']", {"@id": "https://doi.org/10.1234/ABC"}),
        ("$.url", {"url": "https://doi.org/10.1234/ABC"}),
        ("$.sameAs", {"sameAs": "doi:10.1234/abc"}),
    ],
)
@pytest.mark.parametrize("identifier", [None, "OTLAS.052019.32611.1", "doi:null"])
def test_a_doi_outside_identifier_is_one_rule_wherever_it_sits(
    where: str, extra: dict[str, Any], identifier: Any
) -> None:
    # OpenTopography puts the DOI in url; others in @id; identifier missing or local
    ds = {**good(identifier=identifier), **extra}
    result = check_requirements(ds, URL)
    assert result.doi == "10.1234/abc"
    found = {f.code: f for f in result.findings}
    assert found["dataone/doi-not-in-identifier"].severity is Severity.WARNING
    assert found["dataone/doi-not-in-identifier"].where == where
    assert not found.keys() & {"dataone/identifier-missing", "dataone/identifier-not-doi"}


def test_several_dois() -> None:
    ds = good(identifier=["doi:10.1/a", "doi:10.1/b"], sameAs="https://doi.org/10.1/A")
    result = check_requirements(ds, URL)
    assert result.doi == "10.1/a"
    several = [f for f in result.findings if f.code == "dataone/several-dois"]
    assert len(several) == 1 and "10.1/b" in several[0].message


def test_same_doi_spelled_twice_is_one_doi() -> None:
    ds = good(identifier=["doi:10.1/A", "https://doi.org/10.1/a"], sameAs="10.1/a")
    assert "dataone/several-dois" not in codes(ds)


@pytest.mark.parametrize(
    ("prop", "code", "severity"),
    [
        # warnings now: the node's requirement profile makes them block (dataone/profile-unmet)
        ("name", "dataone/name-missing", Severity.WARNING),
        ("description", "dataone/description-missing", Severity.WARNING),
        ("url", "dataone/url-missing", Severity.WARNING),  # the landing page is known
        ("dateModified", "dataone/date-modified-missing", Severity.WARNING),
        ("@id", "dataone/id-missing", Severity.WARNING),
    ],
)
def test_essentials(prop: str, code: str, severity: Severity) -> None:
    ds = good()
    del ds[prop]
    found = [f for f in check_requirements(ds, URL).findings if f.code == code]
    assert found and found[0].severity is severity


def test_blank_node_dataset_has_no_id() -> None:
    assert "dataone/id-missing" in codes(good(**{"@id": "_:b0"}))


def test_subject_of_metadata_link_counts_as_encoding() -> None:
    ds = good(
        encoding=None,
        subjectOf=[
            {"@type": "CreativeWork", "name": "A paper about it"},
            {
                "@type": "DataDownload",
                "encodingFormat": ["application/xml", "https://eml.ecoinformatics.org/eml-2.2.0"],
                "contentURL": "https://repo.example/eml/1.xml",
                "dateModified": "2019-06-12T14:44:15Z",
            },
        ],
    )
    result = check_requirements(ds, URL)
    assert [(r.property, r.content_url) for r in result.encoding] == [
        ("subjectOf", "https://repo.example/eml/1.xml")
    ]
    found = {f.code: f for f in result.findings}
    assert set(found) == {"dataone/wrong-property"}
    assert found["dataone/wrong-property"].where == "$.subjectOf[1].contentURL"
    assert "contentUrl" in found["dataone/wrong-property"].message


def test_encoding_problems() -> None:
    assert "dataone/encoding-missing" in codes(good(encoding=None))
    bad_format = good(
        encoding={
            "contentUrl": "https://x/1.xml",
            "encodingFormat": "application/xml",
            "dateModified": "2024",
        }
    )
    assert codes(bad_format) == {"dataone/encoding-format-unknown"}
    incomplete = codes(good(encoding={"@type": "MediaObject", "encodingFormat": ISO}))
    assert incomplete == {"dataone/encoding-incomplete"}


def test_distribution_mistakes_name_the_right_property() -> None:
    ds = good(
        distribution=[
            {"@type": "DataDownload", "contentURL": "https://x/a.csv", "fileFormat": "text/csv"},
            {"@type": "Distribution", "contentUrl": "https://x/b.csv"},
            {
                "@type": "DataDownload",
                "contentUrl": "https://x/c.csv",
                "encodingFormat": "text/csv",
                "identifier": "",
            },
        ]
    )
    result = check_requirements(ds, URL)
    wrong = sorted(f.where or "" for f in result.findings if f.code == "dataone/wrong-property")
    assert wrong == ["$.distribution[0].contentURL", "$.distribution[0].fileFormat"]
    assert result.distributions[0].content_url == "https://x/a.csv"
    assert result.distributions[0].encoding_format == ("text/csv",)
    incomplete = {
        f.where: f.message for f in result.findings if f.code == "dataone/distribution-incomplete"
    }
    assert set(incomplete) == {"$.distribution[1]", "$.distribution[2]"}
    assert "encodingFormat" in incomplete["$.distribution[1]"]
    assert "DataDownload" in incomplete["$.distribution[1]"]
    assert "identifier" in incomplete["$.distribution[2]"]
    assert "dataone/distribution-missing" in codes(good(distribution=None))


def test_required_turns_warnings_into_an_error() -> None:
    findings = check_requirements(good(encoding=None), URL).findings
    assert not enforce_required(findings, frozenset(), URL)
    [err] = enforce_required(findings, {"encoding"}, URL)
    assert err.code == "dataone/required-check-failed"
    assert err.severity is Severity.ERROR
    assert "dataone/encoding-missing" in err.message
    assert not enforce_required(check_requirements(good(), URL).findings, {"encoding", "id"}, URL)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "@id",
                    "@type",
                    "@value",
                    "@list",
                    "value",
                    "url",
                    "propertyID",
                    "contentUrl",
                    "contentURL",
                    "encodingFormat",
                    "fileFormat",
                    "name",
                    "identifier",
                    "dateModified",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)
PROPS = [
    "@id",
    "name",
    "description",
    "url",
    "sameAs",
    "identifier",
    "dateModified",
    "encoding",
    "subjectOf",
    "distribution",
]


@cache
def declared_codes() -> frozenset[str]:
    """Every declared code: `catalogue()` imports every module of the package to list them
    (2 ms a call once they are loaded), so once for all the examples."""
    return frozenset(t.code for t in catalogue())


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(PROPS), json_values, max_size=10))
def test_any_framed_shape_gives_only_declared_findings(dataset: dict[str, Any]) -> None:
    result = check_requirements(dataset, URL)
    assert {f.code for f in result.findings} <= declared_codes()
    assert result.doi is None or result.doi.startswith("10.")
    assert all(isinstance(i, str) for i in result.identifiers)


def test_a_bare_code_prefix_makes_only_warnings_blocking() -> None:
    findings = check_requirements(good(distribution=None, dateModified=None), URL).findings
    codes = {f.code: f.severity for f in findings}
    assert codes == {
        "dataone/distribution-missing": Severity.INFO,
        "dataone/date-modified-missing": Severity.WARNING,
    }
    [err] = enforce_required(findings, {"dataone/d"}, URL)
    assert "dataone/date-modified-missing" in err.message
    assert "distribution-missing" not in err.message
    [err] = enforce_required(findings, {"distribution"}, URL)  # a named check counts info too
    assert "dataone/distribution-missing" in err.message


def test_a_missing_url_names_the_landing_page_the_adapter_uses() -> None:
    ds = good()
    del ds["url"]
    [found] = [f for f in check_requirements(ds, URL).findings if f.code == "dataone/url-missing"]
    assert f'"url": "{URL}"' in found.message and found.where == "$.url"
