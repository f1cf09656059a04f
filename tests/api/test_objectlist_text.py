"""The text-built ObjectList is byte for byte what the lxml writer produced.

`tree_object_list_xml` is the writer adapter/api/xml.py had before it wrote text
(benchmarks/api.py: a page of 1,000 entries cost 15-30 ms); any page, odd
characters included, must give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from adapter.api.xml import NS_V1, d1_datetime, object_list_xml
from adapter.models import SyncRecord
from tests.api.test_sysmeta import record


def tree_object_list_xml(records: Sequence[SyncRecord], start: int, total: int) -> bytes:
    root = etree.Element(
        f"{{{NS_V1}}}objectList",
        nsmap={"ns1": NS_V1},
        count=str(len(records)),
        start=str(start),
        total=str(total),
    )
    for rec in records:
        info = etree.SubElement(root, "objectInfo")
        for tag, text in (
            ("identifier", rec.pid),
            ("formatId", rec.format_id),
            ("checksum", rec.checksum),
            ("dateSysMetadataModified", d1_datetime(rec.date_modified)),
            ("size", str(rec.size)),
        ):
            etree.SubElement(info, tag).text = text
        info.find("checksum").set("algorithm", rec.checksum_algorithm)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))


def test_empty_and_plain_pages_match_the_tree_writer() -> None:
    assert object_list_xml([], 0, 0) == tree_object_list_xml([], 0, 0)
    page = [replace(record(), pid=f"sha256:{i:064x}") for i in range(3)]
    assert object_list_xml(page, 10, 13) == tree_object_list_xml(page, 10, 13)


ODD = st.text(alphabet=st.sampled_from(list("aZ09 &<>\"'\t\r\n\u00e9\u4e2d:/#;=+%")), min_size=1)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@settings(max_examples=300, deadline=None)
@given(
    entries=st.lists(
        st.tuples(ODD, ODD, ODD, ODD, st.integers(0, 10**12), st.integers(0, 10**12)),
        max_size=4,
    ),
    start=st.integers(0, 10**6),
)
def test_any_page_matches_the_tree_writer(
    entries: list[tuple[str, str, str, str, int, int]], start: int
) -> None:
    stamp = datetime(2020, 1, 1, tzinfo=UTC)
    page = [
        replace(
            record(),
            pid=pid,
            format_id=fmt,
            checksum=checksum,
            checksum_algorithm=algorithm,
            size=size,
            date_modified=stamp + timedelta(microseconds=micros),
        )
        for pid, fmt, checksum, algorithm, size, micros in entries
    ]
    total = start + len(page)
    assert object_list_xml(page, start, total) == tree_object_list_xml(page, start, total)
