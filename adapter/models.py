"""Values passed between the stages. Plain dataclasses, no logic, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from adapter.findings import Finding, has_errors
from adapter.slotpickle import fast_pickle

LinkSource = Literal["header", "html", "linkset", "signmap"]


@fast_pickle  # crosses processes in a multi-process sync
@dataclass(frozen=True, slots=True)
class Link:
    """One typed link: one relation, absolute target, absolute context."""

    href: str
    rel: str
    anchor: str
    source: LinkSource
    type: str | None = None
    profile: str | None = None
    # other target attributes (title, hreflang, hash, length, modified, ...)
    extra: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    loc: str
    sitemap: str  # the sitemap URL it came from
    lastmod: datetime | None = None
    links: tuple[Link, ...] = ()  # Signmap <rs:ln>, source "signmap"
    attributes: tuple[tuple[str, str], ...] = ()  # <rs:md> hash, length, type, ...
    # a sitegraph's Dataset: its JSON-LD cut out of the graph (`sitemap` is the graph's URL),
    # checked from these bytes instead of a GET (adapter.discovery.sitegraph)
    document: bytes | None = None


@dataclass(frozen=True, slots=True)
class Fetched:
    """One HTTP response, after redirects, with its body read up to a cap."""

    url: str  # as requested
    final_url: str  # after redirects
    status: int
    headers: dict[str, str]  # lower-cased names; repeated fields comma-joined
    body: bytes
    redirects: tuple[str, ...] = ()  # every URL visited before final_url
    elapsed: float = 0.0
    truncated: bool = False  # the body hit its byte cap
    link_headers: tuple[str, ...] = ()  # each Link field as sent, unjoined
    # the body is the page's DOM as a browser rendered it (`adapter.render`), headers the
    # real response's; with what rendering found (or why it failed) as findings
    rendered: bool = False
    render_findings: tuple[Finding, ...] = ()

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for part in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = part.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"').lower()
        return None

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("last-modified")


@dataclass(frozen=True, slots=True)
class MediaObjectRef:
    """An `encoding`, `subjectOf` or `distribution` entry of a Dataset."""

    content_url: str | None  # the link the adapter uses: contentUrl, else what `link_property` says
    encoding_format: tuple[str, ...] = ()  # encodingFormat, else what `format_property` says
    identifier: str | None = None
    date_modified: str | None = None
    property: str = "distribution"  # encoding | subjectOf | distribution
    where: str = ""
    # where content_url and encoding_format came from, as the page wrote them
    link_property: str = "contentUrl"  # contentUrl | contentURL | url | the entry itself
    format_property: str = "encodingFormat"  # encodingFormat | fileFormat
    page_url: str | None = None  # the entry's own `url` (schema.org: a page about it)
    reference: str | None = None  # the @id of a node the page does not describe


@fast_pickle  # crosses processes in a multi-process sync
@dataclass(frozen=True, slots=True)
class Identifier:
    """A persistent identifier recognised in a Dataset's `identifier` (`adapter.identifiers`)."""

    scheme: str  # doi | ark | handle | urn | http
    value: str  # the series form: doi:10.x/y, ark:/12345/x, hdl:p/s, urn:nid:nss, the IRI
    published: str  # as the page wrote it


@dataclass(frozen=True, slots=True)
class ChecklistItem:
    """One requirement of a node's profile, judged for one Dataset (`adapter.dataone.profiles`)."""

    name: str  # the requirement's name: doi-identifier, encoding, license, ...
    label: str  # what it asks, for a repository manager
    blocking: bool  # unmet, the Dataset is not harvestable under the profile
    met: bool
    codes: tuple[str, ...] = ()  # the finding codes that say why it is not met


@dataclass(slots=True)
class DatasetResult:
    """One schema.org Dataset found on a page, normalized and checked."""

    id: str | None  # the Dataset's @id
    doi: str | None  # normalized 10.x/y
    identifiers: list[str] = field(default_factory=list)
    encoding: list[MediaObjectRef] = field(default_factory=list)
    distributions: list[MediaObjectRef] = field(default_factory=list)
    framed: dict[str, Any] = field(default_factory=dict)  # framed, http://schema.org/ @vocab
    original: dict[str, Any] = field(default_factory=dict)  # the publisher's JSON-LD for it
    findings: list[Finding] = field(default_factory=list)
    block: int | None = None  # the JSON-LD block of the page it came from (1-based)
    where: str | None = None  # where in that block, e.g. "block 2 $['@graph'][1]"
    # persistent identifiers recognised in `identifier`, in order (DOIs included)
    pids: list[Identifier] = field(default_factory=list)
    first_identifier: str | None = None  # the first identifier as mnlite reads it
    checklist: list[ChecklistItem] = field(default_factory=list)  # the profile's requirements
    # the Solr fields DataONE's indexer would fill (`adapter.dataone.index.compute`)
    dataone_index: dict[str, str | list[str]] = field(default_factory=dict)

    @property
    def harvestable(self) -> bool:
        return not has_errors(self.findings)


@dataclass(slots=True)
class DatasetReport:
    """Everything the adapter learned about one landing page."""

    url: str  # as given
    final_url: str | None = None
    status: int | None = None
    datasets: list[DatasetResult] = field(default_factory=list)
    signposts: list[Link] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    path: list[str] = field(default_factory=list)  # how the landing page was reached
    fetched: Fetched | None = None
    not_modified: bool = False  # a conditional GET answered 304
    profile: str = "dataone"  # the requirement profile that decided `harvestable`
    rendered: bool = False  # read from the DOM a browser rendered (`adapter.render`)

    @property
    def harvestable(self) -> bool:
        """Page-level errors block everything; otherwise any clean Dataset is harvestable."""
        if has_errors(self.findings):
            return False
        return any(d.harvestable for d in self.datasets)

    def all_findings(self) -> list[Finding]:
        out = list(self.findings)
        for d in self.datasets:
            out.extend(d.findings)
        return out


@dataclass(slots=True)
class SyncRecord:
    """One DataONE object with its system metadata, as kept in the store."""

    pid: str  # sha256:<hex> of the object bytes
    series_id: str | None  # doi:10.x/y
    node_id: str  # urn:node:...
    format_id: str  # science-on-schema.org/Dataset;ld+json, or the metadata copy's format
    checksum_algorithm: str  # MD5 or SHA-1, as written in the system metadata
    checksum: str  # lowercase hex
    size: int
    source_url: str  # landing page (or metadata URL for a metadata copy)
    date_uploaded: datetime
    date_modified: datetime  # dateSysMetadataModified: when our store changed it
    media_type: str = "application/ld+json"
    file_name: str | None = None
    obsoletes: str | None = None
    obsoleted_by: str | None = None
    archived: bool = False
    serial_version: int = 1
    submitter: str = ""
    rights_holder: str = ""
    object_bytes: bytes | None = None  # not always loaded
    describes_pid: str | None = None  # a metadata copy points at its Dataset object
