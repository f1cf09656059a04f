"""`adapter sync`, `adapter runs` and `adapter db upgrade`.

`sync` runs with a configuration file (`--config FILE [NODE ...]`) or, for a
quick try, on one URL (`adapter sync URL --store sqlite:///harvest.db
--node-id urn:node:EXAMPLE`) with every other value at its default. Ctrl-C
stops after the pages in flight; the run is then recorded as interrupted.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from adapter.commands.args import epilog, fit, http_url, output_width
from adapter.config.load import load_config, quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.errors import ConfigError
from adapter.signals import on_signals
from adapter.startup import collector_paused
from adapter.store.db import Store

if TYPE_CHECKING:  # the sync stack loads only when a command runs
    from adapter.sync.outcome import RunSummary

DEFAULT_STORE = "sqlite:///harvest.db"
QUICK_NODE_ID = "urn:node:EXAMPLE"


@dataclass(frozen=True, slots=True)
class Target:
    """Where a command reads and writes: the store, and the configuration if one was given."""

    store_url: str
    config: AdapterConfig | None

    def node(self, name: str | None, store_node_id: str | None = None) -> NodeSettings:
        """The node's settings: from the configuration, else defaults for a stored node id."""
        if self.config is not None and name is not None:
            try:
                return self.config.node(name)
            except KeyError:
                raise ConfigError(f"no node {name!r} in {self.config.source}") from None
        node_id = name or store_node_id or QUICK_NODE_ID
        if self.config is not None:
            for node in self.config.nodes:
                if node.id == node_id:
                    return node
        return quick_node("https://repo.example/", node_id)


