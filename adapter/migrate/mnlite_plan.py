"""What an mnlite node's things become in the store: records, series, pages, and what is left out.

Pure: the things and a blob reader in, a `Plan` out. Each thing becomes a record
with the values mnlite served (its PID, seriesId, MD5 checksum, size, formatId,
dates, serialVersion, obsolescence, archived flag, submitter and rights holder),
once the blob's bytes are checked against the sha256 that names them, the MD5
and the size mnlite published; a thing whose bytes cannot be served as mnlite
served them is skipped with the reason. The records carry no bytes: the writer
reads each blob again as it writes it, so an import of any size holds one
object in memory at a time.

The continuity of each series rests on its row's content key. The head's
JSON-LD (what mnlite stored: the page's block, or its blocks as a list) is
read by the adapter's own extraction and normalization, and the Dataset filed
under the head's seriesId gets the content key a sync would compute for the
page (`adapter.dataone.records.dataset_candidate`). So the first sync finds a
page whose Dataset is unchanged in meaning unchanged, although the adapter
would have serialized it differently, and a changed page becomes a new version
that obsoletes mnlite's head.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from adapter.config.settings import NodeSettings
from adapter.dataone.profiles import profile_for
from adapter.dataone.records import dataset_candidate, series_id
from adapter.dataone.requirements import check_requirements
from adapter.jsonld.normalize import normalize
from adapter.limits import Limits
from adapter.models import DatasetResult, SyncRecord
from adapter.page.extract import JsonLdBlock
from adapter.store.imports import ImportedPage, ImportedSeries
from adapter.store.mnlite import Thing

DEFAULT_FORMAT = "application/octet-stream"  # what mnlite serves for a thing without one
BlobReader = Callable[[Thing], bytes | str]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A thing left out, and why, in words an operator acts on."""

    pid: str | None
    sha256: str
    reason: str


@dataclass(slots=True)
class Plan:
    records: list[SyncRecord] = field(default_factory=list)
    series: list[ImportedSeries] = field(default_factory=list)
    pages: list[ImportedPage] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # imported, but worth knowing

    @property
    def pids(self) -> set[str]:
        return {r.pid for r in self.records}


def plan_import(
    things: Iterable[Thing], read_blob: BlobReader, node: NodeSettings, limits: Limits
) -> Plan:
    """The records, series and frontier pages for the node (see the module docstring)."""
    plan = Plan()
    by_pid: dict[str, Thing] = {}
    for thing in things:
        rec = _record(thing, read_blob, node, plan)
        if rec is not None:
            plan.records.append(rec)
            by_pid[rec.pid] = thing
    keys: dict[str, list[str]] = {}
    for head in _heads(plan):
        data = read_blob(by_pid[head.pid])
        key = _content_key(head, data if isinstance(data, bytes) else b"", node, limits, plan)
        plan.series.append(ImportedSeries(head.series_id or "", head.source_url, head.pid, key))
        if head.source_url:
            keys.setdefault(head.source_url, []).append(key)
    for url, found in keys.items():  # the page's content checksum, as a sync writes it
        joined = "\n".join(sorted(found)).encode()
        plan.pages.append(ImportedPage(url, hashlib.sha256(joined).hexdigest()))
    return plan


def _skip(plan: Plan, thing: Thing, reason: str) -> None:
    plan.skipped.append(Skipped(thing.identifier, thing.sha256, reason))


def checked_bytes(thing: Thing, read_blob: BlobReader) -> bytes | str:
    """The blob's bytes when they are the object mnlite published, else why not."""
    data = read_blob(thing)
    if isinstance(data, str):
        return data
    if hashlib.sha256(data).hexdigest() != thing.sha256:
        return "its blob's sha256 is not the one mnlite recorded (a damaged blob)"
    md5 = hashlib.md5(data).hexdigest()
    if thing.md5 is not None and thing.md5.lower() != md5:
        return f"its blob's MD5 {md5} is not the published {thing.md5}"
    if thing.size is not None and thing.size != len(data):
        return f"its blob is {len(data)} bytes, mnlite published {thing.size}"
    return data


