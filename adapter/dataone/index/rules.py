"""Where the page holds information that DataONE's search index would miss or garble.

Each rule compares the framed Dataset (what the page says) with the fields
`compute.dataone_index` found (what the index would hold) and says what to
publish instead, with a JSON-LD snippet. Warnings under every profile (the
`soso` profile makes them a requirement); never errors, since the adapter
still syncs the Dataset and DataONE still holds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from adapter.dataone.index.compute import IndexFields, dataone_index
from adapter.dataone.index.convert import BLANK
from adapter.dataone.index.prepare import TooLarge
from adapter.dataone.soso.paths import at, show
from adapter.findings import Finding, FindingType, Severity
from adapter.jsonld.framed import literal, node_id, types, values

AUTHOR_NOT_CREATOR = FindingType(
    "dataone/index-author-not-creator",
    Severity.WARNING,
    "The Dataset names its people in `author` or `contributor` but has no `creator`; DataONE's "
    "indexer reads only `creator`, so DataONE search shows no author. Publish them as "
    '`creator`: "creator": [{"@type": "Person", "name": "Given Family"}].',
)
CREATOR_UNNAMED = FindingType(
    "dataone/index-creator-unnamed",
    Severity.WARNING,
    "A `creator` has no `name` (only `givenName`/`familyName`, or plain text); DataONE's "
    "indexer takes the author and the creator list from each creator's `name`, so this one "
    'is missing from search. Add it: {"@type": "Person", "name": "Given Family", '
    '"givenName": "Given", "familyName": "Family"}.',
)
GEO_NOT_BOX = FindingType(
    "dataone/index-geo-not-box",
    Severity.WARNING,
    "The `spatialCoverage` has coordinates, but not as a Place whose `geo` is a GeoShape `box`, "
    "the only shape DataONE's indexer reads; DataONE's map and spatial search miss the "
    'Dataset. Add a box: {"@type": "Place", "geo": {"@type": "GeoShape", '
    '"box": "south west north east"}}.',
)
BOX_DROPPED = FindingType(
    "dataone/index-box-dropped",
    Severity.WARNING,
    'DataONE\'s indexer reads a GeoShape `box` as "south west north east" (latitude first); '
    "this box gives it a coordinate it drops (a latitude beyond +-90, often a box written "
    "longitude first, or not four numbers), so the Dataset has no bounding box in search. "
    'Write "box": "south west north east", e.g. "39.1 -120.2 39.3 -119.9".',
)
BOX_INVERTED = FindingType(
    "dataone/index-box-inverted",
    Severity.WARNING,
    "The GeoShape `box` has its south above its north; DataONE's indexer fails computing the "
    "box's geohash, which can keep the whole record out of DataONE search. Write "
    '"box": "south west north east" with south <= north.',
)
TEMPORAL_UNSPLIT = FindingType(
    "dataone/index-temporal-unsplit",
    Severity.WARNING,
    'DataONE\'s indexer splits `temporalCoverage` at its first "/" and reads each side as an '
    "XML Schema date (2019, 2019-05, 2019-05-03 or 2019-05-03T10:00:00Z); this one gives it "
    'no begin or no end date, so date search misses it. Write "temporalCoverage": '
    '"2019-05-03/2020-01-31" (or "2019-05-03/.." when open).',
)
DATE_UNREAD = FindingType(
    "dataone/index-date-unread",
    Severity.WARNING,
    "DataONE's indexer reads `datePublished` as an XML Schema date; this one it cannot read, "
    'so search has no publication date. Write "datePublished": "2021-06-30".',
)
LICENSE_UNREAD = FindingType(
    "dataone/index-license-unread",
    Severity.WARNING,
    "The `license` is a node without an `@id`, so DataONE's indexer finds no licence URL for "
    'it. Give the licence its IRI: "license": {"@id": '
    '"https://spdx.org/licenses/CC-BY-4.0", "@type": "CreativeWork", "name": "CC BY 4.0"}.',
)
LICENSE_UNNAMED = FindingType(
    "dataone/index-license-unnamed",
    Severity.INFO,
    "The `license` is text, not a URL or a named licence; DataONE's indexer shows that text "
    "as both the licence URL and its name. Publish the licence's IRI with its name: "
    '"license": {"@id": "https://spdx.org/licenses/CC-BY-4.0", "@type": "CreativeWork", '
    '"name": "CC BY 4.0"}.',
)
FUNDING_UNREAD = FindingType(
    "dataone/index-funding-unread",
    Severity.WARNING,
    "The Dataset names its `funding` (a MonetaryGrant), but DataONE's indexer reads the funder "
    "from the Dataset's own `funder` and the award from a MonetaryGrant whose `fundedItem` is "
    'the Dataset, so DataONE search shows no funding. Add both: "funder": {"@type": '
    '"Organization", "name": "..."} and "fundedItem": {"@id": "<the Dataset\'s @id>"} in the '
    "grant.",
)
GARBLED_TEXT = FindingType(
    "dataone/index-garbled-text",
    Severity.WARNING,
    "DataONE's indexer writes this value as it finds it in RDF: a node (a DefinedTerm keyword, "
    "an untyped Place) becomes a meaningless blank-node label, and a language-tagged text "
    'gets an "@en" suffix. Publish plain text: "keywords": ["ocean", "salinity"], '
    '"name": "Title", "spatialCoverage": {"@type": "Place", "name": "..."}.',
)

_PEOPLE = ("author", "contributor")
# the box as the indexer flattens it before splitting at spaces
_FLAT = re.compile(r"\s*,\s*|\s{2,}")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def index_findings(dataset: Mapping[str, Any], fields: IndexFields, url: str) -> list[Finding]:
    """What the index would miss or garble of this Dataset, with what to publish instead."""
    out: list[Finding] = []
    out.extend(_creators(dataset, fields, url))
    out.extend(_places(dataset, fields, url))
    out.extend(_temporal(dataset, fields, url))
    out.extend(_published(dataset, fields, url))
    out.extend(_licence(dataset, fields, url))
    out.extend(_funding(dataset, fields, url))
    out.extend(_garbled(fields, url))
    return out


def _name_of(person: Any) -> str:
    if not isinstance(person, Mapping):
        return literal(person) or node_id(person) or "Given Family"
    parts = [literal(v) for p in ("givenName", "familyName") for v in values(person, p)[:1]]
    return (
        literal((values(person, "name") or [None])[0])
        or " ".join(p for p in parts if p)
        or ("Given Family")
    )


def _person_snippet(person: Any) -> str:
    kind = (
        "Organization"
        if "Organization" in (types(person) if isinstance(person, Mapping) else [])
        else "Person"
    )
    return f'{{"@type": "{kind}", "name": {_json(_name_of(person))}}}'


def _json(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _creators(dataset: Mapping[str, Any], fields: IndexFields, url: str) -> Iterator[Finding]:
    creators = values(dataset, "creator")
    if not creators:
        for prop in _PEOPLE:
            people = values(dataset, prop)
            if people:
                snippet = ", ".join(_person_snippet(p) for p in people[:3])
                more = ", ..." if len(people) > 3 else ""
                yield AUTHOR_NOT_CREATOR.at(
                    url,
                    f"The Dataset names {len(people)} {'person' if len(people) == 1 else 'people'} "
                    f"in `{prop}` and has no `creator`; DataONE's indexer reads only `creator`, "
                    f"so DataONE search shows no author. Publish them as "
                    f'"creator": [{snippet}{more}].',
                    f"$.{prop}",
                )
                return
        return
    for i, person in enumerate(creators):
        path = at("creator", i, len(creators))
        if isinstance(person, Mapping) and literal(person) is None:
            if "Role" in types(person) or values(person, "name"):
                continue  # a Role wraps the creator: newer indexers read it; named: read
            if set(person) <= {"@id"}:
                continue  # a reference to a creator described elsewhere
            what = (
                "has no `name` (only "
                + (
                    " and ".join(f"`{p}`" for p in ("givenName", "familyName") if values(person, p))
                    or "other properties"
                )
                + ")"
            )
        else:
            what = f"is the text {show(literal(person) or node_id(person))}, not a Person"
        first = (
            " It is the first creator, so the author DataONE shows is another one."
            if i == 0 and fields.get("author")
            else (" DataONE search shows no author." if i == 0 else "")
        )
        yield CREATOR_UNNAMED.at(
            url,
            f"{path} {what}; DataONE's indexer takes authors from each creator's `name`, so "
            f"this creator is missing from search.{first} Publish "
            f'{_person_snippet(person)[:-1]}, "givenName": ..., "familyName": ...}}.',
            f"$.{path}",
        )


def _places(dataset: Mapping[str, Any], fields: IndexFields, url: str) -> Iterator[Finding]:
    items = values(dataset, "spatialCoverage")
    boxes: list[tuple[str, str]] = []
    unread: list[tuple[str, str]] = []  # (path, what) for coordinates the index cannot read
    for i, item in enumerate(items):
        path = at("spatialCoverage", i, len(items))
        if not isinstance(item, Mapping) or literal(item) is not None:
            continue  # text: the index shows it as namedLocation
        place = "Place" in types(item)
        geos = values(item, "geo")
        for j, geo in enumerate(geos):
            gpath = f"{path}.{at('geo', j, len(geos))}"
            if not isinstance(geo, Mapping):
                continue
            kinds = types(geo)
            box = literal((values(geo, "box") or [None])[0])
            if box is not None and place and "GeoShape" in kinds:
                boxes.append((f"{gpath}.box", box))
            elif box is not None:
                unread.append((gpath, "a box not typed GeoShape inside a Place"))
            elif values(geo, "latitude") or values(geo, "longitude"):
                unread.append((gpath, "a GeoCoordinates point"))
            elif values(geo, "polygon") or values(geo, "line"):
                unread.append((gpath, "a polygon or line"))
    if unread and not boxes:
        where, what = unread[0]
        yield GEO_NOT_BOX.at(
            url,
            f"{where} is {what}; DataONE's indexer reads only a Place's GeoShape `box`, so "
            "DataONE's map and spatial search miss the Dataset. Add "
            '{"@type": "Place", "geo": {"@type": "GeoShape", "box": "south west north east"}} '
            "(a point is a box with south = north and west = east).",
            f"$.{where}",
        )
    yield from _boxes(boxes, fields, url)


def _boxes(boxes: list[tuple[str, str]], fields: IndexFields, url: str) -> Iterator[Finding]:
    """The indexer reads one box of the Dataset (LIMIT 1, in no stated order): each box
    is judged as if it were that one, at most one finding per code."""
    seen: set[str] = set()
    for found in boxes:
        for finding in _box(found, fields, url):
            if finding.code not in seen:
                seen.add(finding.code)
                yield finding


def _box(found: tuple[str, str], fields: IndexFields, url: str) -> Iterator[Finding]:
    where, text = found
    parts = _FLAT.sub(" ", text).split(" ")
    numbers = [float(p) if _NUMBER.fullmatch(p) else None for p in parts[:4]]
    south, west, north, east = (numbers + [None] * 4)[:4]
    missing = [
        name
        for name, value, lat in (
            ("southBoundCoord", south, True),
            ("westBoundCoord", west, False),
            ("northBoundCoord", north, True),
            ("eastBoundCoord", east, False),
        )
        if value is None or not (-90 <= value <= 90 if lat else -180 <= value <= 360)
    ]
    if missing:
        if (
            south is not None
            and west is not None
            and (abs(south) > 90 or (north is not None and abs(north) > 90))
            and abs(west) <= 90
        ):
            why = "its latitudes are beyond +-90: it looks written longitude first"
            fix = (
                f"{west:g} {south:g} {east:g} {north:g}"
                if None not in (east, north)
                else "south west north east"
            )
        else:
            why = 'it is not four numbers "south west north east" separated by spaces'
            fix = "south west north east"
        yield BOX_DROPPED.at(
            url,
            f"{where} is {show(text)}; DataONE's indexer drops "
            f"{', '.join(missing)} because {why}, so the Dataset has no bounding box in "
            f'DataONE search. Write "box": "{fix}".',
            f"$.{where}",
        )
        return
    if south is not None and north is not None and south > north:
        yield BOX_INVERTED.at(
            url,
            f"{where} is {show(text)}: its south ({south:g}) is above its north ({north:g}); "
            "DataONE's indexer fails computing the box's geohash, which can keep the whole "
            "record out of DataONE search. Write "
            f'"box": "{north:g} {west:g} {south:g} {east:g}" (south west north east).',
            f"$.{where}",
        )


def _temporal(dataset: Mapping[str, Any], fields: IndexFields, url: str) -> Iterator[Finding]:
    items = values(dataset, "temporalCoverage")
    if not items:
        return
    texts = [literal(v) for v in items]
    text = next((t for t in texts if t), None)
    if text is None:
        yield TEMPORAL_UNSPLIT.at(
            url,
            "temporalCoverage is a node, not text; DataONE's indexer reads only an ISO 8601 "
            'text, so date search misses it. Write "temporalCoverage": "2019-05-03/2020-01-31".',
            "$.temporalCoverage",
        )
        return
    begin, slash, end = text.partition("/")
    problems = []
    if "beginDate" not in fields:
        problems.append(f"the begin {show(begin)}")
    if slash and end.strip() not in ("", "..") and "endDate" not in fields:
        problems.append(f"the end {show(end)}")
    if problems:
        yield TEMPORAL_UNSPLIT.at(
            url,
            f'temporalCoverage is {show(text)}; DataONE\'s indexer splits it at its first "/" '
            f"and cannot read {' and '.join(problems)} as an XML Schema date, so date search "
            'misses it. Write "temporalCoverage": "2019-05-03/2020-01-31" (a year, year-month, '
            'date or UTC date-time each side; "2019-05-03/.." when open).',
            "$.temporalCoverage",
        )


def _published(dataset: Mapping[str, Any], fields: IndexFields, url: str) -> Iterator[Finding]:
    text = next((literal(v) for v in values(dataset, "datePublished") if literal(v)), None)
    if text is not None and "pubDate" not in fields:
        yield DATE_UNREAD.at(
            url,
            f"datePublished is {show(text)}; DataONE's indexer cannot read it as an XML Schema "
            'date, so search has no publication date. Write "datePublished": "2021-06-30".',
            "$.datePublished",
        )


def _licence(dataset: Mapping[str, Any], fields: IndexFields, url: str) -> Iterator[Finding]:
    items = values(dataset, "license")
    if not items:
        return
    snippet = (
        '"license": {"@id": "https://spdx.org/licenses/CC-BY-4.0", "@type": "CreativeWork", '
        '"name": "CC BY 4.0"}'
    )
    if "licenseUrl" not in fields:
        yield LICENSE_UNREAD.at(
            url,
            "license is a node without an `@id`, so DataONE's indexer finds no licence URL "
            f"(it does not read `url` there). Give the licence its IRI: {snippet}.",
            "$.license",
        )
        return
    urls = fields.get("licenseUrl", [])
    urls = [urls] if isinstance(urls, str) else urls
    texts = [u for u in urls if not re.match(r"[a-z][a-z0-9+.-]*:\S+$", u, re.I)]
    if texts:
        yield LICENSE_UNNAMED.at(
            url,
            f"license is the text {show(texts[0])}; DataONE's indexer shows it as both the "
            f"licence URL and its name. Publish the licence's IRI with its name: {snippet}.",
            "$.license",
        )


def _funding(dataset: Mapping[str, Any], fields: IndexFields, url: str) -> Iterator[Finding]:
    grants = [g for g in values(dataset, "funding") if isinstance(g, Mapping)]
    read = ("funderName", "funderIdentifier", "awardNumber", "awardTitle")
    if not grants or any(name in fields for name in read):
        return
    grant = grants[0]
    funders = [f for f in values(grant, "funder") if isinstance(f, Mapping)]
    funder = _json(_name_of(funders[0]) if funders else "Funding agency")
    award = literal((values(grant, "identifier") or [None])[0]) or "award number"
    dataset_id = node_id(dataset) or "<the Dataset's @id>"
    yield FUNDING_UNREAD.at(
        url,
        f"funding names {'a grant' if len(grants) == 1 else f'{len(grants)} grants'}, but "
        "DataONE's indexer reads the funder only from the Dataset's own `funder` and the award "
        "only from a MonetaryGrant whose `fundedItem` is the Dataset, so DataONE search shows "
        f'no funding. Add "funder": {{"@type": "Organization", "name": {funder}}} to the '
        f'Dataset and, in the grant, "identifier": {_json(award)}, "fundedItem": '
        f'{{"@id": {_json(dataset_id)}}} (the Dataset needs an @id).',
        "$.funding",
    )


_SHOWN = ("title", "author", "origin", "keywords", "namedLocation", "funderName", "label")


def _garbled(fields: IndexFields, url: str) -> Iterator[Finding]:
    for name in _SHOWN:
        raw = fields.get(name)
        for value in [raw] if isinstance(raw, str) else raw or []:
            if value == BLANK:
                why = "a node without text, which the index writes as a blank-node label"
            elif re.search(r"@[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$|\^\^\S+$", value):
                why = "text with a language tag or datatype, which the index keeps as a suffix"
            else:
                continue
            yield GARBLED_TEXT.at(
                url,
                f"DataONE's index would show {name} as {show(value)}: the page gives {why}. "
                'Publish plain text, e.g. "keywords": ["ocean", "salinity"] or "name": "Title".',
                f"$.{name}",
            )
            break


def index_dataset(
    original: Mapping[str, Any], dataset: Mapping[str, Any], url: str
) -> tuple[IndexFields, list[Finding]]:
    """The index fields of the JSON-LD the adapter syncs for a Dataset, and what they miss.

    A document past the RDF cap (`prepare.MAX_TRIPLES`) gives no fields and no findings."""
    try:
        fields = dataone_index(original)
    except TooLarge:
        return {}, []
    return fields, index_findings(dataset, fields, url)