def store_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--config FILE` and `--store URL`, shared by sync, runs, db and queue."""
    func = click.option(
        "--store",
        "store_url",
        metavar="URL",
        help=f"Store URL (sqlite:///file.db or postgresql://...); "
        f"default: the configuration's store_url, else {DEFAULT_STORE}.",
    )(func)
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        help="Node configuration (YAML).",
    )(func)


def target(config_path: str | None, store_url: str | None) -> Target:
    config = load_config(config_path) if config_path else None
    url = store_url or (config.store_url if config else DEFAULT_STORE)
    return Target(url, config)


def command_store(url: str) -> Store:
    """The existing store a command reads, closed when the command ends (its click context):
    left to the collector, its pooled connection outlived a command run in-process."""
    store = Store.open(url, create=False)
    click.get_current_context().call_on_close(store.close)
    return store


class StopEvent(threading.Event):
    """Set by the first stop signal, which it remembers: Ctrl-C exits 130, SIGTERM 0."""

    signum: int | None = None

    def __init__(self) -> None:
        super().__init__()
        # set from a signal handler, which runs in the main thread between two bytecodes: it
        # may land inside this event's own wait() (`adapter worker` idles there) while the
        # thread holds the condition's lock, and a plain Lock then blocked the set for good
        # (as the inbox of adapter.signals says of Queue); a reentrant one lets it through
        self._cond = threading.Condition(threading.RLock())

    def exit_code(self, failed: bool) -> int:
        """The command's exit code: 1 failed, 130 stopped by Ctrl-C, else 0."""
        if failed:
            return 1
        return 130 if self.signum == signal.SIGINT else 0


@contextmanager
def graceful_stop() -> Iterator[StopEvent]:
    """First Ctrl-C (or SIGTERM) sets the event; a second one interrupts at once."""
    stop = StopEvent()

    def handler(signum: int) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.signum = signum
        stop.set()  # first: a notice that cannot be written must not lose the stop
        # one system call on fd 2, not click.echo: the handler may land while the main thread
        # is inside a write to sys.stderr (a progress bar, a log line) holding its buffered
        # writer's lock, where a second write through it raised "reentrant call"
        with contextlib.suppress(OSError):  # stderr closed (a detached process): stop quietly
            os.write(2, b"Stopping after the pages in flight (again to abort)...\n")

    with on_signals(handler):
        yield stop


@click.command(
    "sync",
    epilog=epilog(
        "adapter sync https://data.example.org/ --store sqlite:///harvest.db",
        "adapter sync --config node.yaml urn:node:EXAMPLE",
        "adapter sync --config node.yaml --enqueue-only   (then: adapter worker)",
        exits="0 every run ok, 1 a run failed (it says why), 2 a bad URL, configuration or store,"
        " 130 Ctrl-C.",
    ),
)
@click.argument("args", nargs=-1, metavar="[URL | NODE ...]")
@store_options
@click.option(
    "--node-id",
    default=QUICK_NODE_ID,
    show_default=True,
    help="Node id for a quick run on a URL (no --config).",
)
@click.option(
    "--metadata-copy",
    is_flag=True,
    help="Quick run: also sync the metadata file named by each Dataset's encoding.",
)
@click.option(
    "--profile",
    type=click.Choice(["dataone", "soso", "mnlite", "custom"]),
    default=None,
    help="Quick run: the requirement profile that decides what is synced (default: dataone).",
)
@click.option(
    "--render",
    is_flag=True,
    help="Quick run: render the pages whose HTML holds no Dataset in a headless chromium "
    "(rendering.mode auto; the render extra).",
)
@click.option(
    "--enqueue-only",
    is_flag=True,
    help="Discover and mark pages due, then stop: `adapter worker` processes process them.",
)
@click.option(
    "--processes",
    type=click.IntRange(min=1),
    help="Processes checking pages (default: as many cores as the node's rate can feed).",
)
@click.option("--json", "as_json", is_flag=True, help="Print each run summary as one JSON line.")
def sync(
    args: tuple[str, ...],
    config_path: str | None,
    store_url: str | None,
    node_id: str,
    metadata_copy: bool,
    profile: str | None,
    render: bool,
    enqueue_only: bool,
    processes: int | None,
    as_json: bool,
) -> None:
    """Harvest member nodes into the store: discover, then process new and changed pages.

    With --config, ARGS name the nodes to run (all when none). Without it, ARGS is one
    URL (a repository entry page, robots.txt or sitemap) synced as NODE_ID.
    """
    with collector_paused():  # lazy: every command module loads for `adapter --help`
        from adapter.sync.federation import run_nodes

    if config_path and profile is not None:
        raise click.UsageError("--profile is for a quick run; with --config set checks.profile")
    if config_path and render:
        raise click.UsageError("--render is for a quick run; with --config set rendering.mode")
    if config_path:
        tgt = target(config_path, store_url)
        assert tgt.config is not None
        config = tgt.config.model_copy(update={"store_url": tgt.store_url})
        nodes = [tgt.node(a) for a in args] if args else list(config.nodes)
    else:
        if len(args) != 1:
            raise click.UsageError("give one URL, or --config FILE [NODE ...]")
        extra: dict[str, Any] = {"dataone": {"sync_metadata_copy": True}} if metadata_copy else {}
        if profile is not None:
            extra["checks"] = {"profile": profile}
        if render:
            extra["rendering"] = {"mode": "auto"}
        node = quick_node(http_url(args[0]), node_id, **extra)
        config = AdapterConfig(store_url=store_url or DEFAULT_STORE, nodes=(node,))
        nodes = [node]
    failed = False
    with graceful_stop() as stop:
        for summary in run_nodes(
            config,
            nodes,
            stop=stop,
            progress=sys.stderr.isatty(),
            enqueue_only=enqueue_only,
            processes=processes,
        ):
            failed |= summary.status == "failed"
            if as_json:
                click.echo(json.dumps(summary.as_dict(), sort_keys=True))
            else:
                click.echo("\n".join(summary_lines(summary)))
    raise SystemExit(stop.exit_code(failed))


@click.command(
    "runs",
    epilog=epilog(
        "adapter runs --store sqlite:///harvest.db",
        "adapter runs --config node.yaml --node urn:node:EXAMPLE --json",
        exits="0 ok, 2 a bad or missing store.",
    ),
)
@store_options
@click.option("--node", "node_id", help="Only this node (id).")
@click.option("--limit", default=20, show_default=True, help="How many runs, newest first.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run.")
def runs(
    config_path: str | None, store_url: str | None, node_id: str | None, limit: int, as_json: bool
) -> None:
    """The run history: what each sync run saw and did."""
    tgt = target(config_path, store_url)
    store = command_store(tgt.store_url)
    history = store.runs(node_id, limit)
    if as_json:
        for run in history:
            click.echo(
                json.dumps(
                    {
                        "id": run.id,
                        "node_id": run.node_id,
                        "status": run.status,
                        "started_at": run.started_at.isoformat(),
                        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
                        "summary": run.summary,
                        "error": run.error,
                    },
                    sort_keys=True,
                )
            )
        return
    if not history:
        click.echo("No runs yet.")
        return
    head = (
        f"{'run':>5}  {'node':<24} {'started (UTC)':<19} {'status':<11} {'secs':>6} "
        f"{'seen':>6} {'due':>6} {'fetched':>7} {'new':>5} {'vers':>5} {'arch':>5} {'err':>5}"
    )
    width = output_width()
    click.echo(fit(head, width))
    for run in history:
        s = run.summary
        click.echo(
            fit(
                f"{run.id:>5}  {run.node_id:<24} {run.started_at:%Y-%m-%d %H:%M:%S} "
                f"{run.status:<11} {s.get('duration_s', 0):>6.1f} {s.get('pages_seen', 0):>6} "
                f"{s.get('due', 0):>6} {s.get('fetched', 0):>7} {s.get('new_objects', 0):>5} "
                f"{s.get('new_versions', 0):>5} {s.get('archived', 0):>5} {s.get('errors', 0):>5}",
                width,
            )
        )
        if run.error:
            why = f"{run.status}: {run.error}"  # whole (wrapped): it says why
            pad = " " * 7
            if width is not None and width > 40:
                why = textwrap.fill(why, width, initial_indent=pad, subsequent_indent=pad)
            else:
                why = pad + why
            click.echo(why)
    _show_sync_failures(store, sorted({run.node_id for run in history}))


def _show_sync_failures(store: Store, node_ids: list[str], shown: int = 5) -> None:
    """What DataONE's coordinating node reported through POST /error, newest first."""
    # lazy: every command module loads for `adapter --help`
    from adapter.api.syncfailed import parse_report

    for node_id in node_ids:
        failures = store.sync_failures(node_id, limit=shown)
        if not failures:
            continue
        click.echo(f"\nDataONE reported synchronization failures for {node_id}:")
        for failure in failures:
            report = parse_report("application/xml", failure.xml.encode("utf-8"))
            what = report.description or "(no description)"
            click.echo(
                f"  {failure.received_at:%Y-%m-%d %H:%M:%S}  {failure.pid or '(no pid)'}  "
                f"detailCode {report.detail_code or '-'}: {what[:200]}"
            )


@click.group("db")
def db() -> None:
    """The store's schema."""


@db.command(
    "upgrade",
    epilog=epilog(
        "adapter db upgrade --store postgresql://adapter@db.example.org/adapter",
        exits="0 ok, 2 a bad store.",
    ),
)
@store_options
def upgrade(config_path: str | None, store_url: str | None) -> None:
    """Create the store's schema or apply the migrations it is missing."""
    tgt = target(config_path, store_url)
    with closing(Store.connect(tgt.store_url)) as store:
        before = store.version()
        applied = store.upgrade()
    if not applied:
        click.echo(f"{tgt.store_url}: schema version {before}, up to date")
    elif before is None:
        click.echo(f"{tgt.store_url}: schema created at version {applied[-1]}")
    else:
        steps = ", ".join(str(v) for v in applied)
        click.echo(f"{tgt.store_url}: upgraded from version {before} (applied {steps})")


def summary_lines(s: RunSummary) -> list[str]:
    """A run summary for people: printed at the end of `adapter sync` and `adapter demo`."""
    out = [
        f"{s.node_id}: run {s.run_id} {s.status} in {s.duration_s:.1f} s",
        f"  pages seen {s.pages_seen}, due {s.due}, fetched {s.fetched}, "
        f"not modified {s.not_modified}, unchanged {s.unchanged}",
        f"  new objects {s.new_objects}, new versions {s.new_versions}, "
        f"archived {s.archived}, gone {s.gone}, errors {s.errors}",
    ]
    if s.policy_updates:
        out.append(
            f"  policy changed: {s.policy_updates} record(s) updated "
            "(serialVersion + 1, new dateSysMetadataModified)"
        )
    for title, counts in (
        (
            f"not harvestable: {s.pages_not_harvestable} page(s), by code",
            s.not_harvestable,
        ),
        ("errors", s.error_codes),
        ("series", s.series_findings),
        ("rendering (pages)", s.rendering),
        ("discovery", s.discovery_findings),
    ):
        if counts:
            out.append(f"  {title}:")
            out += [f"    {n:5d}  {code}" for code, n in sorted(counts.items())]
    if s.message:
        out.append(f"  {s.message}")
    out += [f"  note: {notice}" for notice in s.notices]
    return out
