"""The XML documents of the Member Node API (Node, ObjectList, Checksum, Log, error).

Pure functions from values to UTF-8 bytes. Only the root element is namespaced
(`elementFormDefault="unqualified"`); child order follows D1-XSD exactly, since
the coordinating node validates what it reads. ObjectList and Checksum exist
only as v1 types, so v2 answers use the v1 namespace for them (as d1_python does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from lxml import etree

from adapter.api.exceptions import D1Error
from adapter.api.schedule import Schedule
from adapter.models import SyncRecord
from adapter.store.listing import ListedObject

NS_V1 = "http://ns.dataone.org/service/types/v1"
NS_V2 = "http://ns.dataone.org/service/types/v2.0"

SERVICES_AVAILABLE = ("MNCore", "MNRead")
SERVICES_UNAVAILABLE = ("MNAuthorization", "MNStorage", "MNReplication")


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What the Node document says about one member node."""

    id: str  # urn:node:...
    name: str
    description: str
    contact_subject: str
    schedule: Schedule
    base_url: str | None = None  # public, without the version; never from a request

    @property
    def short_name(self) -> str:
        return self.id.removeprefix("urn:node:")

    @property
    def subject(self) -> str:
        return f"CN={self.id},DC=dataone,DC=org"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One v2 `logEntry` (the event is any non-empty string in v2)."""

    entry_id: str
    identifier: str
    ip_address: str
    user_agent: str
    subject: str
    event: str
    date_logged: datetime
    node_id: str


def d1_datetime(moment: datetime) -> str:
    """xs:dateTime in UTC with milliseconds, as DataONE writes it."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond // 1000:03d}+00:00"
    )


def _serialize(root: etree._Element) -> bytes:
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))


def _child(parent: etree._Element, tag: str, text: str | None = None) -> etree._Element:
    element = etree.SubElement(parent, tag)
    if text is not None:
        element.text = text
    return element


def node_xml(node: NodeInfo, base_url: str, api: str = "v2") -> bytes:
    """The Node capabilities document (v2 type, or v1 for the v1 API).

    `base_url` carries no version (`https://host/mn`): clients append `/v2`.
    """
    ns = NS_V2 if api == "v2" else NS_V1
    root = etree.Element(
        f"{{{ns}}}node",
        nsmap={"d1": ns},
        replicate="false",
        synchronize="true",
        type="mn",
        state="up",
    )
    _child(root, "identifier", node.id)
    _child(root, "name", node.name)
    _child(root, "description", node.description or node.name)
    _child(root, "baseURL", base_url)
    services = _child(root, "services")
    for name, available in [(n, "true") for n in SERVICES_AVAILABLE] + [
        (n, "false") for n in SERVICES_UNAVAILABLE
    ]:
        for version in ("v1", "v2"):
            etree.SubElement(services, "service", name=name, version=version, available=available)
    sync = _child(root, "synchronization")
    s = node.schedule
    etree.SubElement(
        sync,
        "schedule",
        hour=s.hour,
        mday=s.mday,
        min=s.min,
        mon=s.mon,
        sec=s.sec,
        wday=s.wday,
        year=s.year,
    )
    _child(root, "subject", node.subject)
    _child(root, "contactSubject", node.contact_subject)
    return _serialize(root)


def object_list_xml(records: Sequence[SyncRecord], start: int, total: int) -> bytes:
    """A v1 ObjectList slice of whole records (listed at their dateSysMetadataModified)."""
    entries = [
        ListedObject(r.pid, r.format_id, r.checksum_algorithm, r.checksum, r.size, r.date_modified)
        for r in records
    ]
    return object_entries_xml(entries, start, total)


def object_entries_xml(entries: Sequence[ListedObject], start: int, total: int) -> bytes:
    """A v1 ObjectList slice: `count` is what this page holds, `total` the whole match.

    Written as text (a page of 1,000 entries cost 15-30 ms through lxml, about 2 ms
    so), byte for byte what the tree writer produced: tests/api/test_objectlist_text.py.
    """
    head = (
        f"<?xml version='1.0' encoding='UTF-8'?>\n<ns1:objectList xmlns:ns1=\"{NS_V1}\" "
        f'count="{len(entries)}" start="{start}" total="{total}"'
    )
    if not entries:
        return (head + "/>\n").encode("utf-8")
    parts = [head, ">\n"]
    append = parts.append
    for pid, format_id, algorithm, checksum, size, listed in entries:
        append(
            "  <objectInfo>\n"
            f"    <identifier>{_text(pid)}</identifier>\n"
            f"    <formatId>{_text(format_id)}</formatId>\n"
            f'    <checksum algorithm="{_attribute(algorithm)}">'
            f"{_text(checksum)}</checksum>\n"
            f"    <dateSysMetadataModified>{d1_datetime(listed)}"
            "</dateSysMetadataModified>\n"
            f"    <size>{size}</size>\n"
            "  </objectInfo>\n"
        )
    append("</ns1:objectList>\n")
    return "".join(parts).encode("utf-8")


