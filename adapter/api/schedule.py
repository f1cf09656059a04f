"""A node's sync schedule as DataONE's seven-attribute Quartz `schedule`.

The Node document tells the coordinating node how often to harvest. Our
configuration holds a five-field crontab (`m h dom mon dow`) or an interval
in minutes; DataONE wants Quartz fields (`sec min hour mday mon wday year`,
days of week 1-7 from Sunday, `?` in one of the two day fields). The CN only
needs to harvest after our sync has run, so an interval that does not divide
an hour or a day is rounded to the nearest Quartz step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapter.config.crontab import MACROS

_FIELD = re.compile(r"^[\?\*\d/#,\-a-zA-Z]+$")  # D1-XSD CrontabEntry


@dataclass(frozen=True, slots=True)
class Schedule:
    """The attributes of `<schedule>`; every one is required by the XSD."""

    sec: str = "0"
    min: str = "0"
    hour: str = "*"
    mday: str = "*"
    mon: str = "*"
    wday: str = "?"
    year: str = "*"


HOURLY = Schedule()


def from_interval(minutes: float) -> Schedule:
    """Every N minutes as a Quartz step (`0/N`), in hours or days when N is larger."""
    whole = max(1, round(minutes))
    if whole < 60:
        return Schedule(min=f"0/{whole}")
    hours = max(1, round(whole / 60))
    if hours < 24:
        return Schedule(min="0", hour=f"0/{hours}")
    days = max(1, round(hours / 24))
    return Schedule(min="0", hour="0", mday="*" if days == 1 else f"1/{days}")


def from_cron(expression: str) -> Schedule:
    """A five-field crontab as Quartz fields; something we cannot map gives hourly."""
    text = MACROS.get(expression.strip().lower(), expression)
    fields = text.split()
    if len(fields) != 5 or not all(_FIELD.match(f) for f in fields):
        return HOURLY
    minute, hour = _step(fields[0], 0), _step(fields[1], 0)
    mday, mon = _step(fields[2], 1), _step(fields[3], 1)
    wday = _weekdays(fields[4])
    if wday == "*":
        wday = "?"
    elif mday == "*":
        mday = "?"
    else:  # cron means "either"; Quartz cannot say that: keep the day of month
        wday = "?"
    return Schedule(min=minute, hour=hour, mday=mday, mon=mon, wday=wday)


def _step(field: str, first: int) -> str:
    """`*/5` is `0/5` in Quartz (the start is explicit; days and months count from 1)."""
    return re.sub(r"^\*/", f"{first}/", field)


def _weekdays(field: str) -> str:
    """cron counts Sunday as 0 or 7, Quartz as 1; names are the same in both."""
    if field in ("*", "?"):
        return field

    def shift(match: re.Match[str]) -> str:
        day = int(match.group(0)) % 7
        return str(day + 1)

    if "/" in field:
        start, _, step = field.partition("/")
        start = "1" if start in ("*", "0") else re.sub(r"\d+", shift, start)
        return f"{start}/{step}"
    return re.sub(r"\d+", shift, field)


def from_settings(cron: str | None, interval_minutes: float | None) -> Schedule:
    if cron:
        return from_cron(cron)
    if interval_minutes:
        return from_interval(interval_minutes)
    return HOURLY
