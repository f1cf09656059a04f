"""`adapter check-dataset URL` and `adapter findings`: one page checked, the codes listed.

Exit codes of check-dataset: 0 harvestable, 1 not harvestable, 2 usage error or
the landing page could not be reached at all (refused, DNS, timeout).
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import click

from adapter import USER_AGENT
from adapter.commands.args import BadValue, config_node, epilog, http_url, output_width
from adapter.commands.sitegraph import (
    GraphCheck,
    check_graph,
    graph_json,
    graph_of,
    graph_text,
    read_graph,
)
from adapter.discovery.sitegraph import SITEGRAPH_SUFFIXES
from adapter.findings import catalogue
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import Limits
from adapter.models import DatasetReport, Fetched
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.render.need import Mode
from adapter.render.rendered import CHROMIUM, render_if_needed
from adapter.render.rendered import require as require_rendering
from adapter.report.jsonview import to_json
from adapter.report.text import render_text
from adapter.report.verdicts import verdict
from adapter.signposting.resolve import FAILED, Resolution, find_landing_page, resolver_url

# Someone is waiting at the terminal: retry a failed connection after 0.25, 0.5, 1 s
# (the sync's fetcher waits 1, 2, 4 s).
INTERACTIVE_RETRY = 0.25


EXAMPLES = epilog(
    "adapter check-dataset https://data.example.org/dataset/1",
    "adapter check-dataset doi:10.5066/F7VX0DMQ --json",
    "adapter check-dataset --render https://portal.example.org/dataset/42",
    "adapter check-dataset https://data.example.org/odis/datasets.jsonld",
    "adapter check-dataset 'https://data.example.org/odis/datasets.jsonld#https://data.example.org/ds/7'",
    "adapter check-dataset --config node.yaml --node urn:node:EX https://example.org/d/1",
    "adapter check-dataset --file draft.html --base-url https://example.org/d/1",
    "curl -s https://example.org/d/1 | adapter check-dataset --file -",
    exits="0 harvestable, 1 not harvestable, 2 a usage error or the page could not be "
    "checked at all (refused connection or address, DNS, timeout): COULD NOT CHECK.",
)


@click.command("check-dataset", epilog=EXAMPLES)
@click.argument("url", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the report as JSON (schema_version 1)."
)
@click.option(
    "--follow",
    is_flag=True,
    help="Also visit the signposting targets and link sets on other hosts (bounded).",
)
@click.option(
    "--shacl",
    "shacl",
    is_flag=False,
    flag_value="soso",
    default=None,
    metavar="[FILE]",
    help="Also validate each Dataset with SHACL: the bundled science-on-schema.org shapes, "
    "or the Turtle shapes FILE (an onboarding view; its findings advise, never block).",
)
@click.option(
    "--profile",
    type=click.Choice(["dataone", "soso", "mnlite", "custom"]),
    default=None,
    help="The requirement profile that decides 'harvestable' (default: the node's with "
    "--config, else dataone): dataone (a DOI, an ISO metadata copy, data downloads), soso "
    "(science-on-schema.org), mnlite (an identifier and a name), custom (the node's list).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Check with a node's profile, required checks, limits and trusted origins (see --node).",
)
@click.option(
    "--node", "node_id", metavar="ID", help="The node of --config (default: its only one)."
)
@click.option(
    "--file",
    "file_path",
    metavar="PATH",
    help="Check a page saved as a file (HTML or JSON-LD; - reads standard input) before it "
    "is published. URL, if given, is where it will live.",
)
@click.option("--base-url", metavar="URL", help="With --file: where the page will live.")
@click.option(
    "--render",
    is_flag=True,
    help="Render the page in a headless chromium when its HTML holds no Dataset (its "
    "JavaScript run, every request through the adapter's address policy); needs the "
    "render extra.",
)
@click.option(
    "--sitegraph",
    is_flag=True,
    help="Read URL as a sitegraph (one JSON-LD document of many Datasets, or a DataCatalog "
    "page) and check each Dataset in it; automatic for .jsonld/.json URLs and for pages that "
    "read as one.",
)
@click.option(
    "--dataset",
    "dataset_id",
    metavar="ID",
    help="With a sitegraph: check only the Dataset with this @id or url (as URL#ID does).",
)
def check_dataset_command(
    url: str | None,
    as_json: bool,
    follow: bool,
    shacl: str | None,
    profile: str | None,
    config_path: str | None,
    node_id: str | None,
    file_path: str | None,
    base_url: str | None,
    render: bool,
    sitegraph: bool,
    dataset_id: str | None,
) -> None:
    """Check whether DataONE can harvest the Dataset on the landing page URL.

    URL may also be a DOI (doi:10.x/y, https://doi.org/...) or the URL of a file or
    metadata record: the signposting path leads to its landing page first. A sitegraph
    (one JSON-LD document of many Datasets) gets a report per Dataset, totals first.
    """
    if url == "-" and file_path is None:
        url, file_path = None, "-"
    if shacl is not None:
        _require_shapes(shacl)
    setup = _setup(config_path, node_id, follow, shacl)
    if render and setup.render_mode == "never":
        setup = replace(setup, render_mode="auto")
    if setup.render_mode != "never" and file_path is None:
        require_rendering(setup.browser)  # one line saying what to install
    elif render:
        raise click.UsageError("--render renders the page at its URL: not with --file")
    if profile is not None:
        setup = replace(setup, options=replace(setup.options, profile=profile))
    if file_path is not None:
        report = _check_file(file_path, base_url or url, setup)
    elif url is None:
        raise click.UsageError("give a URL (or a DOI), or --file PATH (- for standard input)")
    else:
        checked = _check_url(url, setup, sitegraph or dataset_id is not None, dataset_id)
        if isinstance(checked, GraphCheck):
            body = json.dumps(graph_json(checked), indent=2, ensure_ascii=False)
            click.echo(body if as_json else graph_text(checked), nl=as_json)
            raise SystemExit(checked.exit_code())
        report = checked
    if as_json:
        click.echo(json.dumps(to_json(report), indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(report), nl=False)
    raise SystemExit(exit_code(report))


def _require_shapes(source: str) -> None:
    """A shapes file that cannot be read is a usage error, before anything is fetched."""
    from adapter.dataone.shacl import ShapesError, load_shapes  # lazy: rdflib graphs

    try:
        load_shapes(source)
    except ShapesError as exc:
        raise click.BadParameter(str(exc), param_hint="--shacl") from None


@dataclass(frozen=True, slots=True)
class _Setup:
    """What a check runs with: the defaults, or a configured node's."""

    options: CheckOptions
    trusted: tuple[str, ...] = ()
    user_agent: str | None = None
    render_mode: Mode = "never"  # --render (auto), or the node's rendering.mode
    browser: str = CHROMIUM


def _setup(config_path: str | None, node_id: str | None, follow: bool, shacl: str | None) -> _Setup:
    # link sets on other hosts only with --follow: no other host unasked
    if config_path is None:
        if node_id is not None:
            raise click.UsageError("--node needs --config FILE")
        limits = Limits.from_env()  # ADAPTER_LIMITS, read as the command starts
        options = CheckOptions(limits=limits, follow=follow, linksets_elsewhere=follow, shacl=shacl)
        return _Setup(options)
    node = config_node(config_path, node_id)
    options = CheckOptions(
        limits=node.limits(),
        follow=follow,
        linksets_elsewhere=follow,
        profile=node.checks.profile,
        identifier_schemes=node.checks.identifier_schemes,
        required=frozenset(node.checks.required),
        shacl=shacl or node.checks.shacl,
    )
    rendering = node.rendering
    trusted = tuple(node.trusted_origins())
    agent = node.politeness.user_agent
    return _Setup(options, trusted, agent, rendering.mode, rendering.browser)


def _fetcher(setup: _Setup, origins: list[str]) -> Fetcher:
    policy = AddressPolicy([*origins, *setup.trusted])
    return Fetcher(
        setup.options.limits,
        user_agent=setup.user_agent or USER_AGENT,
        policy=policy,
        retry_base_delay=INTERACTIVE_RETRY,
    )


def _check_url(
    url: str, setup: _Setup, sitegraph: bool, pick: str | None
) -> DatasetReport | GraphCheck:
    """The page's report; a sitegraph's Datasets checked each (asked for, named by its
    path's suffix, or read as one once fetched; a fragment picks one of them)."""
    start = http_url(resolver_url(url) or url)
    limits = setup.options.limits
    address, fragment = urldefrag(start)
    pick = pick or fragment or None
    with _fetcher(setup, [start]) as fetcher:
        if sitegraph or urlsplit(address).path.lower().endswith(SITEGRAPH_SUFFIXES):
            graph = read_graph(address, fetcher, setup.options)
            return check_graph(graph, fetcher, setup.options, pick)
        resolution = find_landing_page(url, fetcher, limits)
        found = graph_of(resolution.fetched, setup.options)
        if found is not None:
            return check_graph(found, fetcher, setup.options, pick)
        got = resolution.error or resolution.fetched
        page = (
            render_if_needed(got, fetcher, setup.render_mode, 1, setup.browser)
            if got is not None
            else None
        )
        report = check_landing_page(resolution.landing_url, fetcher, setup.options, prefetched=page)
    _note_resolution(report, url, resolution)
    return report


def _check_file(path: str, where: str | None, setup: _Setup) -> DatasetReport:
    """Check a page that is not published yet, as if `where` had answered it with 200."""
    limits = setup.options.limits
    body = _read_page(path, limits.max_page_bytes)
    if where is not None:
        page_url = http_url(where, "--base-url")
    elif path == "-":
        page_url = "file:///dev/stdin"
    else:
        page_url = Path(path).resolve().as_uri()
    fetched = Fetched(
        url=page_url,
        final_url=page_url,
        status=200,
        headers={"content-type": _sniff(body)},
        body=body,
    )
    origins = [page_url] if page_url.startswith("http") else []
    with _fetcher(setup, origins) as fetcher:
        return check_landing_page(page_url, fetcher, setup.options, prefetched=fetched)


def _read_page(path: str, cap: int) -> bytes:
    try:
        if path == "-":
            body = sys.stdin.buffer.read(cap + 1)
        else:
            with open(path, "rb") as f:
                body = f.read(cap + 1)
    except OSError as exc:
        raise BadValue(f"--file {path}: {exc.strerror or exc}; give a readable file") from None
    if len(body) > cap:
        raise BadValue(f"--file {path} is larger than max_page_bytes ({cap} bytes)")
    return body


def _sniff(body: bytes) -> str:
    """A saved page has no Content-Type: JSON-LD when it is JSON, else HTML."""
    head = body.lstrip()[:1]
    return "application/ld+json" if head in (b"{", b"[") else "text/html; charset=utf-8"


def _note_resolution(report: DatasetReport, url: str, resolution: Resolution) -> None:
    """The report names the URL given and the path that led from it to the landing page."""
    moved = resolution.landing_url != url
    # when nothing moved, a failed step is the page's own fetch failure, reported already
    report.findings[:0] = [f for f in resolution.findings if moved or f.code != FAILED.code]
    if moved:
        report.url = url
        report.path[:0] = resolution.path[:-1]


def exit_code(report: DatasetReport) -> int:
    """0 harvestable, 1 not harvestable, 2 could not check (the page never answered)."""
    return {"harvestable": 0, "could-not-check": 2}.get(verdict(report), 1)


@click.command(
    "findings",
    epilog=epilog(
        "adapter findings",
        "adapter findings --markdown > findings.md",
        exits="0 ok, 2 usage error.",
    ),
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON list of {code, severity, explanation}."
)
@click.option(
    "--markdown",
    is_flag=True,
    help="A Markdown table of every code.",
)
def findings(as_json: bool, markdown: bool) -> None:
    """List every finding code the adapter can report, with its severity and meaning."""
    types = catalogue()
    if as_json:
        rows = [
            {"code": t.code, "severity": str(t.severity), "explanation": t.explanation}
            for t in types
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    elif markdown:
        click.echo("| code | severity | meaning |\n|---|---|---|")
        for t in types:
            click.echo(f"| `{t.code}` | {t.severity} | {t.explanation.replace('|', '/')} |")
    else:
        width = max((len(t.code) for t in types), default=0)
        columns = output_width()
        indent = width + 11
        for t in types:
            text = t.explanation
            if columns is not None and columns - indent >= 30:  # wrap to the terminal
                text = textwrap.fill(text, columns - indent).replace("\n", "\n" + " " * indent)
            click.echo(f"{t.code:<{width}}  {t.severity:<7}  {text}")
