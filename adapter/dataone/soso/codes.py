"""The `soso/` finding codes, and which Dataset property each is about.

These are recommendations beyond what DataONE needs: never errors, so they do
not decide `harvestable` by themselves. `PROPERTIES` maps each code to the
schema.org property it judges, so a requirement profile (or a node's
`checks.required`) can name a property and find the codes that say it fails.
Each explanation says what to publish instead; the messages name the path.
"""

from __future__ import annotations

from adapter.findings import FindingType, Severity

W, INFO = Severity.WARNING, Severity.INFO

LICENSE_MISSING = FindingType(
    "soso/license-missing",
    W,
    "The Dataset has no `license`. Publish the licence's SPDX or Creative Commons URI, such "
    'as "license": "https://spdx.org/licenses/CC-BY-4.0" (science-on-schema.org, License; '
    "F-UJI checks for one).",
)
LICENSE_NOT_URI = FindingType(
    "soso/license-not-uri",
    W,
    "A `license` is text (a sentence or a short name), not a URI, so harvesters cannot tell "
    "which licence it is. Publish the licence's SPDX URI (https://spdx.org/licenses/<id>) or "
    "its Creative Commons URI.",
)
LICENSE_UNKNOWN_URI = FindingType(
    "soso/license-unknown-uri",
    W,
    "A `license` is a URI, but not an SPDX (spdx.org/licenses/...) or Creative Commons "
    "(creativecommons.org/licenses/... or /publicdomain/...) one, so harvesters cannot tell "
    "which licence it is. Publish the SPDX URI of the licence as well.",
)
CREATOR_MISSING = FindingType(
    "soso/creator-missing",
    W,
    "The Dataset names no `creator` (nor `author`). Publish the people or organisations who "
    "made it, as Person or Organization nodes (science-on-schema.org, Roles of People).",
)
CREATOR_NO_ORCID = FindingType(
    "soso/creator-no-orcid",
    INFO,
    "A creator Person has no ORCID. Where they have one, publish it as the Person's `@id` or "
    '`identifier`, as "https://orcid.org/0000-0000-0000-0000".',
)
ORCID_INVALID = FindingType(
    "soso/orcid-invalid",
    W,
    "An ORCID iD of a creator fails its check digit (ISO 7064 MOD 11-2), so it names nobody "
    "or someone else: a digit is mistyped. Copy the iD from the person's ORCID record.",
)
ORCID_NOT_URI = FindingType(
    "soso/orcid-not-uri",
    INFO,
    "An ORCID iD of a creator is given as a bare number, an `orcid:` name or an http URL; "
    'publish it as the https URI, "https://orcid.org/0000-0000-0000-0000".',
)
SPATIAL_MISSING = FindingType(
    "soso/spatial-missing",
    INFO,
    "The Dataset has no `spatialCoverage`. Where the data are about places on Earth, publish a "
    "Place with a `geo` GeoShape box or GeoCoordinates (science-on-schema.org, Spatial "
    "Coverage).",
)
SPATIAL_NOT_PLACE = FindingType(
    "soso/spatial-not-place",
    W,
    "A `spatialCoverage` is text or a node that is not a Place, so map searches cannot use "
    "it. Publish a Place with a `geo` GeoShape or GeoCoordinates (keep the text as the "
    "Place's `name`).",
)
SPATIAL_NO_GEO = FindingType(
    "soso/spatial-no-geo",
    INFO,
    "A `spatialCoverage` Place gives no `geo` (only a name, or latitude and longitude on the "
    "Place itself). Add a `geo` GeoShape or GeoCoordinates so map searches can place it.",
)
GEO_MALFORMED = FindingType(
    "soso/geo-malformed",
    W,
    'A `geo` value cannot be read as a location: a GeoShape `box` is four numbers ("south '
    'west north east", latitude before longitude), a `polygon` four or more points whose first '
    "and last are the same, a `line` two or more points; a GeoCoordinates has one numeric "
    "`latitude` and `longitude`.",
)
GEO_OUT_OF_RANGE = FindingType(
    "soso/geo-out-of-range",
    W,
    "A coordinate is out of range for WGS84 decimal degrees (latitude -90 to 90, longitude "
    "-180 to 180). Often latitude and longitude are swapped (GeoJSON puts longitude first; "
    "schema.org puts latitude first), or longitudes run 0 to 360.",
)
BOX_ORDER = FindingType(
    "soso/box-order",
    W,
    "A GeoShape `box` has its south latitude above its north latitude: its corners are "
    "swapped or its numbers are not in science-on-schema.org's order, \"south west north "
    'east" (the south-west corner, then the north-east corner).',
)
BOX_ANTIMERIDIAN = FindingType(
    "soso/box-antimeridian",
    INFO,
    "A GeoShape `box` has its west longitude east of its east longitude: it crosses the "
    "antimeridian (180 degrees), which science-on-schema.org allows, but some map software "
    "draws it round the rest of the world. If that is not meant, swap the longitudes; if it "
    "is, consider two boxes, one each side of 180.",
)
CRS_NOT_WGS84 = FindingType(
    "soso/crs-not-wgs84",
    INFO,
    "A `spatialCoverage` names a spatial reference system (an `additionalProperty` with "
    "propertyID http://dbpedia.org/resource/Spatial_reference_system) other than WGS84 or "
    "CRS84. Harvesters read coordinates as WGS84; give at least one coverage in WGS84.",
)
TEMPORAL_MISSING = FindingType(
    "soso/temporal-missing",
    INFO,
    "The Dataset has no `temporalCoverage`. Where the data cover a period, publish it as an "
    'ISO 8601 interval, such as "2018-01-22/2018-12-31" or "2018/.." for an open end.',
)
TEMPORAL_INVALID = FindingType(
    "soso/temporal-invalid",
    W,
    "A `temporalCoverage` is not an ISO 8601 date, date-time or interval (start/end, with "
    '".." for an open end), so harvesters cannot read the period. Publish it as, e.g., '
    '"2018-01-22/2018-12-31"; a named period (a geologic age) can be an OWL-Time node.',
)
TEMPORAL_ORDER = FindingType(
    "soso/temporal-order",
    W,
    "A `temporalCoverage` interval ends before it starts; swap the dates.",
)
KEYWORDS_MISSING = FindingType(
    "soso/keywords-missing",
    W,
    "The Dataset has no `keywords`. Publish its subjects as text or DefinedTerm values "
    "(science-on-schema.org, Keywords), so it can be found by subject.",
)
VARIABLES_MISSING = FindingType(
    "soso/variables-missing",
    INFO,
    "The Dataset has no `variableMeasured`. Publish what it measures as PropertyValue nodes "
    "with a `name` (and `unitText` or `unitCode`), per science-on-schema.org, Variables.",
)
VARIABLE_NOT_PROPERTYVALUE = FindingType(
    "soso/variable-not-propertyvalue",
    W,
    "A `variableMeasured` is text or a node that is not a PropertyValue. Publish a "
    'PropertyValue, such as {"@type": "PropertyValue", "name": "water temperature", '
    '"unitText": "degC"}.',
)
VARIABLE_NO_NAME = FindingType(
    "soso/variable-no-name",
    W,
    "A `variableMeasured` PropertyValue has no `name`; give each variable its name.",
)
PUBLISHER_MISSING = FindingType(
    "soso/publisher-missing",
    INFO,
    "The Dataset names neither a `publisher` nor a `provider` (either satisfies "
    "science-on-schema.org, Publisher / Provider). Name the repository as an Organization, "
    "with its ROR as `@id` where it has one.",
)
DESCRIPTION_LENGTH = FindingType(
    "soso/description-length",
    W,
    "The `description` is shorter than 50 or longer than 5000 characters, the range Google's "
    "Dataset guidance asks for. Write an abstract of a few sentences; keep long methods text "
    "in the linked metadata record.",
)
VERSION_MISSING = FindingType(
    "soso/version-missing",
    INFO,
    'The Dataset has no `version`. Publish one (text or a number, such as "2" or '
    '"2013-11-21"), per science-on-schema.org and Google\'s Dataset guidance.',
)
DATE_PUBLISHED_MISSING = FindingType(
    "soso/date-published-missing",
    INFO,
    "The Dataset has no `datePublished`. Publish the date it was first made public, as an "
    'ISO 8601 date such as "2020-03-01".',
)
DATE_PUBLISHED_INVALID = FindingType(
    "soso/date-published-invalid",
    W,
    'The `datePublished` is not an ISO 8601 date or date-time (such as "2020-03-01"), so '
    "harvesters cannot read it.",
)
FREE_MISSING = FindingType(
    "soso/free-missing",
    INFO,
    "The Dataset does not say `isAccessibleForFree`. Publish true or false (a JSON boolean), "
    "per science-on-schema.org and Google's Dataset guidance.",
)
FREE_NOT_BOOLEAN = FindingType(
    "soso/free-not-boolean",
    W,
    'The `isAccessibleForFree` is not a JSON boolean (it is text such as "true", or several '
    "values). Publish exactly one true or false, without quotes.",
)
FUNDING_MISSING = FindingType(
    "soso/funding-missing",
    INFO,
    "The Dataset has no `funding`. Publish each grant as a MonetaryGrant with its `funder` "
    "(an Organization, with its ROR or Crossref Funder ID as `@id`), per science-on-schema.org, "
    "Funding.",
)
FUNDING_NO_FUNDER = FindingType(
    "soso/funding-no-funder",
    W,
    "A `funding` value is text, not a MonetaryGrant, or a grant that names no `funder`. "
    'Publish {"@type": "MonetaryGrant", "identifier": "<award number>", "funder": '
    '{"@type": "Organization", "name": "..."}}.',
)
CHECKSUM_MISSING = FindingType(
    "soso/checksum-missing",
    INFO,
    "A `distribution` DataDownload has no checksum. Publish an `spdx:checksum` with "
    "`spdx:checksumValue` and `spdx:algorithm` (such as spdx:checksumAlgorithm_sha256), per "
    "science-on-schema.org, Checksum, so a downloader can verify the file.",
)
CHECKSUM_MALFORMED = FindingType(
    "soso/checksum-malformed",
    W,
    "A distribution's checksum lacks its value or algorithm, or the value does not fit the "
    "algorithm (an MD5 is 32 hexadecimal digits, a SHA-256 64). Publish `spdx:checksumValue` "
    "and `spdx:algorithm` together.",
)

