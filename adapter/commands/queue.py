"""`adapter queue list|show|export|ack`: the outbox, for a consumer outside the adapter.

Every create, new version and archive is an event with a sequence number, in
the order the store made them. A consumer reads pending events (`list`, or one
JSON object per line from `list --json` or `export`), acts on them, and
acknowledges them (`ack --up-to SEQ`) so they are not offered again.
"""

from __future__ import annotations

import json
from typing import Any

import click

from adapter.commands.args import epilog
from adapter.commands.sync import command_store, store_options, target
from adapter.models import SyncRecord
from adapter.store.db import Store
from adapter.store.outbox import OutboxEvent


def event_json(event: OutboxEvent, record: SyncRecord | None) -> dict[str, Any]:
    """One event with the record it names, as printed by `list --json` and `export`."""
    out: dict[str, Any] = {
        "seq": event.seq,
        "event": event.event,
        "node_id": event.node_id,
        "pid": event.pid,
        "series_id": event.series_id,
        "created_at": event.created_at.isoformat(timespec="milliseconds"),
        "acked": event.acked_at is not None,
    }
    if record is not None:
        out |= {
            "format_id": record.format_id,
            "checksum": record.checksum,
            "checksum_algorithm": record.checksum_algorithm,
            "size": record.size,
            "source_url": record.source_url,
            "obsoletes": record.obsoletes,
            "obsoleted_by": record.obsoleted_by,
            "archived": record.archived,
            "date_uploaded": record.date_uploaded.isoformat(timespec="milliseconds"),
            "date_sysmeta_modified": record.date_modified.isoformat(timespec="milliseconds"),
            "media_type": record.media_type,
            "describes_pid": record.describes_pid,
        }
    return out


def _events(
    store: Store, node: str | None, include_acked: bool, limit: int | None
) -> list[OutboxEvent]:
    return store.outbox(node, pending_only=not include_acked, limit=limit)


@click.group(
    "queue",
    epilog=epilog(
        "adapter queue list --store sqlite:///harvest.db",
        "adapter queue export --store sqlite:///harvest.db > events.jsonl",
        "adapter queue ack --up-to 120 --store sqlite:///harvest.db",
        exits="0 ok, 2 a bad or missing store.",
    ),
)
def queue() -> None:
    """The outbox of sync records: list, show, export, ack."""


@queue.command("list")
@store_options
@click.option("--node", help="Only this node (id).")
@click.option("--all", "include_acked", is_flag=True, help="Include acknowledged events.")
@click.option("--limit", type=int, help="At most this many events.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_events(
    config_path: str | None,
    store_url: str | None,
    node: str | None,
    include_acked: bool,
    limit: int | None,
    as_json: bool,
) -> None:
    """Pending events in order (oldest first)."""
    store = command_store(target(config_path, store_url).store_url)
    events = _events(store, node, include_acked, limit)
    if as_json:
        for ev in events:
            click.echo(json.dumps(event_json(ev, store.get_record(ev.node_id, ev.pid))))
        return
    if not events:
        click.echo("The queue is empty." if not include_acked else "No events.")
        return
    click.echo(f"{'seq':>5}  {'event':<7} {'pid':<71} {'series':<34} {'size':>7}")
    for ev in events:
        rec = store.get_record(ev.node_id, ev.pid)
        size = rec.size if rec else 0
        mark = " (acked)" if ev.acked_at else ""
        click.echo(
            f"{ev.seq:>5}  {ev.event:<7} {ev.pid:<71} {ev.series_id or '-':<34} {size:>7}{mark}"
        )
    click.echo(f"{len(events)} event(s); `adapter queue show PID --sysmeta` for one record")


@queue.command("show")
@click.argument("pid")
@store_options
@click.option("--node", help="The node (id), when the store holds several.")
@click.option("--sysmeta", is_flag=True, help="Print the system metadata XML.")
@click.option("--object", "show_object", is_flag=True, help="Print the object bytes.")
@click.option("--json", "as_json", is_flag=True, help="The record as JSON.")
def show(
    pid: str,
    config_path: str | None,
    store_url: str | None,
    node: str | None,
    sysmeta: bool,
    show_object: bool,
    as_json: bool,
) -> None:
    """One record: its fields, system metadata or object."""
    # lazy: every command module loads for `adapter --help`
    from adapter.api.sysmeta import sysmeta_xml

    tgt = target(config_path, store_url)
    store = command_store(tgt.store_url)
    nodes = [node] if node else store.node_ids()
    record = next(
        (r for n in nodes if (r := store.get_record(n, pid, with_bytes=True)) is not None), None
    )
    if record is None:
        raise click.ClickException(f"no record {pid} in {tgt.store_url}")
    if sysmeta:
        click.echo(sysmeta_xml(record, tgt.node(node, record.node_id)).decode("utf-8"), nl=False)
        return
    if show_object:
        click.echo((record.object_bytes or b"").decode("utf-8", "replace"))
        return
    events = [e for e in store.outbox(record.node_id, pending_only=False) if e.pid == pid]
    data: dict[str, Any] = event_json(events[-1], record) if events else {"pid": pid}
    data.pop("seq", None)
    data.pop("event", None)
    data["events"] = [
        {"seq": e.seq, "event": e.event, "acked": e.acked_at is not None} for e in events
    ]
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    width = max(len(k) for k in data)
    for key, value in data.items():
        click.echo(f"{key:<{width}}  {value}")


@queue.command("export")
@store_options
@click.option("--node", help="Only this node (id).")
@click.option("--all", "include_acked", is_flag=True, help="Include acknowledged events.")
@click.option("-o", "--output", type=click.File("w"), default="-", help="File (default stdout).")
def export(
    config_path: str | None,
    store_url: str | None,
    node: str | None,
    include_acked: bool,
    output: Any,
) -> None:
    """Every pending event with its record, one JSON object per line."""
    store = command_store(target(config_path, store_url).store_url)
    for ev in _events(store, node, include_acked, None):
        output.write(json.dumps(event_json(ev, store.get_record(ev.node_id, ev.pid))) + "\n")


@queue.command("ack")
@click.argument("seqs", nargs=-1, type=int)
@store_options
@click.option("--node", help="Only this node (id).")
@click.option("--up-to", type=int, help="Acknowledge every pending event up to this seq.")
@click.option("--all", "everything", is_flag=True, help="Acknowledge every pending event.")
def ack(
    seqs: tuple[int, ...],
    config_path: str | None,
    store_url: str | None,
    node: str | None,
    up_to: int | None,
    everything: bool,
) -> None:
    """Mark events done: the SEQS given, those up to --up-to, or --all."""
    if not (seqs or up_to is not None or everything):
        raise click.UsageError("give SEQ numbers, --up-to SEQ or --all")
    store = command_store(target(config_path, store_url).store_url)
    done = store.ack(node, up_to_seq=up_to, seqs=list(seqs) if seqs else None)
    click.echo(f"{done} event(s) acknowledged")
