"""`adapter import mnlite`: an mnlite node's objects become one node's records, in one transaction.

Read the node folder (`adapter.store.mnlite`), plan what each thing becomes
(`adapter.migrate.mnlite_plan`), then write it (`adapter.store.imports`). The
store must not hold other records of the node (a sync already ran, another
import): those would make two histories of one series, so the import refuses
unless forced. What is already there from an earlier import of the same node is
left as it is, so a second run changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from adapter.config.settings import NodeSettings
from adapter.errors import ConfigError
from adapter.migrate.mnlite_config import SettingNote, node_config
from adapter.migrate.mnlite_plan import Skipped, checked_bytes, plan_import
from adapter.store.db import Store
from adapter.store.imports import Written, node_pids, write_imported
from adapter.store.mnlite import Thing, open_instance, read_blob, read_things


@dataclass(slots=True)
class ImportReport:
    """What an import found, wrote and left out, for the text and JSON output."""

    node_id: str
    instance: str
    things: int = 0
    imported: list[str] = field(default_factory=list)  # PIDs written now
    present: list[str] = field(default_factory=list)  # PIDs an earlier import wrote
    skipped: list[Skipped] = field(default_factory=list)
    series: int = 0  # series rows written now
    series_present: int = 0
    pages: int = 0  # frontier rows written now
    notes: list[str] = field(default_factory=list)
    settings: list[SettingNote] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)  # the node's YAML mapping
    refused: str | None = None  # why nothing was written
    dry_run: bool = False  # everything was written, then rolled back

    def as_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "instance": self.instance,
            "things": self.things,
            "imported": len(self.imported),
            "already_imported": len(self.present),
            "skipped": [
                {"pid": s.pid, "sha256": s.sha256, "reason": s.reason} for s in self.skipped
            ],
            "series": self.series,
            "series_already_imported": self.series_present,
            "pages": self.pages,
            "notes": self.notes,
            "settings": [
                {"setting": n.setting, "value": n.value, "equivalent": n.equivalent, "note": n.note}
                for n in self.settings
            ],
            "config": self.config,
            "refused": self.refused,
            "dry_run": self.dry_run,
        }


class _RollBack(Exception):
    """Ends a dry run's transaction: what it wrote is counted, then undone."""

    def __init__(self, written: Written) -> None:
        super().__init__("dry run")
        self.written = written


def node_from(raw: dict[str, Any], where: str) -> NodeSettings:
    """The node's settings from the mapping the import built (ConfigError when invalid)."""
    try:
        return NodeSettings.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{where}: the node's settings are not valid ({problems})") from exc


def import_mnlite(
    instance_path: str | Path,
    node_id: str,
    store: Store,
    node: NodeSettings | None = None,
    *,
    force: bool = False,
    dry_run: bool = False,
) -> ImportReport:
    """Import the mnlite node folder as `node_id`'s records; `node`: its configured settings
    (else built from node.json); `dry_run`: write in a transaction that is rolled back, so
    the report is exact and the store unchanged. Never raises for a thing's fault: it is
    skipped, with why."""
    instance = open_instance(instance_path)
    things = read_things(instance)
    raw, settings, warnings = node_config(
        node_id, instance.node_json, instance.settings_json, things
    )
    report = ImportReport(node_id, str(instance.path), things=len(things))
    report.config, report.settings, report.notes = raw, settings, list(warnings)
    if node is None:
        node = node_from(raw, str(instance.path))
    limits = node.limits()
    cap = limits.max_page_bytes

    def blob(thing: Thing) -> bytes | str:
        return read_blob(instance, thing, cap)

    plan = plan_import(things, blob, node, limits)
    by_pid = {(t.identifier or "").strip(): t for t in things}
    report.skipped = list(plan.skipped)
    report.notes += plan.notes
    mine = {(t.identifier or "").strip() for t in things}
    try:
        with store.write() as conn:
            others = node_pids(conn, node.id) - mine
            if others and not force:
                report.refused = (
                    f"the store already holds {len(others)} records of {node.id} that are not "
                    "this mnlite node's (a sync or another import); importing would give their "
                    "series two histories. Use a fresh store, or --force to import beside them"
                )
                return report
            written = write_imported(
                conn,
                node.id,
                plan.records,
                plan.series,
                plan.pages,
                lambda rec: checked_bytes(by_pid[rec.pid], blob),  # again: it may have changed
            )
            if dry_run:
                raise _RollBack(written)
    except _RollBack as undone:
        written, report.dry_run = undone.written, True
    report.imported, report.present = written.records, written.present
    report.series, report.series_present = len(written.series), len(written.series_present)
    report.pages = len(written.pages)
    for pid in written.conflicts:
        report.skipped.append(
            Skipped(pid, "", "the store already holds this PID for the node with other bytes")
        )
    for pid, why in written.unreadable:
        report.skipped.append(Skipped(pid, "", f"{why} (when it was written)"))
    for ident, holder in written.held:
        report.skipped.append(
            Skipped(ident, "", f"the identifier is already given out to node {holder}")
        )
    return report
