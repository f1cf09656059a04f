"""`adapter notify list|retry`: COAR Notify's inbox and outbox in the store.

What trusted repositories sent to `adapter serve`'s /inbox (and what became of each request:
pending, accepted, rejected, withdrawn), and what the adapter sent back or announced (pending
with its attempts and last error, delivered, failed). `retry` makes failed notifications
pending again once the receiving inbox is fixed; `adapter serve` delivers them.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from adapter.commands.args import epilog
from adapter.commands.sync import store_options, target

if TYPE_CHECKING:  # the store's types, without importing it for `adapter --help`
    from adapter.store.notify import Incoming, Sent

STATES_IN = ("pending", "accepted", "rejected", "withdrawn", "noted", "ignored")
STATES_OUT = ("pending", "delivered", "failed")


@click.group(
    "notify",
    epilog=epilog(
        "adapter notify list --config node.yaml",
        "adapter notify list --sent --state failed --json --store sqlite:///harvest.db",
        "adapter notify retry --failed --config node.yaml",
        exits="0 ok, 2 a bad or missing store.",
    ),
)
def notify() -> None:
    """COAR Notify: what repositories sent to the inbox, and what the adapter sent them."""


@notify.command("list")
@store_options
@click.option("--node", help="Only this node (id).")
@click.option("--received", "which", flag_value="received", help="Only what was received.")
@click.option("--sent", "which", flag_value="sent", help="Only what the adapter sent.")
@click.option(
    "--state", help=f"Only in this state ({', '.join(dict.fromkeys(STATES_IN + STATES_OUT))})."
)
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True,
              help="At most this many of each, newest first.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_notifications(
    config_path: str | None,
    store_url: str | None,
    node: str | None,
    which: str | None,
    state: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Received and sent notifications, newest first."""
    from adapter.store import notify as kept  # lazy: `adapter --help` needs no store
    from adapter.store.db import Store

    store = Store.open(target(config_path, store_url).store_url, create=False)
    asked: dict[str, Any] = {"node_id": node, "state": state, "limit": limit}
    try:  # only the side the options ask for is read
        got = [] if which == "sent" else kept.received(store, **asked)
        out = [] if which == "received" else kept.sent(store, **asked)
    finally:
        store.close()
    if as_json:
        for incoming in got:
            click.echo(json.dumps(received_json(incoming)))
        for outgoing in out:
            click.echo(json.dumps(sent_json(outgoing)))
        return
    if which in (None, "received"):
        _print_received(got)
    if which in (None, "sent"):
        _print_sent(out)


def _iso(value: datetime | None) -> str | None:
    """A time as the JSON lines give it: ISO 8601 to the second (None stays None)."""
    return value.isoformat(timespec="seconds") if value is not None else None


def received_json(item: Incoming) -> dict[str, Any]:
    return {
        "direction": "received",
        "id": item.id,
        "node_id": item.node_id,
        "received_at": _iso(item.received_at),
        "notification_id": item.notification_id,
        "kind": item.kind,
        "origin": item.origin_id,
        "origin_inbox": item.origin_inbox,
        "page": item.object_url,
        "state": item.state,
        "reason": item.reason,
        "decided_at": _iso(item.decided_at),
    }


def sent_json(item: Sent) -> dict[str, Any]:
    return {
        "direction": "sent",
        "id": item.id,
        "node_id": item.node_id,
        "created_at": _iso(item.created_at),
        "kind": item.kind,
        "to": item.target_inbox,
        "in_reply_to": item.in_reply_to,
        "page": item.page_url,
        "state": item.state,
        "attempts": item.attempts,
        "next_attempt_at": _iso(item.next_attempt_at),
        "http_status": item.http_status,
        "last_error": item.last_error,
        "delivered_at": _iso(item.delivered_at),
    }


def _print_received(items: list[Incoming]) -> None:
    click.echo(f"Received ({len(items)}):")
    if not items:
        click.echo("  nothing")
    for r in items:
        when = r.received_at.strftime("%Y-%m-%d %H:%M:%S")
        click.echo(f"  {r.id:>5}  {when}  {r.kind:<15} {r.state:<9} {r.origin_id}")
        click.echo(f"         {r.object_url or r.notification_id}")
        if r.reason:
            click.echo(f"         why: {r.reason.splitlines()[0]}")


def _print_sent(items: list[Sent]) -> None:
    click.echo(f"Sent ({len(items)}):")
    if not items:
        click.echo("  nothing")
    for s in items:
        when = s.created_at.strftime("%Y-%m-%d %H:%M:%S")
        tries = f"{s.attempts} attempt{'s' if s.attempts != 1 else ''}"
        click.echo(f"  {s.id:>5}  {when}  {s.kind:<24} {s.state:<9} {tries} -> {s.target_inbox}")
        if s.page_url:
            click.echo(f"         {s.page_url}")
        if s.state != "delivered" and s.last_error:
            again = (
                f"; next attempt {s.next_attempt_at:%Y-%m-%d %H:%M:%S}"
                if s.state == "pending"
                else ""
            )
            click.echo(f"         last error: {s.last_error}{again}")


@notify.command("retry")
@store_options
@click.argument("sent_id", type=int, required=False)
@click.option("--node", help="Only this node's failed notifications (id).")
@click.option("--failed", "every", is_flag=True, help="Every failed notification.")
def retry(
    config_path: str | None, store_url: str | None, sent_id: int | None, node: str | None,
    every: bool,
) -> None:  # fmt: skip
    """Make a failed notification (SENT_ID, or --failed: all) pending again."""
    if (sent_id is None) == (not every and node is None):
        raise click.UsageError("give SENT_ID, or --failed (with --node for one node's)")
    from adapter.store import notify as kept  # lazy: `adapter --help` needs no store
    from adapter.store.db import Store

    store = Store.open(target(config_path, store_url).store_url, create=False)
    try:
        count = kept.retry(store, sent_id=sent_id, node_id=node)
    finally:
        store.close()
    click.echo(f"{count} notification(s) pending again; `adapter serve` delivers them.")
