"""`adapter pages`: every page of the store with its last outcome; `pages show URL`: its report.

An operator sees why a page failed without `sqlite3`: the list filters by
node, finding code and verdict (`--json`: one object per line), and `show`
prints the report the sync kept, exactly as `adapter check-dataset` prints it.
Exit codes of `show`: 0 the stored report says harvestable, 1 it does not,
2 no such page (or no report yet).
"""

from __future__ import annotations

import json
from typing import Any

import click

from adapter.commands.args import BadValue, epilog, fit, output_width
from adapter.commands.sync import store_options, target
from adapter.discovery.findings import SITEMAP_READ
from adapter.store.db import Store
from adapter.store.frontier import PageInfo, find_page, list_pages

HARVESTED = frozenset({"harvested", "unchanged", "not-modified"})


def page_json(page: PageInfo) -> dict[str, Any]:
    """One page as `pages --json` prints it."""
    return {
        "node_id": page.node_id,
        "url": page.url,
        "last_status": page.last_status,
        "http_status": page.http_status,
        "last_checked_at": page.last_checked_at.isoformat() if page.last_checked_at else None,
        "due": page.due,
        "harvestable": page.harvestable,
        "codes": page.codes(),
    }


def page_line(page: PageInfo, width: int | None) -> str:
    """One page in a line that fits `width` columns: status, HTTP status, URL, codes."""
    status = page.last_status or "not checked"
    http = str(page.http_status or "-")
    codes = ", ".join(c for c in page.codes() if c != SITEMAP_READ.code)
    line = f"{status:<16} {http:>4}  {page.url}" + (f"  {codes}" if codes else "")
    return fit(line, width)


@click.group(
    "pages",
    invoke_without_command=True,
    epilog=epilog(
        "adapter pages --store sqlite:///harvest.db --not-harvestable",
        "adapter pages --store sqlite:///h.db --code dataone/identifier-not-doi --json",
        "adapter pages show https://example.org/d/1 --store sqlite:///harvest.db",
        exits="0 ok (show: the stored report says harvestable), 1 show: it says not "
        "harvestable, 2 a bad or missing store, or no such page.",
    ),
)
@store_options
@click.option("--node", "node_id", metavar="ID", help="Only this node's pages.")
@click.option("--code", metavar="CODE", help="Only pages whose last report has this finding.")
@click.option(
    "--harvestable/--not-harvestable",
    default=None,
    help="Only pages whose last report says harvestable (or not).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per page, one per line.")
@click.pass_context
def pages(
    ctx: click.Context,
    config_path: str | None,
    store_url: str | None,
    node_id: str | None,
    code: str | None,
    harvestable: bool | None,
    as_json: bool,
) -> None:
    """The store's landing pages with their last outcome (`pages show URL`: one's report)."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = (config_path, store_url, node_id)
        return
    store = Store.open(target(config_path, store_url).store_url, create=False)
    width = output_width()
    shown = 0
    try:
        for page in list_pages(store, node_id=node_id, code=code, harvestable=harvestable):
            shown += 1
            if as_json:
                click.echo(json.dumps(page_json(page), sort_keys=True))
            else:
                click.echo(page_line(page, width))
    finally:
        store.close()
    if not as_json:
        click.echo(f"{shown} page(s); `adapter pages show URL` for one's report", err=True)


@pages.command("show")
@click.argument("url")
@store_options
@click.option("--node", "node_id", metavar="ID", help="The node, when several list the URL.")
@click.option("--json", "as_json", is_flag=True, help="The stored report as JSON.")
@click.pass_context
def show(
    ctx: click.Context,
    url: str,
    config_path: str | None,
    store_url: str | None,
    node_id: str | None,
    as_json: bool,
) -> None:
    """Print the report the last sync kept for URL, as `adapter check-dataset URL` prints it."""
    outer = ctx.obj or (None, None, None)
    config_path, store_url = config_path or outer[0], store_url or outer[1]
    node_id = node_id or outer[2]
    store = Store.open(target(config_path, store_url).store_url, create=False)
    try:
        found = find_page(store, url, node_id)
    finally:
        store.close()
    if not found:
        raise BadValue(f"no page {url} in the store; `adapter pages` lists them")
    if len(found) > 1:
        nodes = ", ".join(p.node_id for p in found)
        raise click.UsageError(f"{url} is a page of {nodes}: choose one with --node")
    page = found[0]
    if not page.report:
        raise BadValue(
            f"{url} has not been checked yet (it is due); run `adapter sync` or a worker first"
        )
    if as_json:
        click.echo(json.dumps(page.report, indent=2, ensure_ascii=False))
    else:
        click.echo(page.report.get("text") or _old_report_text(page), nl=False)
    raise SystemExit(0 if page.last_status in HARVESTED else 1)


def _old_report_text(page: PageInfo) -> str:
    """A report stored before the text was kept: its verdict and findings."""
    word = "HARVESTABLE" if page.harvestable else "NOT HARVESTABLE"
    lines = [f"{word}  {page.url}", f"  HTTP {page.http_status or '-'}; last {page.last_status}"]
    for f in page.report.get("findings") or []:
        lines.append(f"    {str(f.get('severity', '')).upper():<8} {f.get('code')}")
        lines.append(f"             {f.get('message', '')}")
    return "\n".join(lines) + "\n"
