"""Crontab expressions with crontab's meaning, as APScheduler 3.x triggers.

APScheduler 3.x numbers weekdays from Monday = 0, while crontab (and every
operator) means Sunday by 0 and 7; `CronTrigger.from_crontab("0 3 * * 0")`
would run on Mondays. The day-of-week field is therefore rewritten into
weekday names before APScheduler sees it.
"""

from __future__ import annotations

import re

from apscheduler.triggers.cron import CronTrigger

# crontab numbering: 0 and 7 are Sunday
NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
FIELDS = ("minute", "hour", "day", "month", "day_of_week")
_TERM = re.compile(r"^(?P<range>\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:/(?P<step>\d+))?$")


def _day(token: str) -> int:
    if token.isdigit():
        number = int(token)
        if number > 7:
            raise ValueError(f"day of week {number} is not 0-7 (0 and 7 are Sunday)")
        return number % 7
    if token[:3] in NAMES:
        return NAMES.index(token[:3])
    raise ValueError(f"{token!r} is not a day of week (0-7 or sun-sat)")


def _days(term: str) -> list[int]:
    match = _TERM.match(term)
    if match is None:
        raise ValueError(f"{term!r} is not a day-of-week term")
    span, step = match.group("range"), int(match.group("step") or 1)
    if step < 1:
        raise ValueError("a step must be at least 1")
    if span == "*":
        first, last = 0, 6
    elif "-" in span:
        low, high = span.split("-")
        first, last = _day(low), _day(high)
        if high.isdigit() and int(high) == 7:
            last = 7  # "1-7" runs up to Sunday
    else:
        first = last = _day(span)
        if match.group("step"):
            last = 6
    if last < first:
        raise ValueError(f"{term!r}: a range must go from the earlier day to the later one")
    return [day % 7 for day in range(first, last + 1, step)]


def day_of_week(field: str) -> str:
    """A crontab day-of-week field as APScheduler weekday names ('1-5' -> 'mon,...,fri')."""
    if field in ("*", "?"):
        return "*"
    days: set[int] = set()
    for term in field.lower().split(","):
        days.update(_days(term))
    return ",".join(NAMES[day] for day in sorted(days))


def cron_trigger(expr: str, timezone: str = "UTC", jitter: int | None = None) -> CronTrigger:
    """A CronTrigger for a 5-field crontab expression or @daily-style macro.

    ValueError says which field is wrong and why.
    """
    fields = MACROS.get(expr.strip().lower(), expr).split()
    if len(fields) != 5:
        raise ValueError(
            f"has {len(fields)} fields; a cron expression has 5 "
            "(minute hour day-of-month month day-of-week)"
        )
    values = dict(zip(FIELDS, fields, strict=True))
    try:
        values["day_of_week"] = day_of_week(values["day_of_week"])
    except ValueError as exc:
        raise ValueError(f"day-of-week field {fields[4]!r}: {exc}") from None
    for name, value in values.items():  # name the field APScheduler would reject
        try:
            CronTrigger(timezone=timezone, **{name: value})
        except ValueError as exc:
            reason = re.sub(r"^Error validating expression '[^']*': ", "", str(exc))
            raise ValueError(f"{name.replace('_', '-')} field {value!r}: {reason}") from None
    return CronTrigger(timezone=timezone, jitter=jitter or None, **values)
