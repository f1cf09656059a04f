"""The indexer's value converters (its SolrDateConverter, SolrLatitudeConverter,
SolrLongitudeConverter and GeohashConverter), and Jena's text of an RDF term.

Each returns None where the indexer's converter gives nothing (null or ""):
the Solr field then stays empty.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

# xsd:dateTime, xsd:date, xsd:gYearMonth, xsd:gYear, each with an optional time zone: what
# javax.xml.bind's parseDate reads (an XMLGregorianCalendar); no zone is read as UTC
_XSD_DATE = re.compile(
    r"(?P<year>\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2})"
    r"(?:T(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})(?:\.(?P<frac>\d+))?)?)?)?"
    r"(?P<tz>Z|[+-]\d{2}:\d{2})?"
)


def solr_date(text: str) -> str | None:
    """The Solr date (`yyyy-MM-ddTHH:mm:ss.SSSZ`, UTC) of an XML Schema date, else None."""
    match = _XSD_DATE.fullmatch(text.strip())
    if match is None or (match["day"] is None and match["h"] is not None):
        return None
    year = int(match["year"])
    month = int(match["month"] or 1)
    day = int(match["day"] or 1)
    hour, minute, second = (int(match[k] or 0) for k in ("h", "m", "s"))
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(max(year, 1), month)[1]:
        return None
    if hour == 24 and minute == second == 0 and not (match["frac"] or "").strip("0"):
        hour, extra = 0, timedelta(days=1)  # 24:00:00 is the next day's midnight
    else:
        extra = timedelta()
    if hour > 23 or minute > 59 or second > 59 or year == 0:
        return None
    millis = int(((match["frac"] or "") + "000")[:3])
    moment = datetime(year, month, day, hour, minute, second, millis * 1000, UTC) + extra
    zone = match["tz"]
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _number(text: str) -> float | None:
    """Java's Double.parseDouble, for the decimal spellings a box holds."""
    spelled = text.strip()
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?", spelled):
        return None
    return float(spelled.rstrip("dDfF"))


def java_double(value: float) -> str:
    """Java's Double.toString: "45.0", "1.0E-4", "1.2345678E7"."""
    if value == 0:
        return "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text or "e" in text else text + ".0"
    mantissa, _, exponent = f"{value!r}".partition("e")
    if not exponent:  # repr gave no exponent: make one
        mantissa, _, exponent = f"{value:.17e}".partition("e")
        mantissa = repr(float(mantissa))
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exponent)}"


def latitude(text: str) -> str | None:
    """SolrLatitudeConverter: a number in [-90, 90], else nothing."""
    value = _number(text)
    if value is None or not -90.0 <= value <= 90.0:
        return None
    return java_double(value)


def longitude(text: str) -> str | None:
    """SolrLongitudeConverter: a number in [-180, 360]; above 180 it becomes 360 - value."""
    value = _number(text)
    if value is None or not -180.0 <= value <= 360.0:
        return None
    return java_double(360.0 - value if value > 180.0 else value)


BLANK = "_:blank-node"  # a generated label: stable here, random in the index
_BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"


def geohash(lat: float, lon: float, length: int) -> str:
    """The standard geohash of a point, `length` characters."""
    lat_range, lon_range = [-90.0, 90.0], [-180.0, 180.0]
    out: list[str] = []
    bits, char, even = 0, 0, True
    while len(out) < length:
        span, value = (lon_range, lon) if even else (lat_range, lat)
        mid = (span[0] + span[1]) / 2
        char <<= 1
        if value >= mid:
            char |= 1
            span[0] = mid
        else:
            span[1] = mid
        even = not even
        bits += 1
        if bits == 5:
            out.append(_BASE32[char])
            bits, char = 0, 0
    return "".join(out)


def box_centre(north: float, south: float, east: float, west: float) -> tuple[float, float]:
    """The point the indexer's GeohashConverter hashes: a degenerate box's south-west corner,
    else the centre (the caller has checked south <= north, which the converter requires)."""
    if west == east or south == north:
        return south, west
    lon = (west + east) / 2 if west <= east else ((west + east + 360) / 2 + 180) % 360 - 180
    return (south + north) / 2, lon


def jena_text(term: Node) -> str:
    """What the indexer writes for a term it selects as is (Jena's `toString`): an IRI's text;
    a literal's lexical form with `@lang`, or `^^datatype` unless a plain string; a blank
    node's generated label, which means nothing to a reader."""
    if isinstance(term, URIRef):
        return str(term)
    if isinstance(term, Literal):
        text = str(term)
        if term.language:
            return f"{text}@{term.language}"
        if term.datatype is not None and term.datatype != XSD.string:
            return f"{text}^^{term.datatype}"
        return text
    if isinstance(term, BNode):
        return BLANK
    return str(term)
