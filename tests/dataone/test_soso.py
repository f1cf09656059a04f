"""science-on-schema.org recommendations on framed Datasets, as normalize hands them over."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.dataone.soso.codes import ABSENT, BY_PROPERTY, PROPERTIES
from adapter.dataone.soso.dates import coverage
from adapter.dataone.soso.licence import spdx_for
from adapter.dataone.soso.people import orcid_check_digit, orcid_checksum_ok
from adapter.dataone.soso.rules import MAX_PER_CODE, check_soso
from adapter.findings import Finding, Severity, catalogue

URL = "https://repo.example/dataset/7"
ORCID = "https://orcid.org/0000-0002-1825-0097"  # ORCID's own example iD: a valid check digit


def good(**overrides: Any) -> dict[str, Any]:
    ds: dict[str, Any] = {
        "@id": "https://repo.example/dataset/7#dataset",
        "@type": "Dataset",
        "name": "Larval fish, Gulf of Maine",
        "description": "Counts of larval fish from quarterly bongo net tows in the Gulf of "
        "Maine, 2017 to 2019, with station positions and tow volumes.",
        "license": {"@id": "https://spdx.org/licenses/CC-BY-4.0"},
        "creator": {"@list": [{"@id": ORCID, "@type": "Person", "name": "Josiah Carberry"}]},
        "spatialCoverage": {
            "@type": "Place",
            "geo": {"@type": "GeoShape", "box": "41.5 -70.5 44.5 -66.0"},
        },
        "temporalCoverage": "2017-03-01/2019-11-30",
        "keywords": ["larval fish", "ichthyoplankton"],
        "variableMeasured": {"@type": "PropertyValue", "name": "larval count"},
        "publisher": {"@type": "Organization", "name": "Ocean Data Repository"},
        "version": "2",
        "datePublished": "2020-03-01",
        "isAccessibleForFree": True,
        "funding": {
            "@type": "MonetaryGrant",
            "identifier": "OCE-1234567",
            "funder": {"@type": "Organization", "name": "National Science Foundation"},
        },
        "distribution": {
            "@type": "DataDownload",
            "contentUrl": {"@id": "https://repo.example/files/7.csv"},
            "encodingFormat": "text/csv",
            "spdx:checksum": {
                "@type": "spdx:Checksum",
                "spdx:algorithm": {"@id": "spdx:checksumAlgorithm_sha256"},
                "spdx:checksumValue": "9f86d081884c7d659a2feaa0c55ad015"
                "a3bf4f1b2b0b822cd15d6c15b0f00a08",
            },
        },
    }
    ds.update(overrides)
    return {k: v for k, v in ds.items() if v is not None}


def found(ds: dict[str, Any]) -> list[Finding]:
    return check_soso(ds, URL)


def codes(ds: dict[str, Any]) -> set[str]:
    return {f.code for f in found(ds)}


def only(ds: dict[str, Any], code: str) -> Finding:
    hits = [f for f in found(ds) if f.code == code]
    assert len(hits) == 1, [f.code for f in found(ds)]
    return hits[0]


def test_a_complete_dataset_has_no_findings() -> None:
    assert found(good()) == []


def test_every_code_names_its_property_and_is_never_an_error() -> None:
    declared = {t.code: t for t in catalogue() if t.code.startswith("soso/")}
    assert set(PROPERTIES) == set(declared)
    assert all(t.severity is not Severity.ERROR for t in declared.values())
    assert set(PROPERTIES) >= ABSENT
    assert BY_PROPERTY["publisher"] == ("soso/publisher-missing",)
    assert set(BY_PROPERTY["license"]) == {
        "soso/license-missing",
        "soso/license-not-uri",
        "soso/license-unknown-uri",
    }


def test_a_bare_dataset_is_told_what_it_lacks() -> None:
    bare = {"@type": "Dataset", "name": "x", "description": "y" * 60}
    assert codes(bare) == ABSENT
    severities = {f.code: f.severity for f in found(bare)}
    assert severities["soso/license-missing"] is Severity.WARNING
    assert severities["soso/keywords-missing"] is Severity.WARNING
    assert severities["soso/funding-missing"] is Severity.INFO


# -- license ------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "https://spdx.org/licenses/CC0-1.0",
        "http://spdx.org/licenses/MIT.html",
        {"@id": "https://creativecommons.org/licenses/by/4.0/"},
        "https://creativecommons.org/publicdomain/zero/1.0/",
        "https://creativecommons.org/publicdomain/mark/1.0/",
        # Dataverse publishes its licence as a node (typed Dataset or CreativeWork) with an @id
        {"@id": "http://creativecommons.org/publicdomain/zero/1.0", "@type": "CreativeWork"},
        {
            "@type": "CreativeWork",
            "name": "CC BY 4.0",
            "url": "https://spdx.org/licenses/CC-BY-4.0",
        },
    ],
)
def test_spdx_and_creative_commons_uris_are_licences(value: Any) -> None:
    assert not {c for c in codes(good(license=value)) if c.startswith("soso/license")}


def test_a_short_spdx_id_gets_its_uri_proposed() -> None:
    f = only(good(license="CC-BY-4.0"), "soso/license-not-uri")
    assert f.severity is Severity.WARNING
    assert f.where == "$.license"
    assert "https://spdx.org/licenses/CC-BY-4.0" in f.message


def test_free_text_licence_says_what_to_publish() -> None:
    text = "This work is licensed under a Creative Commons Attribution 4.0 licence."
    f = only(good(license=["https://spdx.org/licenses/CC-BY-4.0", text]), "soso/license-not-uri")
    assert f.where == "$.license[1]"
    assert f.message.startswith("license[1] is the text 'This work is licensed")
    assert "SPDX URI" in f.message


@pytest.mark.parametrize(
    ("text", "uri"),
    [
        ("cc by 4.0", "https://spdx.org/licenses/CC-BY-4.0"),
        ("CC BY-NC 4.0", "https://spdx.org/licenses/CC-BY-NC-4.0"),
        ("proprietary", None),  # a word is no SPDX id: no made-up URI
        ("All rights reserved", None),
    ],
)
def test_only_common_licences_get_an_spdx_uri_proposed(text: str, uri: str | None) -> None:
    assert spdx_for(text) == uri
    message = only(good(license=text), "soso/license-not-uri").message
    assert (uri in message) if uri else "https://spdx.org/licenses/<id>" in message


def test_an_unknown_licence_uri_is_a_warning_with_the_spdx_form() -> None:
    f = only(good(license="https://opensource.org/licenses/MIT"), "soso/license-unknown-uri")
    assert "https://spdx.org/licenses/MIT" in f.message
    f = only(good(license="https://repo.example/terms-of-use"), "soso/license-unknown-uri")
    assert "https://repo.example/terms-of-use" in f.message


def test_a_licence_node_without_uri_names_the_inner_path() -> None:
    f = only(good(license={"@type": "CreativeWork", "name": "Open data"}), "soso/license-not-uri")
    assert f.where == "$.license.name"


# -- creators and ORCIDs ------------------------------------------------------


@pytest.mark.parametrize(
    "orcid", ["0000-0002-1825-0097", "0000-0001-5109-3700", "0000-0002-1694-233X"]
)
def test_orcid_check_digits(orcid: str) -> None:
    assert orcid_checksum_ok(orcid)
    assert orcid_check_digit(orcid[:-1]) == orcid[-1]
    wrong = orcid[:-1] + ("1" if orcid[-1] != "1" else "2")
    assert not orcid_checksum_ok(wrong)


@given(st.text(alphabet=string.digits, min_size=15, max_size=15), st.integers(0, 14))
@settings(max_examples=100, deadline=None)
def test_one_mistyped_digit_always_fails_the_check(base: str, pos: int) -> None:
    orcid = base + orcid_check_digit(base)
    assert orcid_checksum_ok(orcid)
    changed = base[:pos] + str((int(base[pos]) + 1) % 10) + base[pos + 1 :]
    assert not orcid_checksum_ok(changed + orcid[-1])


def people(*items: Any) -> dict[str, Any]:
    return good(creator={"@list": list(items)})


def test_a_mistyped_orcid_is_a_warning_at_its_path() -> None:
    ds = people(
        {"@id": ORCID, "@type": "Person", "name": "A"},
        {"@type": "Organization", "name": "B"},
        {"@type": "Person", "name": "C", "identifier": "https://orcid.org/0000-0002-1825-0098"},
    )
    f = only(ds, "soso/orcid-invalid")
    assert f.where == "$.creator[2].identifier"
    assert f.message.startswith("creator[2].identifier is the ORCID iD 0000-0002-1825-0098")
    assert "end in 7" in f.message


@pytest.mark.parametrize(
    "identifier",
    [
        "0000-0002-1825-0097",
        "orcid:0000-0002-1825-0097",
        "http://orcid.org/0000-0002-1825-0097",
        {"@type": "PropertyValue", "propertyID": "ORCID", "value": "0000-0002-1825-0097"},
    ],
)
def test_an_orcid_not_in_https_form_is_info(identifier: Any) -> None:
    f = only(people({"@type": "Person", "identifier": identifier}), "soso/orcid-not-uri")
    assert f.severity is Severity.INFO
    assert '"https://orcid.org/0000-0002-1825-0097"' in f.message


def test_orcids_as_propertyvalue_and_inside_roles_count() -> None:
    ds = people(
        {
            "@type": "Role",
            "roleName": "Principal Investigator",
            "creator": {"@type": "Person", "name": "A", "identifier": {"@id": ORCID}},
        },
        {"@type": "Person", "identifier": {"@type": "PropertyValue", "url": {"@id": ORCID}}},
        {"@type": "Person", "sameAs": ORCID},
    )
    assert not {c for c in codes(ds) if "orcid" in c}


def test_a_person_without_orcid_is_info_and_organisations_are_not_asked() -> None:
    ds = people(
        {"@type": "Organization", "name": "Lab"},
        {
            "@type": "Role",
            "creator": {"@type": "Person", "name": "Ana Ferreira", "url": "https://x.example"},
        },
    )
    f = only(ds, "soso/creator-no-orcid")
    assert f.severity is Severity.INFO
    assert f.where == "$.creator[1].creator"
    assert "(Ana Ferreira)" in f.message


def test_author_stands_in_for_creator() -> None:
    ds = good(creator=None, author={"@id": ORCID, "@type": "Person"})
    assert not {c for c in codes(ds) if "creator" in c or "orcid" in c}


# -- spatial coverage ----------------------------------------------------------


def place(geo: Any, **more: Any) -> dict[str, Any]:
    return good(spatialCoverage={"@type": "Place", "geo": geo, **more})


def box(text: str) -> dict[str, Any]:
    return place({"@type": "GeoShape", "box": text})


@pytest.mark.parametrize(
    "geo",
    [
        {"@type": "GeoShape", "box": "39.3280 120.1633 40.445 123.7878"},
        {"@type": "GeoShape", "box": "39.3280,120.1633 40.445,123.7878"},
        {"@type": "GeoCoordinates", "latitude": "39.3280", "longitude": -120.1633},
        {"@type": "GeoCoordinates", "latitude": {"@value": 0}, "longitude": 180},
        {"@type": "GeoShape", "polygon": "10 20 11 20 11 21 10 21 10 20"},
        {"@type": "GeoShape", "line": "39.3280 120.1633 40.445 123.7878"},
        [
            {"@type": "GeoCoordinates", "latitude": -17.65, "longitude": 50},
            {"@type": "GeoCoordinates", "latitude": -19, "longitude": 51},
        ],
    ],
)
def test_well_formed_geometries_pass(geo: Any) -> None:
    assert found(place(geo)) == []


def test_text_is_not_a_place() -> None:
    f = only(
        good(spatialCoverage=["Gulf of Maine", {"@id": "https://sws.geonames.org/1"}]),
        "soso/spatial-not-place",
    )
    assert f.where == "$.spatialCoverage[0]"
    assert "'Gulf of Maine'" in f.message


def test_a_bare_geoshape_is_not_a_place_but_is_still_read() -> None:
    ds = good(spatialCoverage={"@type": "GeoShape", "box": "95 10 96 11"})
    assert codes(ds) == {"soso/spatial-not-place", "soso/geo-out-of-range"}


def test_a_place_without_geo_is_info() -> None:
    f = only(good(spatialCoverage={"@type": "Place", "name": "Weir 3"}), "soso/spatial-no-geo")
    assert f.severity is Severity.INFO
    direct = good(spatialCoverage={"@type": "Place", "latitude": 43.9, "longitude": 271.7})
    assert codes(direct) == {"soso/spatial-no-geo", "soso/geo-out-of-range"}
    assert (
        "latitude and longitude on the Place itself" in only(direct, "soso/spatial-no-geo").message
    )


def test_a_box_with_swapped_latitudes_is_a_warning_with_the_fix() -> None:
    f = only(box("44.5 -70.5 41.5 -66"), "soso/box-order")
    assert f.where == "$.spatialCoverage.geo.box"
    assert "latitudes are swapped" in f.message
    assert '"41.5 -70.5 44.5 -66"' in f.message


def test_a_box_with_swapped_corners_is_one_warning() -> None:
    f = only(box("44.5 -66 41.5 -70.5"), "soso/box-order")
    assert "corners are swapped" in f.message
    assert '"41.5 -70.5 44.5 -66"' in f.message
    assert "soso/box-antimeridian" not in codes(box("44.5 -66 41.5 -70.5"))


def test_a_box_across_the_antimeridian_is_info() -> None:
    f = only(box("-19 176 -15 -178"), "soso/box-antimeridian")  # Fiji, SOSO's own example
    assert f.severity is Severity.INFO


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("-120.1 39.3 -119.8 40.4", "look swapped"),  # GeoJSON order: lon lat lon lat
        ("10 200 20 210", "0 to 360"),
        ("10 -500 20 30", "latitude must be"),
    ],
)
def test_out_of_range_boxes_say_why(text: str, hint: str) -> None:
    f = only(box(text), "soso/geo-out-of-range")
    assert hint in f.message


@pytest.mark.parametrize(
    ("geo", "what"),
    [
        ({"@type": "GeoShape", "box": "north of the weir"}, "four numbers"),
        ({"@type": "GeoShape", "box": "1 2 3"}, "four numbers"),
        ({"@type": "GeoShape", "polygon": "10 20 11 20 11 21 10 21"}, "does not end where"),
        ({"@type": "GeoShape", "polygon": "10 20 11 20 10 20"}, "4 or more"),
        ({"@type": "GeoShape"}, "no box, polygon or line"),
        ({"@type": "GeoCoordinates", "latitude": "N 43"}, "one numeric latitude"),
        ({"@type": "GeoCoordinates", "latitude": 1, "longitude": "NaN"}, "one numeric"),
        ("43.9 -71.7", "is the text"),
        ({"@type": "Point", "coordinates": [1, 2]}, "not a GeoShape"),
    ],
)
def test_malformed_geometries_say_what_they_should_be(geo: Any, what: str) -> None:
    f = only(place(geo), "soso/geo-malformed")
    assert what in f.message
    assert f.message.startswith("spatialCoverage.geo")


def test_a_non_wgs84_reference_system_is_info() -> None:
    srs = {
        "@type": "PropertyValue",
        "propertyID": "http://dbpedia.org/resource/Spatial_reference_system",
        "value": "https://spatialreference.org/ref/epsg/nad83-utm-zone-11n/",
    }
    f = only(
        place({"@type": "GeoShape", "line": "1 2 3 4"}, additionalProperty=srs),
        "soso/crs-not-wgs84",
    )
    assert f.where == "$.spatialCoverage.additionalProperty.value"
    wgs = {**srs, "value": "http://www.w3.org/2003/01/geo/wgs84_pos#lat_long"}
    assert found(place({"@type": "GeoShape", "line": "1 2 3 4"}, additionalProperty=wgs)) == []


# -- temporal coverage ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2018",
        "2018-01-22",
        "2018-01-22T10:00:00Z",
        "2018/..",
        "../2018-05",
        "2019-05/2019",
        "2018-01-01/P1Y",
        "-0500/2019",
    ],
)
def test_iso_8601_coverage_passes(text: str) -> None:
    assert found(good(temporalCoverage=text)) == []


def test_free_text_coverage_is_a_warning_and_owl_time_nodes_are_left_alone() -> None:
    node = {"@type": "time:ProperInterval", "time:hasBeginning": {"@type": "time:Instant"}}
    f = only(good(temporalCoverage=[node, "summer 2019"]), "soso/temporal-invalid")
    assert f.where == "$.temporalCoverage[1]"
    assert found(good(temporalCoverage=node)) == []


def test_an_interval_that_ends_before_it_starts_is_a_warning_with_the_fix() -> None:
    f = only(good(temporalCoverage="2019-06-01/2019-03-01"), "soso/temporal-order")
    assert '"2019-03-01/2019-06-01"' in f.message
    assert coverage("2019-05-04T23:00-05:00/2019-05-05T01:00Z").in_order is False


@pytest.mark.parametrize("text", ["2019-02-30", "2019-13", "../..", "P1Y/P2Y", "2019/2020/2021"])
def test_impossible_dates_are_not_iso_8601(text: str) -> None:
    assert not coverage(text).valid


# -- the rest ------------------------------------------------------------------


def test_keywords_as_defined_terms_count() -> None:
    assert found(good(keywords={"@type": "DefinedTerm", "name": "plankton"})) == []
    assert codes(good(keywords=" ")) == {"soso/keywords-missing"}


def test_variables_must_be_named_propertyvalues() -> None:
    ds = good(
        variableMeasured=[
            "nitrate",
            {"@type": "PropertyValue", "unitText": "mg/L"},
            {"@type": "StatisticalVariable", "name": "x"},
            {"@id": "https://repo.example/variables/t"},
        ]
    )
    assert [(f.code, f.where) for f in found(ds)] == [
        ("soso/variable-not-propertyvalue", "$.variableMeasured[0]"),
        ("soso/variable-no-name", "$.variableMeasured[1].name"),
        ("soso/variable-not-propertyvalue", "$.variableMeasured[2]"),
    ]
    assert '"name": "nitrate"' in found(ds)[0].message


def test_publisher_or_provider_either_satisfies() -> None:
    assert found(good(publisher=None, provider={"@type": "Organization", "name": "R"})) == []
    assert codes(good(publisher=None)) == {"soso/publisher-missing"}


@pytest.mark.parametrize(("length", "bad"), [(49, True), (50, False), (5000, False), (5001, True)])
def test_description_length_bounds(length: int, bad: bool) -> None:
    got = codes(good(description="x" * length))
    assert ("soso/description-length" in got) is bad


def test_description_missing_is_left_to_dataone() -> None:
    assert found(good(description=None)) == []


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        ("2020", False),
        ("2020-03", False),
        ("2020-03-01T12:00:00+02:00", False),
        ("March 2020", True),
        ("2020-02-30", True),
        ("03/01/2020", True),
    ],
)
def test_date_published_must_be_iso_8601(value: str, bad: bool) -> None:
    assert ("soso/date-published-invalid" in codes(good(datePublished=value))) is bad


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        (True, False),
        (False, False),
        ({"@value": True}, False),
        ({"@value": "true", "@type": "http://www.w3.org/2001/XMLSchema#boolean"}, False),
        ("true", True),
        ("yes", True),
        ([True, False], True),
    ],
)
def test_is_accessible_for_free_must_be_one_boolean(value: Any, bad: bool) -> None:
    assert ("soso/free-not-boolean" in codes(good(isAccessibleForFree=value))) is bad


def test_free_text_true_is_told_to_drop_the_quotes() -> None:
    f = only(good(isAccessibleForFree="true"), "soso/free-not-boolean")
    assert '"isAccessibleForFree": true (without quotes)' in f.message


def test_funding_needs_a_grant_with_a_funder() -> None:
    ds = good(funding=["NSF OCE-1234567", {"@type": "MonetaryGrant", "name": "OCE-1"}])
    assert [(f.code, f.where) for f in found(ds)] == [
        ("soso/funding-no-funder", "$.funding[0]"),
        ("soso/funding-no-funder", "$.funding[1].funder"),
    ]
    older = good(funding=None, funder={"@type": "Organization", "name": "NSF"})
    assert found(older) == []


def download(**more: Any) -> dict[str, Any]:
    return {"@type": "DataDownload", "contentUrl": {"@id": "https://repo.example/f"}, **more}


def test_checksums_on_each_datadownload() -> None:
    md5 = {
        "spdx:checksumValue": "39a870a194a787550b6b5d1f49629236",
        "spdx:checksumAlgorithm": {"@id": "spdx:checksumAlgorithm_md5"},
    }
    ds = good(
        distribution=[
            download(**{"spdx:checksum": md5}),
            download(),
            download(checksum={"spdx:checksumValue": "abc", "spdx:algorithm": "SHA-256"}),
            download(**{"spdx:checksum": {"spdx:checksumValue": "39a870a1"}}),
            {"@type": "WebAPI", "url": "https://repo.example/api"},
        ]
    )
    got = [(f.code, f.where) for f in found(ds)]
    assert got == [
        ("soso/checksum-missing", "$.distribution[1]"),
        ("soso/checksum-malformed", "$.distribution[2].checksum"),
        ("soso/checksum-malformed", "$.distribution[3].spdx:checksum"),
    ]
    messages = [f.message for f in found(ds)]
    assert "SHA256 value 'abc', which is not 64 hexadecimal digits" in messages[1]
    assert "has no spdx:algorithm" in messages[2]


def test_findings_of_one_code_are_capped_per_dataset() -> None:
    many = [{"@type": "Person", "name": f"P{i}"} for i in range(MAX_PER_CODE + 100)]
    got = [f for f in found(people(*many)) if f.code == "soso/creator-no-orcid"]
    assert len(got) == MAX_PER_CODE + 1
    assert got[-1].message.startswith("100 more soso/creator-no-orcid findings like the above")
    assert f"$.creator[{MAX_PER_CODE}]" in got[-1].message


# -- never raises ----------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "@id",
                    "@type",
                    "@value",
                    "@list",
                    "name",
                    "geo",
                    "box",
                    "latitude",
                    "longitude",
                    "identifier",
                    "funder",
                    "spdx:checksum",
                    "creator",
                    "additionalProperty",
                    "propertyID",
                    "value",
                    "url",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(
    st.dictionaries(
        st.sampled_from(sorted(set(PROPERTIES.values()) | {"author", "provider"})),
        json_values,
        max_size=8,
    )
)
@settings(max_examples=60, deadline=None)
def test_any_shape_gives_findings_not_exceptions(ds: dict[str, Any]) -> None:
    for f in check_soso({"@type": "Dataset", **ds}, URL):
        assert f.code in PROPERTIES
        assert f.severity is not Severity.ERROR
        assert f.message
