"""`adapter worker`: process due pages from a shared store, as one of any number of workers.

Run as many as the machines allow, each with the same configuration (or
store URL and node id): they claim due pages in batches, each claim with a
lease, and a worker that dies loses its pages to the others when its lease
runs out (at once on the same machine). Pages become due through
`adapter schedule` or `adapter sync --enqueue-only`. SIGTERM or Ctrl-C: no
new page is started, the pages in flight finish and are committed; exit 0 after
SIGTERM, 130 after Ctrl-C.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import click

from adapter.commands.args import epilog
from adapter.commands.sync import graceful_stop, store_options, summary_lines, target
from adapter.service.logsetup import configure
from adapter.store.db import Store

POSITIVE = click.FloatRange(min=0, min_open=True)


@click.command(
    "worker",
    epilog=epilog(
        "adapter worker --config node.yaml",
        "adapter worker --config node.yaml --until-idle",
        exits="0 idle (--until-idle) or SIGTERM, 1 a node's worker failed, 2 a bad configuration "
        "or store, 130 Ctrl-C.",
    ),
)
@click.argument("node_names", nargs=-1, metavar="[NODE ...]")
@store_options
@click.option(
    "--node-id",
    "node_ids",
    multiple=True,
    metavar="ID",
    help="Without --config: a node id in the store whose due pages to process (repeatable).",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Pages claimed at once.",
)
@click.option(
    "--lease-seconds",
    type=POSITIVE,
    default=600.0,
    show_default=True,
    help="A claim not renewed for this long goes back to the other workers.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    help="Pages in flight per node (default: the node's politeness concurrency).",
)
@click.option(
    "--until-idle",
    is_flag=True,
    help="Exit once no page of the nodes is due, instead of waiting for more.",
)
@click.option(
    "--poll-seconds",
    type=POSITIVE,
    default=5.0,
    show_default=True,
    help="How often an idle worker looks for due pages.",
)
@click.option("--json", "as_json", is_flag=True, help="Print each node's counts as a JSON line.")
def worker(
    node_names: tuple[str, ...],
    config_path: str | None,
    store_url: str | None,
    node_ids: tuple[str, ...],
    batch: int,
    lease_seconds: float,
    threads: int | None,
    until_idle: bool,
    poll_seconds: float,
    as_json: bool,
) -> None:
    """Claim and process the due pages of NODEs (all configured nodes when none)."""
    # lazy: every command module loads for `adapter --help`
    from adapter.config.settings import pool_size
    from adapter.sync.checkpool import shared_checks
    from adapter.sync.drain import WorkOptions
    from adapter.sync.worker import work

    if (
        batch < 1
        or lease_seconds <= 0
        or poll_seconds <= 0
        or (threads is not None and threads < 1)
    ):
        raise click.UsageError("--batch, --threads, --lease-seconds and --poll-seconds must be > 0")
    if not config_path and not node_ids:
        raise click.UsageError("give --config FILE [NODE ...], or --store URL --node-id ID")
    tgt = target(config_path, store_url)
    if tgt.config is not None:
        configure(tgt.config.log_format, tgt.config.log_level)
        names = list(node_names) + list(node_ids)
        nodes = [tgt.node(n) for n in names] if names else list(tgt.config.nodes)
    else:
        configure("human", "INFO")
        nodes = [tgt.node(None, n) for n in node_ids]
    options = WorkOptions(
        batch=batch,
        lease=timedelta(seconds=lease_seconds),
        threads=threads,
        until_idle=until_idle,
        poll_seconds=poll_seconds,
    )
    store = Store.open(tgt.store_url, create=False)
    processes = pool_size(tgt.config, nodes) if tgt.config is not None else 0
    try:
        with graceful_stop() as stop, shared_checks(tgt.store_url, processes) as checks:
            count = checks.processes if checks is not None else 0
            pooled = f", {count} checking process{'es' * (count != 1)}" if count else ""
            click.echo(
                f"Working on {len(nodes)} node(s) from {tgt.store_url}{pooled}; Ctrl-C stops "
                "after the pages in flight.",
                err=True,
            )
            summaries = work(store, nodes, stop, replace(options, checks=checks))
    finally:
        store.close()
    failed = False
    for summary in summaries.values():
        failed |= summary.status == "failed"
        if as_json:
            click.echo(json.dumps(summary.as_dict(), sort_keys=True))
        else:
            head = f"{summary.node_id}: worker {summary.status} in {summary.duration_s:.1f} s"
            pages = (
                f"  fetched {summary.fetched}, not modified {summary.not_modified}, "
                f"unchanged {summary.unchanged}"
            )
            click.echo("\n".join([head, pages, *summary_lines(summary)[2:]]))
    raise SystemExit(stop.exit_code(failed))
