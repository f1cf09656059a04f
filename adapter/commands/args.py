"""Command-line values checked before any work: one line naming the value and the fix.

A mistake a user can make (a port out of range, a space in a host name, an
unclosed IPv6 bracket) is a usage error, exit 2, never a traceback and never a
finding about the site that was not even asked.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import click

if TYPE_CHECKING:  # loaded only with --config (`config_node`)
    from adapter.config.settings import NodeSettings


class BadValue(click.ClickException):
    """A value the user gave cannot be used: `Error: ...`, exit 2."""

    exit_code = 2


def http_url(value: str, what: str = "URL") -> str:
    """`value` when it is an absolute http(s) URL a request can be sent to."""
    if any(c.isspace() for c in value.strip()):
        raise BadValue(f"{what} {value!r} contains a space; percent-encode it (%20) or remove it")
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 - raises ValueError when out of range or not a number
    except ValueError as exc:
        raise BadValue(
            f"{what} {value!r} is not a valid URL ({exc}); check the host and port"
        ) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadValue(f"{what} {value!r} is not an http(s) URL; give it as https://host/path")
    return value.strip()


def config_node(config_path: str, node_id: str | None) -> NodeSettings:
    """The node `--node` names in the configuration `--config` (its only one without it)."""
    from adapter.config.load import load_config  # lazy: only with --config

    config = load_config(config_path)
    if node_id is None:
        if len(config.nodes) != 1:
            ids = ", ".join(n.id for n in config.nodes)
            raise BadValue(f"{config_path} has {len(config.nodes)} nodes ({ids}): choose --node")
        return config.nodes[0]
    try:
        return config.node(node_id)
    except KeyError:
        ids = ", ".join(n.id for n in config.nodes)
        raise BadValue(f"no node {node_id!r} in {config_path}; its nodes: {ids}") from None


def epilog(*examples: str, exits: str) -> str:
    """The end of a command's --help: examples kept as written, exit codes wrapped."""
    lines = "\n".join(f"  {e}" for e in examples)
    return f"Examples:\n\n\b\n{lines}\n\nExit codes: {exits}"


def output_width() -> int | None:
    """Columns to fit output to: COLUMNS, else the terminal's; None when piped."""
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def fit(line: str, width: int | None) -> str:
    """`line` cut to `width` columns (marked with ...); whole when width is None."""
    if width is None or len(line) <= width:
        return line
    return line[: max(width - 3, 20)] + "..."
