"""What a started `adapter serve` tells its operator, and the addresses it names.

The nodes' addresses on stdout (one line each, for scripts), the rest on stderr.
"""

from __future__ import annotations

import click

from adapter.config.load import placeholder_subjects
from adapter.config.settings import NodeSettings


def announce(settings: list[NodeSettings], bound: str, serving: str) -> None:
    """What a started server tells its operator: the nodes' addresses, then the rest."""
    _warn_placeholders(settings)
    for s in settings:
        click.echo(f"{s.id}: {bound}/{s.short_name}/v2")
    click.echo(f"Metrics: {bound}/metrics; health: {bound}/healthz, {bound}/readyz", err=True)
    click.echo(f"check page: {bound}/check", err=True)
    click.echo(serving, err=True)


def announce_ops(bound: str, with_ops: bool, token: str | None) -> None:
    if with_ops:
        who = (
            "loopback callers, or with the operator's secret"
            if token
            else ("loopback callers only: no operator's secret is set")
        )
        click.echo(f"Operator view: {bound}/ops ({who})", err=True)


def _warn_placeholders(settings: list[NodeSettings]) -> None:
    for s in settings:
        placeholders = placeholder_subjects(s)
        if placeholders:
            names = ", ".join(placeholders)
            click.echo(
                f"{s.id}: {names} are placeholder subjects (CN=adapter-placeholder-...); "
                "give --submitter/--rights-holder/--contact-subject or a --config file",
                err=True,
            )


def reachable(host: str) -> str:
    """The loopback address for a wildcard listen address (a baseURL must name a host)."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)


def host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host
