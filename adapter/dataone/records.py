"""Sync records: the DataONE object for a Dataset, and the rules of its version chain.

Pure functions only. The object is the publisher's Dataset JSON-LD serialized
with RFC 8785 (same content, same bytes); the seriesId follows the node's
series-id scheme (`series_id`: `doi:<DOI>` by default); the
checksum is MD5 or SHA-1 in lowercase hex, as the node asks. Whether a Dataset
*changed* is decided on a content key that leaves out the node's volatile
properties (view counters, "generated at" stamps), so they never make versions.

The PID scheme. DataONE identifiers are unique for ever, across the federation,
and `archived`/`obsoletedBy` are one-way, so content that comes back (a revert
A -> B -> A, a page restored after removal, the same JSON-LD on two nodes of one
store) must get a PID of its own. A PID is the content checksum plus the
smallest counter that makes it new in the store:
- `sha256:<hex>`: the first object in the store with these bytes (every PID an
  earlier version of the adapter wrote has this form and stays valid);
- `sha256:<hex>.<n>` (n = 2, 3, ...): the n-th object with the same bytes, on
  any node of the store.
The store's identifier registry (`adapter.store.ledger.claim_identifier`) hands
the counter out under its primary key, so two nodes or two workers never get
the same one. The hex always is the sha256 of the object's bytes, so anyone can
still check a PID against its object.

The version rules (`decide`): a series follows its DOI, not its URL. A page
whose content key differs from the head's, or whose head was archived (a page
restored after a 404/410 or after missing from the sitemaps), or whose series
was owned by another page of the node that has left (a move to a new URL),
writes a new head obsoleting the old one. A series whose owning page is still
live is not taken by a second page (`DUPLICATE_DOI`); a seriesId another node
of the store holds is never written (`DOI_OF_OTHER_NODE`).

Series ids. Under the `doi` scheme (the default) a Dataset's seriesId is
`doi:10.x/y`; a Dataset its profile accepts without a DOI is filed under its
first persistent identifier of a scheme the profile allows, in that
identifier's series form (`ark:/12345/x`, `hdl:20.500.1/x`, `urn:nid:nss`, or
the publisher's own IRI: `adapter.identifiers`). Under the `mnlite` scheme it
is the first `identifier` value as published (a text, a PropertyValue's
`value`, else its `@id`), as DataONE's mnlite forms it
(soscan/sonormalizepipeline.py: "Use the first identifier value provided for
series_id"), so a node moved from mnlite continues its series; under
`mnlite-at-id` (mnlite's `use_at_id`) it is the Dataset's `@id`, else that
first identifier. Series ids of
metadata copies: `<Dataset seriesId>#<short name of the format>`
(`doi:10.1234/abc#iso19139`). Every PID starts with `sha256:`, and a seriesId
that would too is refused (`series_id`), so a seriesId can never equal a PID
(the registry also enforces it).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import rfc8785

from adapter.dataone import canonjson
from adapter.findings import FindingType, Severity
from adapter.models import DatasetResult, SyncRecord
from adapter.slotpickle import fast_pickle

DATASET_FORMAT = "science-on-schema.org/Dataset;ld+json"
DATASET_MEDIA_TYPE = "application/ld+json"
PID_PREFIX = "sha256:"
SID_PREFIX = "doi:"

# DataONE METADATA format ids (D1-FMT objectFormatListV2.xml) a metadata copy may carry,
# with the short name used in its seriesId.
METADATA_FORMATS: dict[str, str] = {
    "http://www.isotc211.org/2005/gmd": "iso19139",
    "http://www.isotc211.org/2005/gmd-noaa": "iso19139-noaa",
    "http://www.isotc211.org/2005/gmd-pangaea": "iso19139-pangaea",
    "INCITS-453-2009": "iso19115-nap",
    "https://eml.ecoinformatics.org/eml-2.2.0": "eml-2.2.0",
    "eml://ecoinformatics.org/eml-2.1.1": "eml-2.1.1",
    "eml://ecoinformatics.org/eml-2.1.0": "eml-2.1.0",
    "http://datacite.org/schema/kernel-3.0": "datacite-3.0",
    "http://datacite.org/schema/kernel-3.1": "datacite-3.1",
    "http://datacite.org/schema/kernel-4": "datacite-4",
    "FGDC-STD-001-1998": "fgdc",
    "FGDC-STD-001.1-1999": "fgdc-bdp",
}

DUPLICATE_DOI = FindingType(
    "sync/duplicate-doi",
    Severity.ERROR,
    "Another live landing page of this repository already publishes a Dataset with this DOI; "
    "one DOI must have one landing page, so this copy is not synced (if that page goes, "
    "the series moves to this one).",
)
NO_DOI = FindingType(
    "sync/no-doi",
    Severity.ERROR,
    "The Dataset has no identifier this node can file it under (a DOI, or one its profile "
    "and series-id scheme allow), so it has no DataONE series id and is not synced.",
)
HELD_BY_PROFILE = FindingType(
    "sync/held-by-profile",
    Severity.WARNING,
    "The page is still up and still publishes this series, but it no longer meets the "
    "node's requirement profile (a changed profile, or a stricter version): its last record "
    "stays published, unarchived, and it gets no new versions until it meets the profile.",
)
UNKNOWN_METADATA_FORMAT = FindingType(
    "sync/metadata-format-unknown",
    Severity.WARNING,
    "The metadata file's encodingFormat is not a DataONE metadata format id, "
    "so the metadata copy is not synced.",
)
STORE_WRITE_FAILED = FindingType(
    "store/write-failed",
    Severity.ERROR,
    "The page was checked but its outcome could not be written to the store (locked, "
    "unreachable or full); nothing of it was written, and the next run processes it again.",
)
DOI_OF_OTHER_NODE = FindingType(
    "sync/doi-of-other-node",
    Severity.ERROR,
    "Another member node of this store already publishes this DOI as its series id; a "
    "series id belongs to one node in DataONE, so this Dataset is not synced here.",
)
SERIES_MOVED = FindingType(
    "sync/series-moved",
    Severity.INFO,
    "The DOI's series was published from another landing page that has left (gone, removed "
    "or missing from the sitemaps); the series follows its DOI to this page, as a new version.",
)
SERIES_UNLISTED = FindingType(
    "sync/series-archived",
    Severity.WARNING,
    "A series this landing page published is no longer on it (a Dataset removed, its DOI "
    "changed, or a metadata copy no longer linked), so its head is archived.",
)
METADATA_COPY_FAILED = FindingType(
    "sync/metadata-copy-failed",
    Severity.WARNING,
    "The metadata file named by the Dataset's encoding could not be fetched; "
    "the Dataset is synced without its metadata copy.",
)


class Decision(StrEnum):
    CREATE = "create"  # a new series
    NEW_VERSION = "update"  # a changed Dataset: new PID obsoleting the head
    RESTORE = "restore"  # the head was archived and the page publishes it again
    MOVE = "move"  # the owning page left; the series follows its DOI to this page
    UNCHANGED = "unchanged"  # same content key as the live head: nothing is written
    FOREIGN = "foreign"  # the series belongs to another landing page that is live


@fast_pickle  # crosses processes in a multi-process sync
@dataclass(frozen=True, slots=True)
class Candidate:
    """What a page offers for one series: the object and what its record needs."""

    series_id: str
    object_bytes: bytes
    content_key: str  # decides "changed"; equals the PID's hex unless volatile props exist
    format_id: str
    media_type: str
    file_name: str
    source_url: str  # the landing page that owns the series
    object_url: str  # where the bytes came from (the metadata file for a copy)
    describes_series: str | None = None  # a metadata copy -> the Dataset's series

    @property
    def pid(self) -> str:
        """The first PID these bytes get (later ones add a counter: see the module doc)."""
        return pid_for(self.object_bytes)


@dataclass(frozen=True, slots=True)
class SeriesState:
    """What the store holds for a series."""

    series_id: str
    source_url: str
    head_pid: str
    content_key: str
    head_archived: bool = False
    owner_left: bool = False  # the owning page is gone, removed or missing from the sitemaps


MAX_SAFE_INT = 2**53 - 1


def _i_json(value: Any) -> Any:
    """The document in RFC 8785's domain (I-JSON): what a publisher's JSON can hold beyond it
    (integers past 2**53, NaN/Infinity that lenient parsers accept) becomes what a JSON
    reader would see: a double, or null when there is no number."""
    if isinstance(value, dict):
        return {str(k): _i_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_i_json(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if abs(value) <= MAX_SAFE_INT:
            return value
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def canonical_bytes(document: Any) -> bytes:
    """RFC 8785 canonical JSON: the same content always gives the same bytes.

    A plain document (no floats, no big integers: see `canonjson`) is already in
    I-JSON and takes the C encoder; anything else the reference library."""
    fast = canonjson.fast_dumps(document)
    if fast is not None:
        return fast
    return bytes(rfc8785.dumps(_i_json(document)))


def pid_for(object_bytes: bytes, n: int = 1) -> str:
    """The n-th PID of these bytes in a store (see the module docstring)."""
    base = PID_PREFIX + hashlib.sha256(object_bytes).hexdigest()
    if n < 1:
        raise ValueError(f"PID counter {n} must be 1 or more")
    return base if n == 1 else f"{base}.{n}"


def content_pid(pid: str) -> str:
    """The PID without its counter: `sha256:<hex>` of the object's bytes."""
    return pid.split(".", 1)[0]


