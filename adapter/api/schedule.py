"""A node's sync schedule as DataONE's seven-attribute Quartz `schedule`.

The Node document tells the coordinating node how often to harvest. Our
configuration holds a five-field crontab (`m h dom mon dow`) or an interval
in minutes; DataONE wants Quartz fields (`sec min hour mday mon wday year`,
days of week 1-7 from Sunday, `?` in one of the two day fields). The CN only
needs to harvest after our sync has run, so an interval that does not divide
an hour or a day is rounded to the nearest Quartz step.

The CN reads the schedule as UTC, while a crontab runs in the node's
`schedule.timezone`: `harvest_schedule` converts it with the zone's offset
at the moment asked (so the Node document follows daylight saving time) and
shifts it by `dataone.harvest_delay_minutes`, so the published harvest
times fall after the node's own sync has started and, with a delay longer
than a sync takes, after it has finished. Where the shift moves a time into
another day and the cron names days of the month (or weekdays it cannot
shift), the published schedule widens to every day: the CN then looks more
often than needed, never less.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from zoneinfo import ZoneInfo

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


def harvest_schedule(
    cron: str | None,
    interval_minutes: float | None,
    timezone: str,
    now: datetime,
    delay_minutes: int = 0,
) -> Schedule:
    """The schedule a Node document publishes: in UTC, `delay_minutes` after each sync.

    An interval schedule runs from the service's start, not at clock times,
    so it is published as its Quartz step, unshifted.
    """
    schedule = from_settings(cron, interval_minutes)
    if not cron:
        return schedule
    offset = now.astimezone(ZoneInfo(timezone)).utcoffset()  # `now` is aware
    offset_minutes = 0 if offset is None else int(offset.total_seconds() // 60)
    return shifted(schedule, delay_minutes - offset_minutes)


def shifted(schedule: Schedule, minutes: int) -> Schedule:
    """The same clock times `minutes` later (earlier when negative), as Quartz fields."""
    mins, hours = _expand(schedule.min, 0, 59), _expand(schedule.hour, 0, 23)
    if minutes == 0 or mins is None or hours is None:
        return schedule
    pairs: set[tuple[int, int]] = set()
    days: set[int] = set()
    for hour in hours:
        for minute in mins:
            moment = hour * 60 + minute + minutes
            days.add(moment // 1440)
            pairs.add(divmod(moment % 1440, 60))
    new_hours = {h for h, _ in pairs}
    new_mins = {m for _, m in pairs}  # their product may add times: more often, never less
    moved = replace(schedule, min=_render(new_mins, 0, 59), hour=_render(new_hours, 0, 23))
    return _shift_days(moved, days)


def _shift_days(schedule: Schedule, days: set[int]) -> Schedule:
    if days == {0} or (schedule.mday in ("*", "?") and schedule.wday in ("*", "?")):
        return schedule
    weekdays = _expand(schedule.wday, 1, 7) if schedule.mday in ("*", "?") else None
    if len(days) != 1 or weekdays is None:
        return replace(schedule, mday="*", wday="?")
    delta = days.pop()
    return replace(schedule, wday=_render({(d - 1 + delta) % 7 + 1 for d in weekdays}, 1, 7))


def _expand(field: str, low: int, high: int) -> set[int] | None:
    """The values a numeric Quartz/cron field names, or None for what it cannot read."""
    values: set[int] = set()
    for term in field.split(","):
        match = re.fullmatch(r"(\*|\?|\d+)(?:-(\d+))?(?:/(\d+))?", term)
        if match is None:
            return None
        first, last, step = match.groups()
        if first in ("*", "?"):
            begin, end = low, high
        else:
            begin = int(first)
            end = int(last) if last else (high if step else begin)
        stride = int(step) if step else 1
        if not (low <= begin <= end <= high) or stride < 1:
            return None
        values.update(range(begin, end + 1, stride))
    return values


def _render(values: set[int], low: int, high: int) -> str:
    """A value set as `*`, a Quartz step `a/n` reaching the range's end, or a list."""
    ordered = sorted(values)
    if ordered == list(range(low, high + 1)):
        return "*"
    if len(ordered) > 2:
        stride = ordered[1] - ordered[0]
        if ordered == list(range(ordered[0], high + 1, stride)):
            return f"{ordered[0]}/{stride}"
    return ",".join(map(str, ordered))
