"""DataONE system metadata v2 XML for a sync record, in the XSD's exact element order.

v2 `SystemMetadata` extends v1 by `xs:extension`, so the sequence is strict: the
v1 fields first, then seriesId, mediaType, fileName (specs.md 1.4). Values the
page cannot carry (submitter, rightsHolder, access and replication policy,
member node ids) come from the node's configuration. The CN compares the
checksum string case-sensitively, so it is written exactly as stored.

Written as text, not through ElementTree: getSystemMetadata is the API's
hottest call, and building, indenting and serializing a tree cost about 1 ms
per document against about 20 us for the text (benchmarks/api.py). The node's
fixed parts (access and replication policy) are rendered once per node by
`SysmetaWriter`. The bytes are the ones ElementTree wrote (same escaping,
two-space indentation, `<tag />` for an empty element); tests/api/test_sysmeta_text.py
holds the tree-built writer as the reference.
"""

from __future__ import annotations

from datetime import UTC, datetime

from adapter.config.settings import NodeSettings
from adapter.models import SyncRecord

NS_V2 = "http://ns.dataone.org/service/types/v2.0"
_HEAD = f"<?xml version='1.0' encoding='UTF-8'?>\n<d1:systemMetadata xmlns:d1=\"{NS_V2}\">\n"
_TAIL = "</d1:systemMetadata>\n"


def xml_datetime(value: datetime) -> str:
    """xs:dateTime in UTC with milliseconds: 2024-01-02T03:04:05.678+00:00."""
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(timespec="milliseconds")


def escape_text(text: str) -> str:
    """Character data as ElementTree escapes it."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def escape_attribute(text: str) -> str:
    """An attribute value as ElementTree escapes it (quotes and line breaks too)."""
    text = escape_text(text)
    for raw, ref in (('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;")):
        if raw in text:
            text = text.replace(raw, ref)
    return text


def element(indent: str, tag: str, text: str | None = None, **attrib: str) -> str:
    """One line: `<tag a="v">text</tag>`, or `<tag a="v" />` when it has no text."""
    attrs = "".join(f' {name}="{escape_attribute(value)}"' for name, value in attrib.items())
    if text:
        return f"{indent}<{tag}{attrs}>{escape_text(text)}</{tag}>\n"
    return f"{indent}<{tag}{attrs} />\n"


class SysmetaWriter:
    """Writes one node's system metadata documents; its fixed parts are rendered once."""

    def __init__(self, node: NodeSettings) -> None:
        d1 = node.dataone
        self.submitter = d1.submitter
        self.rights_holder = d1.rights_holder
        policy = ""
        if d1.access_policy:
            policy = "  <accessPolicy>\n"
            for rule in d1.access_policy:
                policy += "    <allow>\n" + element("      ", "subject", rule.subject)
                policy += "".join(element("      ", "permission", p) for p in rule.permissions)
                policy += "    </allow>\n"
            policy += "  </accessPolicy>\n"
        rep = d1.replication
        members = [element("    ", "preferredMemberNode", p) for p in rep.preferred]
        members += [element("    ", "blockedMemberNode", b) for b in rep.blocked]
        attrs = {
            "replicationAllowed": str(rep.allowed).lower(),
            "numberReplicas": str(rep.number_replicas),
        }
        if members:
            opening = element("  ", "replicationPolicy", None, **attrs).replace(" />", ">", 1)
            policy += opening + "".join(members) + "  </replicationPolicy>\n"
        else:
            policy += element("  ", "replicationPolicy", None, **attrs)
        self.policies = policy

    def __call__(self, record: SyncRecord) -> bytes:
        i = "  "
        parts = [
            _HEAD,
            element(i, "serialVersion", str(record.serial_version)),
            element(i, "identifier", record.pid),
            element(i, "formatId", record.format_id),
            element(i, "size", str(record.size)),
            element(i, "checksum", record.checksum, algorithm=record.checksum_algorithm),
            element(i, "submitter", record.submitter or self.submitter),
            element(i, "rightsHolder", record.rights_holder or self.rights_holder),
            self.policies,
        ]
        if record.obsoletes:
            parts.append(element(i, "obsoletes", record.obsoletes))
        if record.obsoleted_by:
            parts.append(element(i, "obsoletedBy", record.obsoleted_by))
        node_id = record.node_id
        parts += [
            element(i, "archived", str(record.archived).lower()),
            element(i, "dateUploaded", xml_datetime(record.date_uploaded)),
            element(i, "dateSysMetadataModified", xml_datetime(record.date_modified)),
            element(i, "originMemberNode", node_id),
            element(i, "authoritativeMemberNode", node_id),
        ]
        if record.series_id:
            parts.append(element(i, "seriesId", record.series_id))
        if record.media_type:
            parts.append(element(i, "mediaType", None, name=record.media_type))
        if record.file_name:
            parts.append(element(i, "fileName", record.file_name))
        parts.append(_TAIL)
        return "".join(parts).encode("utf-8")


def sysmeta_xml(record: SyncRecord, node: NodeSettings) -> bytes:
    """The system metadata document, UTF-8 with an XML declaration."""
    return SysmetaWriter(node)(record)
