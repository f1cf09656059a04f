"""`spatialCoverage`: Places with a well-formed `geo` in WGS84, as findings.

science-on-schema.org (Spatial Coverage) asks for a Place whose `geo` is a
GeoCoordinates point or a GeoShape (`box`, `polygon`, `line`), in WGS84
decimal degrees with latitude first: a box is "south west north east". A box
whose west is east of its east crosses the antimeridian, which the guide
allows (Fiji: "-19 176 -15 -178"), so that is info; south above north is a
mistake. A Place may name another reference system in an `additionalProperty`
(propertyID dbpedia's Spatial_reference_system); that is info, since
harvesters read WGS84.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from adapter.dataone.soso import codes
from adapter.dataone.soso.paths import at, show
from adapter.findings import Finding
from adapter.jsonld.framed import literal, node_id, types, values

_WGS84 = re.compile(
    r"wgs84|wgs_84|wgs 84|crs84|crs/ogc/1\.3/crs84|epsg[:/](?:\w+/)*4326\b|epsg/0/4326|"
    r"ref/epsg/(?:wgs-84|4326)",
    re.I,
)
_SPLIT = re.compile(r"[\s,]+")
MAX_POINTS = 10_000  # a polygon longer than this is read no further


def spatial_findings(dataset: Mapping[str, Any], url: str) -> list[Finding]:
    items = values(dataset, "spatialCoverage")
    if not items:
        return [codes.SPATIAL_MISSING.at(url, where="$.spatialCoverage")]
    out: list[Finding] = []
    for i, item in enumerate(items):
        path = at("spatialCoverage", i, len(items))
        out.extend(_place(item, path, url))
    return out


def _place(item: Any, path: str, url: str) -> Iterator[Finding]:
    if not isinstance(item, Mapping) or literal(item) is not None:
        yield codes.SPATIAL_NOT_PLACE.at(
            url,
            f"{path} is the text {show(literal(item) or node_id(item))}, not a Place. Publish "
            'a Place with a geo, e.g. {"@type": "Place", "name": "...", "geo": {"@type": '
            '"GeoShape", "box": "south west north east"}}.',
            f"$.{path}",
        )
        return
    kinds = types(item)
    if not kinds and set(item) <= {"@id"}:
        return  # a reference to a Place described elsewhere (a gazetteer IRI): nothing to read
    if kinds and not {"Place", "AdministrativeArea", "Country", "State", "City"} & set(kinds):
        if {"GeoShape", "GeoCoordinates"} & set(kinds):  # the geo itself, without its Place
            yield codes.SPATIAL_NOT_PLACE.at(
                url,
                f"{path} is a {kinds[0]}, not a Place; wrap it: "
                f'{{"@type": "Place", "geo": {{"@type": "{kinds[0]}", ...}}}}.',
                f"$.{path}",
            )
            yield from _geo(item, path, url)
        else:
            yield codes.SPATIAL_NOT_PLACE.at(
                url,
                f"{path} is a {', '.join(kinds)}, not a Place with a geo.",
                f"$.{path}",
            )
        return
    geos = values(item, "geo")
    if not geos:
        direct = values(item, "latitude") or values(item, "longitude")
        said = "latitude and longitude on the Place itself" if direct else "no geo"
        yield codes.SPATIAL_NO_GEO.at(
            url,
            f"{path} gives {said}; add a geo GeoShape or GeoCoordinates so map searches can "
            "place it.",
            f"$.{path}.geo",
        )
        if direct:
            yield from _point(item, path, url)
    for j, geo in enumerate(geos):
        yield from _geo(geo, f"{path}.{at('geo', j, len(geos))}", url)
    yield from _srs(item, path, url)


def _geo(geo: Any, path: str, url: str) -> Iterator[Finding]:
    if not isinstance(geo, Mapping) or literal(geo) is not None:
        yield _malformed(
            url, path, f"is the text {show(literal(geo))}, not a GeoShape or GeoCoordinates"
        )
        return
    kinds = set(types(geo))
    if "GeoCoordinates" in kinds:
        yield from _point(geo, path, url)
        return
    shapes = [p for p in ("box", "polygon", "line", "circle") if values(geo, p)]
    if "GeoShape" not in kinds and not shapes:
        if set(geo) <= {"@id"}:
            return  # a reference: described elsewhere
        shown = ", ".join(sorted(kinds)) or "an untyped node"
        yield _malformed(url, path, f"is {shown}, not a GeoShape or GeoCoordinates")
        return
    if not shapes:
        yield _malformed(url, path, "is a GeoShape with no box, polygon or line")
        return
    for prop in shapes:
        items = values(geo, prop)
        for k, value in enumerate(items):
            where = f"{path}.{at(prop, k, len(items))}"
            text = literal(value)
            if text is None:
                yield _malformed(url, where, "is not text")
            elif prop == "box":
                yield from _box(text, where, url)
            elif prop != "circle":  # circles: not recommended, not checked
                yield from _points(text, prop, where, url)


def _numbers(text: str) -> list[float] | None:
    parts = [p for p in _SPLIT.split(text.strip()) if p]
    try:
        found = [float(p) for p in parts[: 2 * MAX_POINTS]]
    except ValueError:
        return None
    return found if all(math.isfinite(x) for x in found) else None


def _box(text: str, where: str, url: str) -> Iterator[Finding]:
    nums = _numbers(text)
    if nums is None or len(nums) != 4:
        yield _malformed(
            url,
            where,
            f'is {show(text)}: a box is four numbers, "south west north east" (latitude '
            'first), e.g. "39.3 -120.1 40.4 -119.8"',
        )
        return
    south, west, north, east = nums
    bad = _range(where, [(south, west), (north, east)], url)
    if bad is not None:
        yield bad
        return
    if south > north:
        corners = west > east  # both swapped: the north-east corner came first
        fixed = (
            f"{north:g} {east:g} {south:g} {west:g}"
            if corners
            else f"{north:g} {west:g} {south:g} {east:g}"
        )
        why = (
            "its corners are swapped (north-east first)" if corners else "its latitudes are swapped"
        )
        yield codes.BOX_ORDER.at(
            url,
            f"{where} is {show(text)}: its south latitude {south:g} is north of its north "
            f"latitude {north:g}, so {why}. science-on-schema.org's order is \"south west north "
            f'east"; did you mean "{fixed}"?',
            f"$.{where}",
        )
    elif west > east:
        yield codes.BOX_ANTIMERIDIAN.at(
            url,
            f"{where} is {show(text)}: its west longitude {west:g} is east of its east "
            f"longitude {east:g}, so it crosses the antimeridian (180 degrees). If that is not "
            f'meant, swap the longitudes: "{south:g} {east:g} {north:g} {west:g}".',
            f"$.{where}",
        )


def _points(text: str, prop: str, where: str, url: str) -> Iterator[Finding]:
    nums = _numbers(text)
    least = 4 if prop == "polygon" else 2
    if nums is None or len(nums) % 2 or len(nums) < 2 * least:
        yield _malformed(
            url,
            where,
            f'is {show(text)}: a {prop} is {least} or more "latitude longitude" points, '
            "separated by spaces",
        )
        return
    pairs = list(zip(nums[::2], nums[1::2], strict=True))
    bad = _range(where, pairs, url)
    if bad is not None:
        yield bad
    elif prop == "polygon" and pairs[0] != pairs[-1]:
        yield _malformed(
            url,
            where,
            f"does not end where it starts ({pairs[0][0]:g} {pairs[0][1]:g}): repeat the first "
            "point at the end to close the polygon",
        )


def _point(node: Mapping[str, Any], path: str, url: str) -> Iterator[Finding]:
    lat, lon = values(node, "latitude"), values(node, "longitude")
    nums = [_number(v) for v in (*lat, *lon)]
    if len(lat) != 1 or len(lon) != 1 or None in nums:
        shown = ", ".join(
            f"{p} {show(', '.join(literal(v) or '?' for v in vs)) if vs else 'missing'}"
            for p, vs in (("latitude", lat), ("longitude", lon))
        )
        yield _malformed(url, path, f"needs one numeric latitude and longitude ({shown})")
        return
    bad = _range(path, [(nums[0] or 0.0, nums[1] or 0.0)], url)
    if bad is not None:
        yield bad


def _number(value: Any) -> float | None:
    text = literal(value)
    if text is None:
        return None
    try:
        found = float(text.strip())
    except ValueError:
        return None
    return found if math.isfinite(found) else None


def _range(where: str, pairs: list[tuple[float, float]], url: str) -> Finding | None:
    """geo-out-of-range for the first point outside WGS84, with the likely reason."""
    for lat, lon in pairs:
        if -90 <= lat <= 90 and -180 <= lon <= 180:
            continue
        if not -90 <= lat <= 90 and -90 <= lon <= 90 and -180 <= lat <= 180:
            hint = (
                "latitude and longitude look swapped: schema.org puts latitude first "
                "(GeoJSON puts longitude first)"
            )
        elif 180 < lon <= 360 and -90 <= lat <= 90:
            hint = (
                "longitudes run 0 to 360; science-on-schema.org asks for -180 to 180 "
                f"({lon - 360:g})"
            )
        else:
            hint = "latitude must be -90 to 90 and longitude -180 to 180 (WGS84 degrees)"
        return codes.GEO_OUT_OF_RANGE.at(
            url, f"{where} has latitude {lat:g}, longitude {lon:g}: {hint}.", f"$.{where}"
        )
    return None


def _srs(place: Mapping[str, Any], path: str, url: str) -> Iterator[Finding]:
    props = values(place, "additionalProperty")
    for k, prop in enumerate(props):
        if not isinstance(prop, Mapping):
            continue
        ids = [literal(v) or node_id(v) or "" for v in values(prop, "propertyID")]
        if not any(i.rstrip("/").endswith("Spatial_reference_system") for i in ids):
            continue
        system = next((literal(v) or node_id(v) for v in values(prop, "value")), None)
        if system and not _WGS84.search(system):
            where = f"{path}.{at('additionalProperty', k, len(props))}.value"
            yield codes.CRS_NOT_WGS84.at(
                url,
                f"{where} names the spatial reference system {show(system)}, not WGS84; "
                "harvesters read coordinates as WGS84, so give at least one coverage in "
                "WGS84 (or CRS84) as well.",
                f"$.{where}",
            )


def _malformed(url: str, where: str, what: str) -> Finding:
    return codes.GEO_MALFORMED.at(url, f"{where} {what}.", f"$.{where}")
