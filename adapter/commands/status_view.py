"""What `adapter config check` and `adapter status` say about a node.

Pure: a node's settings and its last run (the store's `RunInfo`, or None)
become lines for people or a dict for `--json`. The next run is computed
from the schedule: a cron expression's next time, or, for an interval, the
last run's start plus the interval (the scheduler counts intervals from its
own start, so without a last run it is "one interval after the start").
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from adapter.config.settings import NodeSettings
from adapter.limits import Limits
from adapter.service.scheduler import next_fire, run_counts


class LastRun(Protocol):
    """The fields of `adapter.store.db.RunInfo` shown here."""

    started_at: datetime
    finished_at: datetime | None
    status: str
    summary: dict[str, Any]
    error: str | None


def redacted(url: str) -> str:
    """A store URL with its password (from ${VAR}) hidden."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if value else "-"


def next_run(node: NodeSettings, last: LastRun | None, now: datetime | None = None) -> datetime:
    now = now or datetime.now(UTC)
    minutes = node.schedule.interval_minutes
    if minutes is not None and last is not None:
        return last.started_at + timedelta(minutes=minutes)
    return next_fire(node.schedule, now)


def _next_text(node: NodeSettings, last: LastRun | None, now: datetime) -> str:
    when = next_run(node, last, now)
    text = _when(when)
    if node.schedule.interval_minutes is not None and last is None:
        text = "one interval after `adapter schedule` starts"
    elif when < now:
        text += " (overdue: is `adapter schedule` running?)"
    if node.schedule.jitter_seconds:
        text += f", then up to {node.schedule.jitter_seconds} s of jitter"
    return text


def _duration(last: LastRun) -> float | None:
    if last.finished_at is None:
        return None
    return round((last.finished_at - last.started_at).total_seconds(), 3)


def _tally(summary: dict[str, Any], key: str) -> str:
    value = summary.get(key)
    if not isinstance(value, dict) or not value:
        return ""
    return ", ".join(f"{code} {n}" for code, n in sorted(value.items()))


def node_lines(
    node: NodeSettings, last: LastRun | None, *, with_settings: bool = False
) -> list[str]:
    """A node as indented lines for a terminal."""
    now = datetime.now(UTC)
    lines = [f"{node.id}  {node.name}"]
    if with_settings:
        lines += _settings_lines(node)
    else:
        lines += _last_lines(last)
    lines.append(f"  next run    {_next_text(node, last, now)}")
    return lines


def _last_lines(last: LastRun | None) -> list[str]:
    if last is None:
        return ["  last run    never"]
    seconds = _duration(last)
    if seconds is None:
        took = "still running (or the process was killed)"
    else:
        took = f"took {seconds:.1f} s"
    lines = [f"  last run    {_when(last.started_at)}, {last.status}, {took}"]
    counts = run_counts(last.summary)
    if counts:
        lines.append("  counts      " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for title, key in (("errors", "error_codes"), ("not synced", "not_harvestable")):
        tally = _tally(last.summary, key)
        if tally:
            lines.append(f"  {title:<12}{tally}")
    if last.error:
        lines.append(f"  failure     {last.error}")
    return lines


def _settings_lines(node: NodeSettings) -> list[str]:
    start = node.start
    urls = [f"entry {u}" for u in start.entry_urls] + [f"robots {u}" for u in start.robots_urls]
    urls += [f"sitemap {u}" for u in start.sitemap_urls]
    urls += [f"sitegraph {u}" for u in start.sitegraph_urls]
    polite = node.politeness
    delay = "Crawl-delay honoured" if polite.honour_crawl_delay else "Crawl-delay ignored"
    scope = node.scope
    hosts = ", ".join(scope.allowed_hosts) or "none"
    defaults = Limits.from_env()
    limits = {
        k: v
        for k, v in node.limit_overrides.model_dump(exclude_none=True).items()
        if v != getattr(defaults, k)
    }
    d1 = node.dataone
    access = "; ".join(f"{r.subject} {'+'.join(r.permissions)}" for r in d1.access_policy)
    return [
        f"  start       {'; '.join(urls)}",
        f"  schedule    {node.schedule.describe()}",
        f"  politeness  {polite.requests_per_second:g} requests/s per host, "
        f"{polite.concurrency} at a time, {delay}",
        f"  scope       {len(scope.include)} include, {len(scope.exclude)} exclude pattern(s); "
        f"extra hosts: {hosts}",
        f"  limits      {', '.join(f'{k}={v:g}' for k, v in limits.items()) or 'the defaults'}",
        f"  required    {', '.join(node.checks.required) or 'nothing beyond DataONE errors'}",
        f"  dataone     submitter {d1.submitter}; rightsHolder {d1.rights_holder}",
        f"              access {access}; checksum {d1.checksum_algorithm}; "
        f"replication {'allowed' if d1.replication.allowed else 'not allowed'}",
        *_notify_lines(node),
    ]


def _notify_lines(node: NodeSettings) -> list[str]:
    """Whom the node's COAR Notify inbox acts for, and where status announcements go."""
    notify = node.notify
    if not notify.enabled:
        return []
    trusted = "; ".join(f"{o.id} (answers to {o.inbox})" for o in notify.origins) or "nobody"
    lines = [f"  notify      trusts {trusted}, for pages on {', '.join(sorted(node.hosts()))}"]
    if notify.report_to:
        lines.append(f"              page status announced to {notify.report_to}")
    return lines


def node_status(node: NodeSettings, last: LastRun | None) -> dict[str, Any]:
    """A node's schedule, last run and next run for `--json`."""
    now = datetime.now(UTC)
    last_run = None
    if last is not None:
        last_run = {
            "started_at": last.started_at.isoformat(),
            "finished_at": last.finished_at.isoformat() if last.finished_at else None,
            "seconds": _duration(last),
            "status": last.status,
            "summary": last.summary,
            "error": last.error,
        }
    return {
        "id": node.id,
        "name": node.name,
        "schedule": node.schedule.model_dump(exclude_none=True),
        "last_run": last_run,
        "next_run": next_run(node, last, now).isoformat(),
    }
