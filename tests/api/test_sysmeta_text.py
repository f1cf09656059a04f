"""The text-built system metadata is byte for byte what the ElementTree writer produced.

`tree_sysmeta_xml` below is the writer adapter/api/sysmeta.py had before it wrote
text (benchmarks/api.py: 1 ms per document against 20 us); every record and
node setting, odd characters included, must give the same bytes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.api.sysmeta import NS_V2, SysmetaWriter, sysmeta_xml, xml_datetime
from adapter.config.load import quick_node
from adapter.config.settings import NodeSettings
from adapter.models import SyncRecord
from tests.api.test_sysmeta import NODE, RICH_NODE, VARIANTS, record

ET.register_namespace("d1", NS_V2)


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


def tree_sysmeta_xml(record: SyncRecord, node: NodeSettings) -> bytes:
    """The writer before adapter/api/sysmeta.py wrote text: built as a tree, indented."""
    root = sysmeta_element(record, node)
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="UTF-8", xml_declaration=True)) + b"\n"


def test_every_variant_matches_the_tree_writer() -> None:
    for name, (rec, node) in VARIANTS.items():
        assert sysmeta_xml(rec, node) == tree_sysmeta_xml(rec, node), name


# text with what XML escapes, line breaks, tabs, quotes and non-ASCII letters
ODD = st.text(alphabet=st.sampled_from(list("aZ09 &<>\"'\t\n\r\u00e9\u4e2d:/#;=+%")), max_size=12)


def any_record(
    pid: str,
    series: str | None,
    fmt: str,
    media: str,
    name: str | None,
    obsoletes: str | None,
    obsoleted_by: str | None,
    checksum: str,
    submitter: str,
    archived: bool,
    serial: int,
    size: int,
    micros: int,
) -> SyncRecord:
    stamp = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    return replace(
        record(),
        pid=pid,
        series_id=series,
        format_id=fmt,
        media_type=media,
        file_name=name,
        obsoletes=obsoletes,
        obsoleted_by=obsoleted_by,
        checksum=checksum,
        submitter=submitter,
        archived=archived,
        serial_version=serial,
        size=size,
        date_modified=stamp,
    )


# One strategy for the record's fields rather than a @given argument each: Hypothesis saves
# the global random state before and after drawing each argument (random.getstate, 31 us),
# about 0.9 ms an example for 14 arguments.
RECORDS = st.builds(
    any_record,
    pid=ODD.filter(bool),
    series=st.one_of(st.none(), ODD),
    fmt=ODD,
    media=ODD,
    name=st.one_of(st.none(), ODD),
    obsoletes=st.one_of(st.none(), ODD),
    obsoleted_by=st.one_of(st.none(), ODD),
    checksum=ODD,
    submitter=ODD,
    archived=st.booleans(),
    serial=st.integers(1, 10**6),
    size=st.integers(0, 10**12),
    micros=st.integers(0, 10**12),
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@settings(max_examples=300, deadline=None)
@given(st.tuples(RECORDS, st.booleans()))
def test_any_record_matches_the_tree_writer(case: tuple[SyncRecord, bool]) -> None:
    rec, rich = case
    node = RICH_NODE if rich else NODE
    assert SysmetaWriter(node)(rec) == tree_sysmeta_xml(rec, node)


def test_odd_node_settings_match_the_tree_writer() -> None:
    node = quick_node(
        "https://repo.example/sitemap.xml",
        "urn:node:TEST",
        dataone={
            "submitter": "CN=a&b <c>",
            "rights_holder": 'CN="q"',
            "access_policy": [{"subject": "x&y", "permissions": ["read"]}],
            "replication": {"allowed": False, "number_replicas": 0, "blocked": ["urn:node:B"]},
        },
    )
    rec = replace(record(), submitter="", rights_holder="")
    assert sysmeta_xml(rec, node) == tree_sysmeta_xml(rec, node)
