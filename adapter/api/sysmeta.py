"""DataONE system metadata v2 XML for a sync record, in the XSD's exact element order.

v2 `SystemMetadata` extends v1 by `xs:extension`, so the sequence is strict: the
v1 fields first, then seriesId, mediaType, fileName (specs.md 1.4). Values the
page cannot carry (submitter, rightsHolder, access and replication policy,
member node ids) come from the node's configuration. The CN compares the
checksum string case-sensitively, so it is written exactly as stored.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from adapter.config.settings import NodeSettings
from adapter.models import SyncRecord

NS_V2 = "http://ns.dataone.org/service/types/v2.0"
ET.register_namespace("d1", NS_V2)


def xml_datetime(value: datetime) -> str:
    """xs:dateTime in UTC with milliseconds: 2024-01-02T03:04:05.678+00:00."""
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(timespec="milliseconds")


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrib: str) -> ET.Element:
    el = ET.SubElement(parent, tag, attrib)
    if text is not None:
        el.text = text
    return el


def sysmeta_element(record: SyncRecord, node: NodeSettings) -> ET.Element:
    """The `d1:systemMetadata` element (children unqualified, as the XSD's form is)."""
    d1 = node.dataone
    root = ET.Element(f"{{{NS_V2}}}systemMetadata")
    _sub(root, "serialVersion", str(record.serial_version))
    _sub(root, "identifier", record.pid)
    _sub(root, "formatId", record.format_id)
    _sub(root, "size", str(record.size))
    _sub(root, "checksum", record.checksum, algorithm=record.checksum_algorithm)
    _sub(root, "submitter", record.submitter or d1.submitter)
    _sub(root, "rightsHolder", record.rights_holder or d1.rights_holder)
    if d1.access_policy:
        policy = _sub(root, "accessPolicy")
        for rule in d1.access_policy:
            allow = _sub(policy, "allow")
            _sub(allow, "subject", rule.subject)
            for permission in rule.permissions:
                _sub(allow, "permission", permission)
    rep = d1.replication
    replication = _sub(
        root,
        "replicationPolicy",
        replicationAllowed=str(rep.allowed).lower(),
        numberReplicas=str(rep.number_replicas),
    )
    for preferred in rep.preferred:
        _sub(replication, "preferredMemberNode", preferred)
    for blocked in rep.blocked:
        _sub(replication, "blockedMemberNode", blocked)
    if record.obsoletes:
        _sub(root, "obsoletes", record.obsoletes)
    if record.obsoleted_by:
        _sub(root, "obsoletedBy", record.obsoleted_by)
    _sub(root, "archived", str(record.archived).lower())
    _sub(root, "dateUploaded", xml_datetime(record.date_uploaded))
    _sub(root, "dateSysMetadataModified", xml_datetime(record.date_modified))
    _sub(root, "originMemberNode", record.node_id)
    _sub(root, "authoritativeMemberNode", record.node_id)
    if record.series_id:
        _sub(root, "seriesId", record.series_id)
    if record.media_type:
        _sub(root, "mediaType", name=record.media_type)
    if record.file_name:
        _sub(root, "fileName", record.file_name)
    return root


def sysmeta_xml(record: SyncRecord, node: NodeSettings) -> bytes:
    """The system metadata document, UTF-8 with an XML declaration."""
    root = sysmeta_element(record, node)
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="UTF-8", xml_declaration=True)) + b"\n"