def checksum(object_bytes: bytes, algorithm: str) -> str:
    """Lowercase hex digest under DataONE's algorithm label (MD5, SHA-1, SHA-256)."""
    name = {"MD5": "md5", "SHA-1": "sha1", "SHA1": "sha1", "SHA-256": "sha256"}.get(algorithm)
    if name is None:
        raise ValueError(f"unsupported checksum algorithm {algorithm!r} (use MD5 or SHA-1)")
    return hashlib.new(name, object_bytes).hexdigest()


def series_id_for(doi: str) -> str:
    return SID_PREFIX + doi


def series_id(dataset: DatasetResult, scheme: str, accepted: tuple[str, ...]) -> str | None:
    """The Dataset's seriesId under the node's scheme, from identifiers its profile accepts."""
    if scheme == "mnlite":
        found = dataset.first_identifier
    elif scheme == "mnlite-at-id":  # mnlite's use_at_id (GeoNetwork has no identifier)
        found = dataset.id or dataset.first_identifier
    elif dataset.doi is not None:
        found = series_id_for(dataset.doi)
    else:
        found = next((p.value for p in dataset.pids if p.scheme in accepted), None)
    if found is None or found.startswith(PID_PREFIX):
        return None
    return found


def possible_series_ids(dataset: DatasetResult) -> set[str]:
    """Every seriesId the Dataset may have been filed under, by any profile or scheme.

    What a page still lists: a series filed under a laxer profile stays listed
    (and so is never archived) while the page fails a stricter one."""
    found = {p.value for p in dataset.pids}
    if dataset.doi is not None:
        found.add(series_id_for(dataset.doi))
    if dataset.first_identifier is not None:
        found.add(dataset.first_identifier)
    if dataset.id is not None:  # the mnlite-at-id scheme's
        found.add(dataset.id)
    return found


