"""System metadata v2: every variant validates against DataONE's XSD and parses with d1_common."""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from adapter.api.sysmeta import sysmeta_xml, xml_datetime
from adapter.config.load import quick_node
from adapter.dataone.records import canonical_bytes, pid_for
from adapter.models import SyncRecord
from tests.support.d1schemas import pyxb_parse, validate_types

BODY = canonical_bytes({"@type": "Dataset", "name": "x", "identifier": "doi:10.5072/x"})
STAMP = datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
XSD_ORDER = [
    "serialVersion",
    "identifier",
    "formatId",
    "size",
    "checksum",
    "submitter",
    "rightsHolder",
    "accessPolicy",
    "replicationPolicy",
    "obsoletes",
    "obsoletedBy",
    "archived",
    "dateUploaded",
    "dateSysMetadataModified",
    "originMemberNode",
    "authoritativeMemberNode",
    "replica",
    "seriesId",
    "mediaType",
    "fileName",
]


def record(**changes: Any) -> SyncRecord:
    base = SyncRecord(
        pid=pid_for(BODY),
        series_id="doi:10.5072/x",
        node_id="urn:node:TEST",
        format_id="science-on-schema.org/Dataset;ld+json",
        checksum_algorithm="MD5",
        checksum=hashlib.md5(BODY).hexdigest(),
        size=len(BODY),
        source_url="https://r/1",
        date_uploaded=STAMP,
        date_modified=STAMP,
        file_name="dataset.jsonld",
        submitter="http://orcid.org/0000-0002-1825-0097",
        rights_holder="CN=Demo,DC=dataone,DC=org",
    )
    return replace(base, **changes)


NODE = quick_node("https://repo.example/sitemap.xml", "urn:node:TEST")
RICH_NODE = quick_node(
    "https://repo.example/sitemap.xml",
    "urn:node:TEST",
    dataone={
        "access_policy": [
            {"subject": "public", "permissions": ["read"]},
            {
                "subject": "CN=admins,DC=dataone,DC=org",
                "permissions": ["read", "write", "changePermission"],
            },
        ],
        "replication": {
            "allowed": True,
            "number_replicas": 2,
            "preferred": ["urn:node:KNB"],
            "blocked": ["urn:node:BAD"],
        },
        "checksum_algorithm": "SHA-1",
    },
)

VARIANTS = {
    "new": (record(), NODE),
    "new-version": (record(obsoletes="sha256:" + "0" * 64, serial_version=1), NODE),
    "obsoleted": (
        record(
            obsoleted_by="sha256:" + "1" * 64,
            serial_version=2,
            date_modified=STAMP + timedelta(seconds=5),
        ),
        NODE,
    ),
    "archived": (record(archived=True, serial_version=3), NODE),
    "sha1-rich-policies": (
        record(checksum_algorithm="SHA-1", checksum=hashlib.sha1(BODY).hexdigest()),
        RICH_NODE,
    ),
    "metadata-copy": (
        record(
            format_id="http://www.isotc211.org/2005/gmd",
            media_type="text/xml",
            file_name="metadata.xml",
            series_id="doi:10.5072/x#iso19139",
            describes_pid="sha256:" + "2" * 64,
        ),
        NODE,
    ),
    "no-series": (record(series_id=None, file_name=None), NODE),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_sysmeta_validates_against_the_xsd_and_d1_common(name: str) -> None:
    rec, node = VARIANTS[name]
    xml = sysmeta_xml(rec, node)
    validate_types(xml)
    parsed = pyxb_parse(xml)
    assert parsed.identifier.value() == rec.pid
    assert parsed.checksum.value() == rec.checksum
    assert parsed.checksum.algorithm == rec.checksum_algorithm
    assert int(parsed.size) == rec.size
    assert parsed.originMemberNode.value() == parsed.authoritativeMemberNode.value() == rec.node_id
    assert bool(parsed.archived) is rec.archived
    if rec.series_id:
        assert parsed.seriesId.value() == rec.series_id


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_elements_come_in_the_xsd_order(name: str) -> None:
    rec, node = VARIANTS[name]
    tags = [child.tag for child in ET.fromstring(sysmeta_xml(rec, node))]
    assert tags == sorted(tags, key=XSD_ORDER.index)
    for required in (
        "submitter",
        "dateUploaded",
        "dateSysMetadataModified",
        "originMemberNode",
        "authoritativeMemberNode",
        "rightsHolder",
    ):
        assert required in tags


def test_policies_come_from_the_node_configuration() -> None:
    root = ET.fromstring(sysmeta_xml(record(), RICH_NODE))
    allows = root.findall("accessPolicy/allow")
    assert [a.findtext("subject") for a in allows] == ["public", "CN=admins,DC=dataone,DC=org"]
    assert [p.text for p in allows[1].findall("permission")] == [
        "read",
        "write",
        "changePermission",
    ]
    rep = root.find("replicationPolicy")
    assert rep is not None and rep.attrib == {"replicationAllowed": "true", "numberReplicas": "2"}
    assert rep.findtext("preferredMemberNode") == "urn:node:KNB"
    assert rep.findtext("blockedMemberNode") == "urn:node:BAD"
    default = ET.fromstring(sysmeta_xml(record(), NODE))
    assert default.findtext("accessPolicy/allow/subject") == "public"
    assert default.findtext("accessPolicy/allow/permission") == "read"


def test_dates_are_utc_with_milliseconds() -> None:
    assert xml_datetime(STAMP) == "2024-01-02T03:04:05.678+00:00"
    local = datetime(2024, 1, 2, 5, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2)))
    assert xml_datetime(local) == "2024-01-02T03:04:05.678+00:00"
    root = ET.fromstring(sysmeta_xml(record(), NODE))
    assert root.findtext("dateUploaded") == "2024-01-02T03:04:05.678+00:00"