# code -> the Dataset property it is about (a profile names properties; see BY_PROPERTY)
PROPERTIES: dict[str, str] = {
    t.code: prop
    for prop, kinds in {
        "license": (LICENSE_MISSING, LICENSE_NOT_URI, LICENSE_UNKNOWN_URI),
        "creator": (CREATOR_MISSING, CREATOR_NO_ORCID, ORCID_INVALID, ORCID_NOT_URI),
        "spatialCoverage": (
            SPATIAL_MISSING,
            SPATIAL_NOT_PLACE,
            SPATIAL_NO_GEO,
            GEO_MALFORMED,
            GEO_OUT_OF_RANGE,
            BOX_ORDER,
            BOX_ANTIMERIDIAN,
            CRS_NOT_WGS84,
        ),
        "temporalCoverage": (TEMPORAL_MISSING, TEMPORAL_INVALID, TEMPORAL_ORDER),
        "keywords": (KEYWORDS_MISSING,),
        "variableMeasured": (VARIABLES_MISSING, VARIABLE_NOT_PROPERTYVALUE, VARIABLE_NO_NAME),
        "publisher": (PUBLISHER_MISSING,),
        "description": (DESCRIPTION_LENGTH,),
        "version": (VERSION_MISSING,),
        "datePublished": (DATE_PUBLISHED_MISSING, DATE_PUBLISHED_INVALID),
        "isAccessibleForFree": (FREE_MISSING, FREE_NOT_BOOLEAN),
        "funding": (FUNDING_MISSING, FUNDING_NO_FUNDER),
        "distribution": (CHECKSUM_MISSING, CHECKSUM_MALFORMED),
    }.items()
    for t in kinds
}

# property -> its codes, in the order above
BY_PROPERTY: dict[str, tuple[str, ...]] = {}
for _code, _prop in PROPERTIES.items():
    BY_PROPERTY[_prop] = (*BY_PROPERTY.get(_prop, ()), _code)

# the codes that say a property is not given at all (the text report lists them on one line)
ABSENT: frozenset[str] = frozenset(
    t.code
    for t in (
        LICENSE_MISSING,
        CREATOR_MISSING,
        SPATIAL_MISSING,
        TEMPORAL_MISSING,
        KEYWORDS_MISSING,
        VARIABLES_MISSING,
        PUBLISHER_MISSING,
        VERSION_MISSING,
        DATE_PUBLISHED_MISSING,
        FREE_MISSING,
        FUNDING_MISSING,
    )
)