_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTRIBUTE_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\r": "&#13;",
        "\n": "&#10;",
        "\t": "&#9;",
    }
)


def _text(value: str) -> str:
    """Character data as libxml2 escapes it (a value without these is returned as is)."""
    if "&" in value or "<" in value or ">" in value or "\r" in value:
        return value.translate(_TEXT_ESCAPES)
    return value


def _attribute(value: str) -> str:
    return value.translate(_ATTRIBUTE_ESCAPES)


def checksum_xml(algorithm: str, value: str) -> bytes:
    root = etree.Element(f"{{{NS_V1}}}checksum", nsmap={"d1": NS_V1}, algorithm=algorithm)
    root.text = value
    return _serialize(root)


def log_xml(entries: Iterable[LogEntry], start: int, total: int, api: str = "v2") -> bytes:
    """A Log slice (v2, or v1 for the v1 API); an empty one (`count="0"`) is valid."""
    items = list(entries)
    ns = NS_V2 if api == "v2" else NS_V1
    root = etree.Element(
        f"{{{ns}}}log",
        nsmap={"d1": ns},
        count=str(len(items)),
        start=str(start),
        total=str(total),
    )
    for entry in items:
        element = _child(root, "logEntry")
        _child(element, "entryId", entry.entry_id)
        _child(element, "identifier", entry.identifier)
        _child(element, "ipAddress", entry.ip_address)
        _child(element, "userAgent", entry.user_agent)
        _child(element, "subject", entry.subject)
        _child(element, "event", entry.event)
        _child(element, "dateLogged", d1_datetime(entry.date_logged))
        _child(element, "nodeIdentifier", entry.node_id)
    return _serialize(root)


V2_ONLY_SYSMETA = ("seriesId", "mediaType", "fileName")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=True)


def sysmeta_v1(document: bytes) -> bytes:
    """v2 system metadata as the v1 type: v1 namespace, without the v2-only trailing fields.

    v2 `SystemMetadata` extends v1 by appending seriesId, mediaType and fileName,
    so dropping them leaves a valid v1 document (v1 clients and GMN's v1 API).
    """
    source = etree.fromstring(document, parser=_PARSER)
    root = etree.Element(f"{{{NS_V1}}}systemMetadata", nsmap={"d1": NS_V1})
    for child in source:
        if isinstance(child.tag, str) and child.tag not in V2_ONLY_SYSMETA:
            root.append(child)
    return _serialize(root)


def error_xml(error: D1Error, node_id: str | None) -> bytes:
    """`<error>` per dataoneErrors.xsd: no namespace, `identifier` (not `pid`)."""
    root = etree.Element(
        "error",
        name=error.name,
        errorCode=str(error.status),
        detailCode=error.detail_code,
    )
    if error.identifier is not None:
        root.set("identifier", _xml_safe(error.identifier))
    if node_id is not None:
        root.set("nodeId", node_id)
    _child(root, "description", _xml_safe(error.description))
    return _serialize(root)


def error_headers(error: D1Error, node_id: str | None) -> list[tuple[str, str]]:
    """The same exception for HEAD, which has no body (d1_common `serialize_to_headers`)."""
    headers = [
        ("DataONE-Exception-Name", error.name),
        ("DataONE-Exception-ErrorCode", str(error.status)),
        ("DataONE-Exception-DetailCode", error.detail_code),
        ("DataONE-Exception-Description", _header_safe(error.description)),
    ]
    if error.identifier is not None:
        headers.append(("DataONE-Exception-Identifier", _header_safe(error.identifier)))
    if node_id is not None:
        headers.append(("DataONE-Exception-NodeId", node_id))
    return headers


def _xml_safe(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (an identifier echoed back may hold them)."""
    return "".join(
        c
        for c in text
        if c in "\t\n\r"
        or 0x20 <= ord(c) <= 0xD7FF
        or 0xE000 <= ord(c) <= 0xFFFD
        or ord(c) > 0xFFFF
    )


def _header_safe(text: str) -> str:
    """One line of printable ASCII: header values are latin-1 and must not break lines."""
    flat = " ".join(text.split())
    return "".join(
        c if 0x20 <= ord(c) < 0x7F else c.encode("unicode_escape").decode("ascii") for c in flat
    )[:1000]