def _record(
    thing: Thing, read_blob: BlobReader, node: NodeSettings, plan: Plan
) -> SyncRecord | None:
    pid = (thing.identifier or "").strip()
    if not pid:
        _skip(plan, thing, "it has no identifier (mnlite never published it)")
        return None
    modified = thing.date_modified
    if modified is None:
        _skip(plan, thing, "it has no date_modified (dateSysMetadataModified)")
        return None
    data = checked_bytes(thing, read_blob)
    if isinstance(data, str):
        _skip(plan, thing, data)
        return None
    if thing.series_id is not None and thing.series_id.strip() == pid:
        _skip(plan, thing, "its seriesId equals its PID, which DataONE forbids")
        return None
    d1 = node.dataone
    submitter = thing.submitter or d1.submitter
    return SyncRecord(
        pid=pid,
        series_id=(thing.series_id or "").strip() or None,
        node_id=node.id,
        format_id=thing.format_id or DEFAULT_FORMAT,
        checksum_algorithm="MD5",  # what mnlite serves
        checksum=hashlib.md5(data).hexdigest(),
        size=len(data),
        source_url=thing.source or "",
        date_uploaded=thing.date_uploaded or modified,
        date_modified=modified,
        media_type=thing.media_type or "",
        file_name=thing.file_name,
        obsoletes=thing.obsoletes,
        obsoleted_by=thing.obsoleted_by,
        archived=thing.archived,
        serial_version=thing.serial_version or 1,
        submitter=submitter,
        rights_holder=thing.rights_holder or submitter,
    )


def _heads(plan: Plan) -> list[SyncRecord]:
    """Each series' head: not obsoleted by an imported object; the newest when several."""
    members: dict[str, list[SyncRecord]] = {}
    for rec in plan.records:
        if rec.series_id is None:
            plan.notes.append(
                f"{rec.pid} has no seriesId: imported as it is; its page, if still "
                "harvestable, starts a series of its own at the first sync"
            )
            continue
        members.setdefault(rec.series_id, []).append(rec)
    pids = plan.pids
    heads = []
    for sid, recs in members.items():
        open_ = [r for r in recs if r.obsoleted_by is None or r.obsoleted_by not in pids]
        candidates = open_ or recs
        head = max(candidates, key=lambda r: (r.date_modified, r.pid))
        if len(open_) > 1:
            plan.notes.append(
                f"series {sid} has {len(open_)} heads in mnlite (a broken chain); the next "
                f"version obsoletes the newest, {head.pid}"
            )
        if not head.source_url:
            plan.notes.append(f"series {sid}: its head {head.pid} names no source page")
        heads.append(head)
    return heads


def _blocks(data: bytes) -> list[JsonLdBlock] | None:
    """mnlite's stored JSON-LD as the page's blocks: one object, or a list of blocks."""
    try:
        parsed: Any = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    items = parsed if isinstance(parsed, list) else [parsed]
    return [JsonLdBlock(i, item, "json-ld") for i, item in enumerate(items, 1)]


def datasets_of(data: bytes, url: str, limits: Limits) -> list[DatasetResult]:
    """The Datasets the adapter reads in stored JSON-LD, as the pipeline checks them."""
    blocks = _blocks(data)
    if not blocks:
        return []
    found, _ = normalize(blocks, base_url=url, limits=limits)
    out = []
    for ds in found:
        checked = check_requirements(ds.framed, url)
        out.append(
            DatasetResult(
                id=ds.id,
                doi=checked.doi,
                identifiers=checked.identifiers,
                framed=ds.framed,
                original=ds.original,
                pids=checked.pids,
                first_identifier=checked.first_identifier,
            )
        )
    return out


def _content_key(
    head: SyncRecord, data: bytes, node: NodeSettings, limits: Limits, plan: Plan
) -> str:
    """The content key a sync computes for the head's page, or the bytes' sha256 (changed)."""
    sid = head.series_id or ""
    fallback = hashlib.sha256(data).hexdigest()
    if not head.source_url:
        return fallback
    datasets = datasets_of(data, head.source_url, limits)
    accepted = profile_for(node.checks.profile, node.checks.identifier_schemes).schemes
    scheme = node.dataone.series_id_scheme
    for ds in datasets:
        if series_id(ds, scheme, accepted) == sid:
            volatile = node.sync.volatile_properties
            return dataset_candidate(
                ds.original, ds.doi, head.source_url, volatile, series=sid
            ).content_key
    if not datasets:
        plan.notes.append(
            f"series {sid}: the adapter reads no schema.org Dataset in {head.pid}; the first "
            "sync writes a new version if the page now has one"
        )
    else:
        found = ", ".join(sorted({series_id(d, scheme, accepted) or "none" for d in datasets}))
        plan.notes.append(
            f"series {sid}: the adapter files the Dataset of {head.pid} under {found} "
            f"(series_id_scheme {scheme}), not {sid}; the first sync starts that series "
            "and archives this one, whose page no longer lists it"
        )
    return fallback