def metadata_series_id(dataset_series: str, format_id: str) -> str:
    short = METADATA_FORMATS.get(format_id) or hashlib.sha1(format_id.encode()).hexdigest()[:8]
    return f"{dataset_series}#{short}"


def _volatile_names(names: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for name in names:
        local = name.rsplit("/", 1)[-1].removeprefix("schema:")
        out |= {
            local,
            f"schema:{local}",
            f"http://schema.org/{local}",
            f"https://schema.org/{local}",
        }
    return frozenset(out)


def _without(value: Any, drop: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_without(v, drop) for v in value]
    return value


def content_key(document: Any, volatile: tuple[str, ...] = (), body: bytes | None = None) -> str:
    """sha256 hex of the canonical document without the volatile properties (at any depth).

    `body`, when given, is `canonical_bytes(document)`: reused when no volatile
    property is there to drop, so a page serializes its Dataset once."""
    stripped = _without(document, _volatile_names(volatile)) if volatile else document
    if body is None or stripped != document:  # something was dropped: other bytes
        body = canonical_bytes(stripped)
    return hashlib.sha256(body).hexdigest()


def dataset_candidate(
    original: dict[str, Any],
    doi: str | None,
    landing_url: str,
    volatile: tuple[str, ...] = (),
    *,
    series: str | None = None,
) -> Candidate:
    """The Dataset's object; `series` (its seriesId) defaults to `doi:<doi>`."""
    if series is None:
        if doi is None:
            raise ValueError("a Dataset candidate needs a DOI or a series id")
        series = series_id_for(doi)
    body = canonical_bytes(original)
    return Candidate(
        series_id=series,
        object_bytes=body,
        content_key=content_key(original, volatile, body),
        format_id=DATASET_FORMAT,
        media_type=DATASET_MEDIA_TYPE,
        file_name="dataset.jsonld",
        source_url=landing_url,
        object_url=landing_url,
    )


def metadata_candidate(
    body: bytes, format_id: str, dataset_series: str, landing_url: str, metadata_url: str
) -> Candidate:
    return Candidate(
        series_id=metadata_series_id(dataset_series, format_id),
        object_bytes=body,
        content_key=hashlib.sha256(body).hexdigest(),
        format_id=format_id,
        media_type="text/xml",
        file_name="metadata.xml",
        source_url=landing_url,
        object_url=metadata_url,
        describes_series=dataset_series,
    )


def decide(existing: SeriesState | None, candidate: Candidate) -> Decision:
    """The version-chain rule for one series (see the module docstring)."""
    if existing is None:
        return Decision.CREATE
    if existing.source_url != candidate.source_url:
        left = existing.owner_left or existing.head_archived
        return Decision.MOVE if left else Decision.FOREIGN
    if existing.head_archived:
        return Decision.RESTORE
    same = existing.content_key == candidate.content_key
    if same or content_pid(existing.head_pid) == candidate.pid:
        return Decision.UNCHANGED
    return Decision.NEW_VERSION


def new_record(
    candidate: Candidate,
    *,
    node_id: str,
    stamp: datetime,
    algorithm: str,
    submitter: str,
    rights_holder: str,
    obsoletes: str | None = None,
    describes_pid: str | None = None,
    pid: str | None = None,
) -> SyncRecord:
    """The record of a newly stored object: dateUploaded = dateSysMetadataModified = stamp.

    `pid`: the one the store handed out (default: the first PID of the bytes)."""
    if candidate.series_id.startswith(PID_PREFIX):
        raise ValueError(f"series id {candidate.series_id} looks like a PID")
    return SyncRecord(
        pid=pid or candidate.pid,
        series_id=candidate.series_id,
        node_id=node_id,
        format_id=candidate.format_id,
        checksum_algorithm=algorithm,
        checksum=checksum(candidate.object_bytes, algorithm),
        size=len(candidate.object_bytes),
        source_url=candidate.object_url,
        date_uploaded=stamp,
        date_modified=stamp,
        media_type=candidate.media_type,
        file_name=candidate.file_name,
        obsoletes=obsoletes,
        submitter=submitter,
        rights_holder=rights_holder,
        object_bytes=candidate.object_bytes,
        describes_pid=describes_pid,
    )
