"""`adapter discover URL [--json]`: list the landing pages a repository's sitemaps lead to.

URL is a repository entry URL, a robots.txt or a sitemap (see `adapter.discovery.walk`).
Each landing page is printed as soon as it is parsed, then a summary.
`--json` prints one JSON object per line:

    {"type": "entry", "loc": ..., "lastmod": ISO-8601 | null, "sitemap": ...,
     "links": [{"rel", "href", "type", "profile", "extra": {...}}], "attributes": {...}}
    {"type": "finding", "code", "severity", "message", "url", "where"}
    {"type": "summary", "entries": N, "sitemaps": N, "seconds": t,
     "findings": {code: count}, "severities": {severity: count}}

Exit status: 0 when at least one landing page was found, 1 when none was,
2 for a usage error.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from typing import Any

import click

from adapter.commands.args import epilog, http_url
from adapter.discovery.findings import SITEMAP_READ
from adapter.discovery.robots import RobotsCache
from adapter.discovery.walk import discover as discover_pages
from adapter.discovery.walk import plural
from adapter.findings import Finding
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.http.politeness import HostPacer
from adapter.limits import Limits
from adapter.models import SitemapEntry

PROGRESS_EVERY = 1000


def entry_dict(entry: SitemapEntry) -> dict[str, Any]:
    return {
        "type": "entry",
        "loc": entry.loc,
        "lastmod": entry.lastmod.isoformat() if entry.lastmod else None,
        "sitemap": entry.sitemap,
        "links": [
            {
                "rel": link.rel,
                "href": link.href,
                "type": link.type,
                "profile": link.profile,
                "extra": dict(link.extra),
            }
            for link in entry.links
        ],
        "attributes": dict(entry.attributes),
    }


def _entry_text(entry: SitemapEntry) -> str:
    when = entry.lastmod.isoformat() if entry.lastmod else "-"
    lines = [f"{entry.loc}  lastmod {when}  sitemap {entry.sitemap}"]
    for link in entry.links:
        kind = f" ({link.type})" if link.type else ""
        lines.append(f"    signmap {link.rel} -> {link.href}{kind}")
    if entry.attributes:
        lines.append("    rs:md " + " ".join(f"{k}={v}" for k, v in entry.attributes))
    return "\n".join(lines)


def _finding_text(finding: Finding) -> str:
    return f"  {finding.severity} {finding.code}: {finding.message} [{finding.url}]"


def _patterns(values: tuple[str, ...], option: str) -> list[re.Pattern[str]]:
    try:
        return [re.compile(v) for v in values]
    except re.error as exc:
        raise click.BadParameter(f"not a regular expression: {exc}", param_hint=option) from exc


@click.command(
    "discover",
    epilog=epilog(
        "adapter discover https://data.example.org/",
        "adapter discover https://data.example.org/sitemap.xml --json",
        exits="0 landing pages found, 1 none, 2 a bad URL.",
    ),
)
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("--allow-host", multiple=True, help="Also accept entries on this host (repeatable).")
@click.option("--include", multiple=True, help="Keep only URLs matching this regex.")
@click.option("--exclude", multiple=True, help="Drop URLs matching this regex.")
@click.option("--no-crawl-delay", is_flag=True, help="Do not slow down for robots.txt Crawl-delay.")
@click.option(
    "--rate",
    type=click.FloatRange(min=0.01),
    default=2.0,
    show_default=True,
    help="Requests per second per host.",
)
def discover(
    url: str,
    as_json: bool,
    allow_host: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    no_crawl_delay: bool,
    rate: float,
) -> int:
    """List the landing pages URL's robots.txt and sitemaps lead to, as they are found."""
    url = http_url(url)
    includes, excludes = _patterns(include, "--include"), _patterns(exclude, "--exclude")
    policy = AddressPolicy([url, *(h for h in allow_host if "://" in h)])
    progress = sys.stderr.isatty()
    counts: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    entries = 0
    started = time.monotonic()
    with Fetcher(Limits.from_env(), policy=policy, pacer=HostPacer(rate)) as fetcher:
        robots = RobotsCache(fetcher, honour_crawl_delay=not no_crawl_delay)
        fetcher.gate = robots.gate
        stream = discover_pages(
            [url],
            fetcher,
            robots=robots,
            allowed_hosts=allow_host,
            include=includes,
            exclude=excludes,
        )
        for item in stream:
            if isinstance(item, SitemapEntry):
                entries += 1
                line = json.dumps(entry_dict(item)) if as_json else _entry_text(item)
                tick = entries % PROGRESS_EVERY == 0
            else:
                counts[item.code] += 1
                severities[str(item.severity)] += 1
                body = {"type": "finding", **item.as_dict()}
                line = json.dumps(body) if as_json else _finding_text(item)
                tick = item.code == SITEMAP_READ.code
            click.echo(line)
            if progress and tick:
                files = plural(counts[SITEMAP_READ.code], "sitemap")
                click.echo(f"\r{plural(entries, 'landing page')}, {files} read", err=True, nl=False)
    if progress:
        click.echo("", err=True)
    seconds = round(time.monotonic() - started, 3)
    sitemaps = counts[SITEMAP_READ.code]
    if as_json:
        summary = {
            "type": "summary",
            "entries": entries,
            "sitemaps": sitemaps,
            "seconds": seconds,
            "findings": dict(sorted(counts.items())),
            "severities": dict(sorted(severities.items())),
        }
        click.echo(json.dumps(summary))
    else:
        pages, files = plural(entries, "landing page"), plural(sitemaps, "sitemap")
        click.echo(f"\n{pages} from {files} in {seconds:.1f} s")
        for code, n in sorted(counts.items()):
            click.echo(f"  {n:>6}  {code}")
    return 0 if entries else 1
