"""`adapter discover URL [--json]`: list the landing pages a repository's sitemaps lead to.

URL is a repository entry URL, a robots.txt or a sitemap (see `adapter.discovery.walk`),
or a sitegraph (`--sitegraph`, or a .jsonld/.json URL): its Datasets are listed, each with
`in_graph` (checked from the graph, never fetched), and the pages a catalogue links.
`--config FILE [--node ID]` discovers a configured node's start, sitegraphs included.
Each landing page is printed as soon as it is parsed, then a summary.
`--json` prints one JSON object per line:

    {"type": "entry", "loc": ..., "lastmod": ISO-8601 | null, "sitemap": ...,
     "links": [{"rel", "href", "type", "profile", "extra": {...}}], "attributes": {...},
     "in_graph": bool}
    {"type": "finding", "code", "severity", "message", "url", "where"}
    {"type": "summary", "entries": N, "sitemaps": N, "sitegraphs": N, "in_graph": N,
     "seconds": t, "findings": {code: count}, "severities": {severity: count}}

Exit status: 0 when at least one landing page was found, 1 when none was,
2 for a usage error.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Any
from urllib.parse import urlsplit

import click

from adapter.commands.args import config_node, epilog, http_url
from adapter.discovery.findings import SITEMAP_READ
from adapter.discovery.graphs import discover_sitegraphs
from adapter.discovery.robots import RobotsCache
from adapter.discovery.sitegraph import SITEGRAPH_READ, SITEGRAPH_SUFFIXES, GraphRead
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
        "in_graph": entry.document is not None,
    }


def _entry_text(entry: SitemapEntry) -> str:
    if entry.document is not None:
        return f"{entry.loc}  in sitegraph {entry.sitemap}"
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
        "adapter discover https://data.example.org/odis/datasets.jsonld",
        "adapter discover --config nodes.yaml --node urn:node:EXAMPLE",
        exits="0 landing pages (or Datasets) found, 1 none, 2 a bad URL or configuration.",
    ),
)
@click.argument("url", required=False)
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
@click.option(
    "--sitegraph",
    is_flag=True,
    help="Read URL as a sitegraph (a JSON-LD document of many Datasets, or a DataCatalog "
    "page); automatic for .jsonld/.json URLs.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Discover a configured node's start (sitemaps and sitegraphs), with its scope, "
    "limits and rate, instead of URL.",
)
@click.option(
    "--node", "node_id", metavar="ID", help="The node of --config (default: its only one)."
)
def discover(
    url: str | None,
    as_json: bool,
    allow_host: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    no_crawl_delay: bool,
    rate: float,
    sitegraph: bool,
    config_path: str | None,
    node_id: str | None,
) -> int:
    """List the landing pages URL's robots.txt and sitemaps lead to, as they are found.

    URL may also be a sitegraph (its Datasets listed), or --config a node's start.
    """
    start = _start(url, sitegraph, config_path, node_id)
    includes = [*start.include, *_patterns(include, "--include")]
    excludes = [*start.exclude, *_patterns(exclude, "--exclude")]
    hosts = (*start.hosts, *allow_host)
    policy = AddressPolicy([*start.trusted, *(h for h in allow_host if "://" in h)])
    progress = sys.stderr.isatty()
    counts: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    entries = in_graph = 0
    started = time.monotonic()
    pacer = HostPacer(start.rate or rate)
    with Fetcher(start.limits, policy=policy, pacer=pacer) as fetcher:
        robots = RobotsCache(fetcher, honour_crawl_delay=not no_crawl_delay)
        fetcher.gate = robots.gate
        stream = chain(
            discover_pages(
                start.urls,
                fetcher,
                limits=start.limits,
                robots=robots,
                allowed_hosts=hosts,
                include=includes,
                exclude=excludes,
            ),
            discover_sitegraphs(
                start.graphs, fetcher, limits=start.limits, include=includes, exclude=excludes
            ),
        )
        for item in stream:
            if isinstance(item, GraphRead):
                continue
            if isinstance(item, SitemapEntry):
                entries += 1
                in_graph += item.document is not None
                line = json.dumps(entry_dict(item)) if as_json else _entry_text(item)
                tick = entries % PROGRESS_EVERY == 0
            else:
                counts[item.code] += 1
                severities[str(item.severity)] += 1
                body = {"type": "finding", **item.as_dict()}
                line = json.dumps(body) if as_json else _finding_text(item)
                tick = item.code in (SITEMAP_READ.code, SITEGRAPH_READ.code)
            click.echo(line)
            if progress and tick:
                files = plural(counts[SITEMAP_READ.code], "sitemap")
                click.echo(f"\r{plural(entries, 'landing page')}, {files} read", err=True, nl=False)
    if progress:
        click.echo("", err=True)
    seconds = round(time.monotonic() - started, 3)
    sitemaps, graphs = counts[SITEMAP_READ.code], counts[SITEGRAPH_READ.code]
    if as_json:
        summary = {
            "type": "summary",
            "entries": entries,
            "sitemaps": sitemaps,
            "sitegraphs": graphs,
            "in_graph": in_graph,
            "seconds": seconds,
            "findings": dict(sorted(counts.items())),
            "severities": dict(sorted(severities.items())),
        }
        click.echo(json.dumps(summary))
    else:
        pages, files = plural(entries - in_graph, "landing page"), plural(sitemaps, "sitemap")
        if start.graphs:
            pages += f" and {plural(in_graph, 'Dataset')} in sitegraphs"
            files += f" and {plural(graphs, 'sitegraph')}"
        click.echo(f"\n{pages} from {files} in {seconds:.1f} s")
        for code, n in sorted(counts.items()):
            click.echo(f"  {n:>6}  {code}")
    return 0 if entries else 1


@dataclass(frozen=True, slots=True)
class _Start:
    """Where discovery starts: URL's, or a configured node's, with its scope and limits."""

    urls: tuple[str, ...]  # entry URLs, robots.txt, sitemaps
    graphs: tuple[str, ...]  # sitegraphs
    limits: Limits
    trusted: tuple[str, ...]
    hosts: tuple[str, ...] = ()
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    rate: float | None = None  # None: --rate


def _start(
    url: str | None, sitegraph: bool, config_path: str | None, node_id: str | None
) -> _Start:
    if config_path is not None:
        if url is not None:
            raise click.UsageError("give URL or --config FILE, not both")
        node = config_node(config_path, node_id)
        scope = node.scope
        return _Start(
            node.start.urls(),
            node.start.sitegraph_urls,
            node.limits(),
            node.trusted_origins(),
            tuple(scope.allowed_hosts),
            tuple(scope.include_patterns),
            tuple(scope.exclude_patterns),
            node.politeness.requests_per_second,
        )
    if node_id is not None:
        raise click.UsageError("--node needs --config FILE")
    if url is None:
        raise click.UsageError("give a URL, or --config FILE")
    url = http_url(url)
    graph = sitegraph or urlsplit(url).path.lower().endswith(SITEGRAPH_SUFFIXES)
    urls, graphs = ((), (url,)) if graph else ((url,), ())
    return _Start(urls, graphs, Limits.from_env(), (url,))
