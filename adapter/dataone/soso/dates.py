"""ISO 8601 dates, date-times and intervals as science-on-schema.org publishes them.

Only the extended forms schema.org uses: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, a
date-time with an optional zone, and intervals `start/end` where either end may
be `..` (open) and one may be a duration (`P1Y2M`). Each instant is read as the
period it names (2019 is all of 2019), so `2019-05/2019` is in order and
`2020/2019` is not. Pure; never raises on text.
"""

from __future__ import annotations

import re
from calendar import monthrange
from dataclasses import dataclass
from datetime import datetime, timedelta

_INSTANT = re.compile(
    r"^(?P<y>[+-]?\d{4,})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2})"
    r"(?:[T ](?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,]\d+)?)?"
    r"(?P<z>Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$"
)
_DURATION = re.compile(
    r"^P(?!$)(\d+(?:[.,]\d+)?Y)?(\d+(?:[.,]\d+)?M)?(\d+(?:[.,]\d+)?W)?(\d+(?:[.,]\d+)?D)?"
    r"(T(?=\d)(\d+(?:[.,]\d+)?H)?(\d+(?:[.,]\d+)?M)?(\d+(?:[.,]\d+)?S)?)?$"
)


@dataclass(frozen=True, slots=True)
class Period:
    """The first and last moment an ISO 8601 instant names (naive, in UTC where a zone is
    given); `year` alone orders years outside datetime's 1..9999 (geologic or expanded)."""

    start: datetime
    end: datetime
    year: int


def instant(text: str) -> Period | None:
    """The period `2019`, `2019-05`, `2019-05-04` or `2019-05-04T10:00Z` names; None if not one."""
    found = _INSTANT.match(text.strip())
    if found is None:
        return None
    year = int(found["y"])
    if not 1 <= year <= 9999:  # outside datetime's range: well formed, ordered by year
        return Period(datetime.min, datetime.max, year) if found["m"] is None else None
    try:
        if found["m"] is None:
            return Period(datetime(year, 1, 1), datetime(year, 12, 31, 23, 59, 59), year)
        month = int(found["m"])
        if found["d"] is None:
            last = monthrange(year, month)[1] if 1 <= month <= 12 else 0
            end = datetime(year, month, last, 23, 59, 59)
            return Period(datetime(year, month, 1), end, year)
        day = datetime(year, month, int(found["d"]))
        if found["H"] is None:
            return Period(day, day.replace(hour=23, minute=59, second=59), year)
        moment = day.replace(
            hour=int(found["H"]), minute=int(found["M"]), second=int(found["S"] or 0)
        )
        moment -= _offset(found["z"])
        return Period(moment, moment, year)
    except ValueError:  # month 13, 30 February, hour 25
        return None


def _offset(zone: str | None) -> timedelta:
    if zone is None or zone == "Z":
        return timedelta(0)
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))


def is_duration(text: str) -> bool:
    return _DURATION.match(text.strip()) is not None


@dataclass(frozen=True, slots=True)
class Coverage:
    """A temporalCoverage literal read: well formed or not, and in order or not."""

    valid: bool
    in_order: bool = True


def coverage(text: str) -> Coverage:
    """An instant, or an interval `start/end` (`..` open, one side may be a duration)."""
    value = text.strip()
    if "/" not in value:
        return Coverage(instant(value) is not None)
    start_text, _, end_text = value.partition("/")
    if "/" in end_text:
        return Coverage(False)
    start, end = _side(start_text), _side(end_text)
    if start is None or end is None or (start_text.strip() == end_text.strip() == ".."):
        return Coverage(False)
    if isinstance(start, Period) and isinstance(end, Period):
        return Coverage(True, _ordered(start, end))
    if start == "duration" and end == "duration":
        return Coverage(False)  # ISO 8601 has no duration/duration interval
    return Coverage(True)


def _side(text: str) -> Period | str | None:
    text = text.strip()
    if text == "..":
        return ".."
    if is_duration(text):
        return "duration"
    return instant(text)


def _ordered(start: Period, end: Period) -> bool:
    if start.start == datetime.min or end.start == datetime.min:
        return start.year <= end.year
    return start.start <= end.end
