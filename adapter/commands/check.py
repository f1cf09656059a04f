"""`adapter check-dataset URL` and `adapter findings`: one page checked, the codes listed.

Exit codes of check-dataset: 0 harvestable, 1 not harvestable, 2 usage error or
the landing page could not be reached at all (refused, DNS, timeout).
"""

from __future__ import annotations

import json

import click

from adapter.commands.args import http_url
from adapter.findings import catalogue
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.models import DatasetReport
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.report import render_text, to_json
from adapter.signposting.resolve import FAILED, Resolution, find_landing_page, resolver_url

# Someone is waiting at the terminal: retry a failed connection after 0.25, 0.5, 1 s
# (the sync's fetcher waits 1, 2, 4 s).
INTERACTIVE_RETRY = 0.25

# The landing page itself never answered: nothing about the site was learned.
_UNREACHABLE = frozenset({"fetch/connection-failed", "fetch/timeout"})


@click.command("check-dataset")
@click.argument("url")
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
def check_dataset_command(url: str, as_json: bool, follow: bool, shacl: str | None) -> None:
    """Check whether DataONE can harvest the Dataset on the landing page URL.

    URL may also be a DOI (doi:10.x/y, https://doi.org/...) or the URL of a file or
    metadata record: the signposting path leads to its landing page first.
    """
    start = http_url(resolver_url(url) or url)
    if shacl is not None:
        _require_shapes(shacl)
    # no other host unasked
    options = CheckOptions(follow=follow, linksets_elsewhere=follow, shacl=shacl)
    policy = AddressPolicy([start])
    with Fetcher(options.limits, policy=policy, retry_base_delay=INTERACTIVE_RETRY) as fetcher:
        resolution = find_landing_page(url, fetcher, options.limits)
        report = check_landing_page(
            resolution.landing_url,
            fetcher,
            options,
            prefetched=resolution.error or resolution.fetched,
        )
    _note_resolution(report, url, resolution)
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


def _note_resolution(report: DatasetReport, url: str, resolution: Resolution) -> None:
    """The report names the URL given and the path that led from it to the landing page."""
    moved = resolution.landing_url != url
    # when nothing moved, a failed step is the page's own fetch failure, reported already
    report.findings[:0] = [f for f in resolution.findings if moved or f.code != FAILED.code]
    if moved:
        report.url = url
        report.path[:0] = resolution.path[:-1]


def exit_code(report: DatasetReport) -> int:
    if report.harvestable:
        return 0
    if report.fetched is None and any(f.code in _UNREACHABLE for f in report.findings):
        return 2
    return 1


@click.command("findings")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON list of {code, severity, explanation}."
)
@click.option("--markdown", is_flag=True, help="A Markdown table, as in the README.")
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
        for t in types:
            click.echo(f"{t.code:<{width}}  {t.severity:<7}  {t.explanation}")
