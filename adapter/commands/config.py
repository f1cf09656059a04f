"""`adapter config check`, `adapter schedule` and `adapter status`.

The configuration file comes from `--config` or the ADAPTER_CONFIG variable.
Exit codes: 0 ok, 2 a configuration (or store) problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from adapter.commands.args import epilog
from adapter.commands.status_view import node_lines, node_status, redacted
from adapter.config.errors import ConfigProblems
from adapter.config.load import load_config
from adapter.config.settings import AdapterConfig
from adapter.errors import ConfigError
from adapter.service.logsetup import LogFormat

CONFIG_FILE = click.Path(exists=False, dir_okay=False, path_type=Path)


config_option = click.option(
    "--config",
    "config_path",
    type=CONFIG_FILE,
    envvar="ADAPTER_CONFIG",
    required=True,
    help="The YAML configuration file (or set ADAPTER_CONFIG).",
)


@click.group()
def config() -> None:
    """Work with the YAML configuration file."""


@config.command(
    "check",
    epilog=epilog(
        "adapter config check node.yaml",
        "adapter config check node.yaml --json",
        exits="0 valid, 2 invalid (every problem listed).",
    ),
)
@click.argument("file", type=CONFIG_FILE)
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
def check(file: Path, as_json: bool) -> int:
    """Validate FILE: every problem with its key path, or the nodes and their next runs."""
    try:
        loaded = load_config(file)
    except ConfigError as exc:
        _show_problems(file, exc, as_json)
        return 2
    if as_json:
        nodes = [node_status(node, None) for node in loaded.nodes]
        document = {"file": str(file), "valid": True, "store_url": redacted(loaded.store_url)}
        click.echo(json.dumps({**document, "nodes": nodes}, indent=2, default=str))
        return 0
    click.echo(f"{file}: valid; {len(loaded.nodes)} node(s); store {redacted(loaded.store_url)}")
    for node in loaded.nodes:
        click.echo("")
        for line in node_lines(node, None, with_settings=True):
            click.echo(line)
    return 0


def _show_problems(file: Path, exc: ConfigError, as_json: bool) -> None:
    problems = exc.as_dicts() if isinstance(exc, ConfigProblems) else [{"reason": str(exc)}]
    if as_json:
        click.echo(json.dumps({"file": str(file), "valid": False, "problems": problems}, indent=2))
        return
    for line in str(exc).splitlines():
        click.echo(line)
    click.echo(f"{len(problems)} problem(s); the configuration was not loaded.", err=True)


@click.command(
    epilog=epilog(
        "adapter schedule --config node.yaml",
        "adapter schedule --config node.yaml --now --log-format json",
        exits="0 after SIGTERM, 2 a bad configuration, 130 Ctrl-C.",
    )
)
@config_option
@click.option(
    "--log-format",
    type=click.Choice(["human", "json"]),
    default=None,
    help="Log lines for people or JSON lines (default: log_format in the file, else human).",
)
@click.option("--now", "run_now", is_flag=True, help="Also run every node once right away.")
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve /metrics (Prometheus), /healthz and /readyz on this port while running.",
)
@click.option(
    "--metrics-host", default="127.0.0.1", show_default=True, help="Address for --metrics-port."
)
def schedule(
    config_path: Path,
    log_format: str | None,
    run_now: bool,
    metrics_port: int | None,
    metrics_host: str,
) -> int:
    """Keep every node in sync on its schedule until SIGTERM or SIGINT (SIGHUP reloads)."""
    # lazy: every command module loads for `adapter --help`
    from adapter.service.daemon import run_scheduler

    options: dict[str, Any] = {}
    fmt: LogFormat | None = "json" if log_format == "json" else ("human" if log_format else None)
    if metrics_port is not None:
        options["metrics_at"] = (metrics_host, metrics_port)
    return run_scheduler(config_path, log_format=fmt, run_now=run_now, **options)


@click.command(
    epilog=epilog(
        "adapter status --config node.yaml",
        "adapter status --json     (ADAPTER_CONFIG names the file)",
        exits="0 ok, 1 a node's last run failed, 2 a bad configuration or store.",
    )
)
@config_option
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
def status(config_path: Path, as_json: bool) -> int:
    """Per node: the last run (when, how long, counts, errors) and the next one.

    Exit 1 when a node's last run failed.
    """
    loaded = load_config(config_path)
    runs = _last_runs(loaded)
    if as_json:
        nodes = [node_status(node, runs.get(node.id)) for node in loaded.nodes]
        click.echo(json.dumps({"store_url": redacted(loaded.store_url), "nodes": nodes}, indent=2))
        return _status_exit(runs)
    click.echo(f"store {redacted(loaded.store_url)}")
    for node in loaded.nodes:
        click.echo("")
        for line in node_lines(node, runs.get(node.id)):
            click.echo(line)
    return _status_exit(runs)


def _status_exit(runs: dict[str, Any]) -> int:
    """1 when a node's last run failed, so a monitoring job notices; else 0."""
    return 1 if any(run.status == "failed" for run in runs.values()) else 0


def _last_runs(loaded: AdapterConfig) -> dict[str, Any]:
    """The newest run of each node from the store; none when the store does not exist yet."""
    from adapter.store.db import Store  # lazy: every command module loads for `adapter --help`

    if loaded.store_url.startswith("sqlite:///"):
        database = loaded.store_url.removeprefix("sqlite:///")
        if database != ":memory:" and not Path(database).exists():
            return {}
    store = Store.open(loaded.store_url, create=False)
    try:
        latest: dict[str, Any] = {}
        for node in loaded.nodes:
            runs = store.runs(node.id, limit=1)
            if runs:
                latest[node.id] = runs[0]
        return latest
    finally:
        store.close()
