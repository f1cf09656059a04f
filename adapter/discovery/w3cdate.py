"""Lenient W3C Datetime parsing for sitemap `<lastmod>`.

The sitemaps protocol allows every W3C Datetime form (`YYYY`, `YYYY-MM`,
`YYYY-MM-DD`, with minutes, seconds, fractions and a zone), and real sitemaps
add a space instead of `T`, a missing zone, or `+0000`. `fromisoformat` covers
the common forms fast; a regular expression covers the rest. Times without a
zone are taken as UTC so every result is timezone-aware and comparable.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_W3C = re.compile(
    r"(?P<y>\d{4})(?:-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2})"
    r"(?:[Tt ](?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?"
    r"\s*(?P<tz>[Zz]|[+-]\d{2}(?::?\d{2})?)?)?)?)?"
)
_MAX_LENGTH = 64  # no real lastmod is longer; a long one is not worth a regex run


def parse_w3c_datetime(text: str) -> datetime | None:
    """An aware datetime for a W3C Datetime string, or None when it is not one."""
    value = text.strip()
    if not value or len(value) > _MAX_LENGTH:
        return None
    if len(value) >= 10 and value[4] == "-" and value[7] == "-":
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None:
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return _parse_regex(value)


def _parse_regex(value: str) -> datetime | None:
    match = _W3C.fullmatch(value)
    if match is None:
        return None
    g = match.groupdict()
    fraction = (g["f"] or "0")[:6].ljust(6, "0")
    try:
        return datetime(
            int(g["y"]),
            int(g["mo"] or 1),
            int(g["d"] or 1),
            int(g["h"] or 0),
            int(g["mi"] or 0),
            int(g["s"] or 0),
            int(fraction),
            tzinfo=_zone(g["tz"]),
        )
    except (ValueError, OverflowError):
        return None


def _zone(tz: str | None) -> timezone:
    if tz is None or tz in ("Z", "z"):
        return UTC
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 23 or minutes > 59:
        raise ValueError(f"zone offset {tz} out of range")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))
