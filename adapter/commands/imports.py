"""`adapter import mnlite INSTANCE --node ID`: move a member node from mnlite into the store.

The records keep every value the coordinating node holds (PIDs, seriesIds,
checksums, dates, obsolescence), so the served API answers as mnlite did, and
the first sync after the import continues each series (docs/operate.md, "Moving
a node from mnlite"). `--config FILE`: an existing file's node is used as it
is; a file that does not exist yet is written with the node's settings taken
from mnlite (its sitemaps, URL filter, subjects, access and replication).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

from adapter.commands.args import epilog
from adapter.commands.sync import store_options, target
from adapter.errors import ConfigError


@click.group(
    "import",
    epilog=epilog(
        "adapter import mnlite /srv/mnlite/instance/nodes/EXAMPLE --node urn:node:EXAMPLE "
        "--store sqlite:///harvest.db --config adapter.yaml",
        exits="0 imported, 1 refused (the store holds other records of the node), "
        "2 a bad instance, store or configuration.",
    ),
)
def import_group() -> None:
    """Import a member node's objects from other software into the store."""


@import_group.command("mnlite")
@click.argument("instance", type=click.Path(file_okay=False))
@click.option("--node", "node_id", required=True, help="The node id (urn:node:...).")
@store_options
@click.option("--force", is_flag=True, help="Import although the node has other records.")
@click.option("--dry-run", is_flag=True, help="Report what it would do; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="The report as one JSON object.")
def mnlite(
    instance: str,
    node_id: str,
    config_path: str | None,
    store_url: str | None,
    force: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Import the mnlite node folder INSTANCE (node.json, its SQLite store, the blobs)."""
    # the store and the import are imported here: `adapter --help` loads this module
    from adapter.migrate.mnlite_import import ImportReport, import_mnlite
    from adapter.store.db import Store

    existing = config_path is not None and Path(config_path).exists()
    found = target(config_path if existing else None, store_url)
    node = None
    if found.config is not None:
        try:
            node = found.config.node(node_id)
        except KeyError:
            message = f"{config_path}: no node {node_id}; add it, or name a new file"
            raise ConfigError(message) from None
    store = Store.open(found.store_url)
    try:
        report: ImportReport = import_mnlite(
            instance, node_id, store, node, force=force, dry_run=dry_run
        )
    finally:
        store.close()
    written = None
    if config_path is not None and not existing and report.refused is None and not dry_run:
        document = {"store_url": found.store_url, "nodes": [report.config]}
        Path(config_path).write_text(yaml.safe_dump(document, sort_keys=False), "utf-8")
        written = config_path
    if as_json:
        out = report.as_dict() | {"store": found.store_url, "config_written": written}
        click.echo(json.dumps(out, indent=2))
    else:
        click.echo(render(report, found.store_url, written, config_path if existing else None))
    if report.refused is not None:
        raise SystemExit(1)


def render(report: Any, store: str, written: str | None, used: str | None) -> str:
    """The import report for an operator: counts, every skip and note, the settings."""
    lines = [f"mnlite node {report.instance} -> {report.node_id} in {store}"]
    if report.dry_run:
        lines[0] += " (dry run: nothing was written)"
    if report.refused is not None:
        return "\n".join([*lines, f"Refused: {report.refused}."])
    lines.append(
        f"{report.things} things: {len(report.imported)} imported, "
        f"{len(report.present)} already imported, {len(report.skipped)} skipped; "
        f"{report.series} series and {report.pages} pages added "
        f"({report.series_present} series already there)"
    )
    if report.skipped:
        lines.append("Skipped:")
        lines += [f"  {s.pid or s.sha256}: {s.reason}" for s in report.skipped]
    if report.notes:
        lines.append("Notes:")
        lines += [f"  {n}" for n in report.notes]
    lines.append("mnlite settings:")
    for n in report.settings:
        where = n.equivalent or "no equivalent"
        lines.append(f"  {n.setting} = {n.value!r} -> {where}: {n.note}")
    if written:
        lines.append(f"Node configuration written to {written}.")
    elif used:
        lines.append(f"Node configuration: {used} (left as it is).")
    else:
        lines.append("Node configuration (add it to the configuration file's nodes):")
        text = yaml.safe_dump([report.config], sort_keys=False)
        lines += [f"  {line}" for line in text.splitlines()]
    return "\n".join(lines)
