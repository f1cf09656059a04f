"""DataONE's own Python client drives the served API the way the coordinating node does.

The store is real (SQLite in tmp_path, and PostgreSQL when configured) and is
written through the same ledger a sync uses; the app runs under waitress on
127.0.0.1. The harvest below follows D1-SYNC `ObjectListHarvestTask`: the
`count=0` probe for the total, paging with `start += len(page)`, then per PID
getSystemMetadata, getChecksum with the sysmeta's algorithm, get, and the
checksum held against the bytes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import d1_client.mnclient
import d1_client.mnclient_2_0
import d1_common.resource_map
import d1_common.types.exceptions
import pytest

from adapter.api.params import CHECKSUM_ALGORITHMS
from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT
from adapter.store.db import Store
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.d1schemas import validate_types
from tests.support.fixture_server import SITES, start_site, stop
from tests.support.member_node import FORMAT, archive, node_settings, put_dataset, serve_app

MS = timedelta(milliseconds=1)


@dataclass
class Harvested:
    pid: str
    sysmeta: Any
    data: bytes


def harvest(
    client: Any, from_date: datetime | None, to_date: datetime, page: int = 2
) -> list[Harvested]:
    """One CN harvest of the window [from_date, to_date)."""
    probe = client.listObjects(fromDate=from_date, toDate=to_date, start=0, count=0)
    total = probe.total
    assert probe.count == 0 and len(probe.objectInfo) == 0
    infos: list[Any] = []
    start = 0
    while start < total:
        result = client.listObjects(fromDate=from_date, toDate=to_date, start=start, count=page)
        assert result.total == total and result.start == start
        if not result.objectInfo:
            break
        infos.extend(result.objectInfo)
        start += len(result.objectInfo)
    assert len(infos) == total
    stamps = [info.dateSysMetadataModified for info in infos]
    assert stamps == sorted(stamps)  # queued in ascending dateSysMetadataModified
    out = []
    for info in infos:
        pid = info.identifier.value()
        sysmeta = client.getSystemMetadata(pid)
        assert sysmeta.identifier.value() == pid
        algorithm = sysmeta.checksum.algorithm
        assert info.checksum.value() == sysmeta.checksum.value()
        checksum = client.getChecksum(pid, algorithm)
        assert (checksum.algorithm, checksum.value()) == (algorithm, sysmeta.checksum.value())
        data = client.get(pid).content
        digest = hashlib.new(CHECKSUM_ALGORITHMS[algorithm], data).hexdigest()
        assert digest == sysmeta.checksum.value() and len(data) == sysmeta.size
        out.append(Harvested(pid, sysmeta, data))
    return out


store_url = stores.store_url  # a fresh SQLite file, and a fresh PostgreSQL schema


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = Store.open(store_url)
    yield opened
    opened.close()


@pytest.fixture
def node() -> NodeSettings:
    return node_settings(f"urn:node:T{uuid.uuid4().hex[:12]}")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), "utf-8")


def client_for(base: str) -> Any:
    return d1_client.mnclient_2_0.MemberNodeClient_2_0(base, timeout_sec=10)


def test_capabilities_and_ping_through_dataone_client(store: Store, node: NodeSettings) -> None:
    with serve_app(store, [node]) as served:
        client = client_for(f"{served.origin}/{node.short_name}")
        assert client.ping() is True
        capabilities = client.getCapabilities()
    assert capabilities.identifier.value() == node.id
    assert capabilities.baseURL == f"{served.origin}/{node.short_name}"
    assert capabilities.state == "up" and capabilities.type == "mn"
    services = {(s.name, s.version): s.available for s in capabilities.services.service}
    assert bool(services[("MNRead", "v2")]) and not services[("MNStorage", "v2")]
    assert capabilities.subject[0].value() == f"CN={node.id},DC=dataone,DC=org"
    assert capabilities.synchronization.schedule.min == "0/15"


def test_cn_harvest_sees_exactly_the_changes_between_two_harvests(
    store: Store, node: NodeSettings
) -> None:
    for i in range(5):
        put_dataset(store, node, f"10.5555/ds{i}", f"Dataset {i}")
    with serve_app(store, [node]) as served:
        client = client_for(f"{served.origin}/{node.short_name}")
        first = harvest(client, None, datetime.now(UTC) + timedelta(seconds=1))
        assert len(first) == 5
        assert {h.sysmeta.seriesId.value() for h in first} == {
            f"doi:10.5555/ds{i}" for i in range(5)
        }
        last_harvested = max(h.sysmeta.dateSysMetadataModified for h in first)

        # a sync between the harvests: a new version of ds1, ds3 gone from the site
        new_version = put_dataset(store, node, "10.5555/ds1", "Dataset 1, revised").versions[0]
        archived = archive(store, node, "https://repo.example/dataset/10.5555/ds3")

        second = harvest(client, last_harvested + MS, datetime.now(UTC) + timedelta(seconds=1))
    old_ds1 = next(h.pid for h in first if h.sysmeta.seriesId.value() == "doi:10.5555/ds1")
    by_pid = {h.pid: h.sysmeta for h in second}
    assert set(by_pid) == {new_version, old_ds1, *archived}
    assert by_pid[new_version].obsoletes.value() == old_ds1
    assert by_pid[old_ds1].obsoletedBy.value() == new_version
    assert [bool(by_pid[pid].archived) for pid in archived] == [True]
    assert by_pid[new_version].seriesId.value() == "doi:10.5555/ds1"


def test_series_id_resolves_to_head_and_archived_objects_stay_readable(
    store: Store, node: NodeSettings
) -> None:
    first = put_dataset(store, node, "10.5555/a+b", "v1").created[0]
    head = put_dataset(store, node, "10.5555/a+b", "v2").versions[0]
    archive(store, node, "https://repo.example/dataset/10.5555/a+b")
    with serve_app(store, [node]) as served:
        client = client_for(f"{served.origin}/{node.short_name}")
        by_sid = client.getSystemMetadata("doi:10.5555/a+b")  # d1_client sends %2F and %2B
        described = client.describe("doi:10.5555/a+b")
        old = client.getSystemMetadata(first)
        data = client.get("doi:10.5555/a+b").content
        with pytest.raises(d1_common.types.exceptions.NotFound) as missing:
            client.getSystemMetadata("doi:10.5555/unknown")
        with pytest.raises(d1_common.types.exceptions.NotFound) as missing_head:
            client.describe("sha256:0000")
    assert by_sid.identifier.value() == head and bool(by_sid.archived)
    assert described["DataONE-SeriesId"] == "doi:10.5555/a+b"
    assert described["DataONE-Obsoletes"] == first
    assert old.obsoletedBy.value() == head and not old.archived
    assert hashlib.sha256(data).hexdigest() == head.removeprefix("sha256:")
    assert (missing.value.errorCode, missing.value.detailCode) == (404, "1060")
    assert (missing_head.value.errorCode, missing_head.value.detailCode) == (404, "1380")


def test_checksum_in_other_algorithms_and_log_through_client(
    store: Store, node: NodeSettings
) -> None:
    pid = put_dataset(store, node, "10.5555/c", "checksums").created[0]
    with serve_app(store, [node]) as served:
        client = client_for(f"{served.origin}/{node.short_name}")
        data = client.get(pid).content
        for spelling in ("SHA-1", "SHA1", "sha1", "MD5", "md5", "SHA-256", "SHA256"):
            checksum = client.getChecksum(pid, spelling)
            name = CHECKSUM_ALGORITHMS[checksum.algorithm]
            assert checksum.value() == hashlib.new(name, data).hexdigest(), spelling
        with pytest.raises(d1_common.types.exceptions.InvalidRequest) as bad:
            client.getChecksum(pid, "CRC32")
        log = client.getLogRecords(fromDate=datetime(2020, 1, 1, tzinfo=UTC), start=0, count=10)
        client.synchronizationFailed(
            d1_common.types.exceptions.SynchronizationFailed(
                "5000", "the CN could not read it", identifier=pid, nodeId="urn:node:CN"
            )
        )
    assert bad.value.detailCode == "1402" and "SHA-256" in bad.value.description
    [entry] = log.logEntry  # the one get above; getChecksum is not a read of the bytes
    assert (log.total, entry.identifier.value(), entry.event) == (1, pid, "read")
    validate_types(log.toxml("utf-8"))
    [failure] = store.sync_failures(node.id)
    assert failure.pid == pid and 'detailCode="5000"' in failure.xml


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_real_sync_then_cn_harvests_and_sees_the_next_sync(tmp_path: Path, store_url: str) -> None:
    """A real sync of a fixture site over HTTP, served and harvested; the site changes
    (a page edited, a page withdrawn), a second sync runs, the next harvest sees exactly that.
    Each Dataset's resource map comes with it, and DataONE's library reads what it aggregates."""
    root = tmp_path / "sites" / "sync-change"
    shutil.copytree(SITES / "sync-change", root)
    servers = start_site("sync-change", tmp_path / "sites")
    try:
        node = quick_node(
            servers[0].url("/sitemap.xml"),
            "urn:node:SYNCSERVE",
            dataone={"sync_metadata_copy": True},
            politeness={"requests_per_second": 200, "concurrency": 1},
            sync={"volatile_properties": ["interactionStatistic"]},
            checks={"profile": "mnlite"},  # most pages have no ISO copy (dataone's requirement)
        )
        config = AdapterConfig(store_url=store_url, nodes=(node,))
        assert run_node(config, node).status == "ok"
        store = Store.open(store_url, create=False)
        with serve_app(store, [node]) as served:
            client = client_for(f"{served.origin}/{node.short_name}")
            first = harvest(client, None, datetime.now(UTC) + timedelta(seconds=1), page=3)
            # 6 Datasets, 1 ISO copy, a resource map per Dataset
            assert len(first) == store.list_objects(node.id, count=0)[0] == 13
            formats = {h.sysmeta.formatId for h in first}
            assert formats == {FORMAT, "http://www.isotc211.org/2005/gmd", RESOURCE_MAP_FORMAT}
            first_maps = packages_of(client, first)
            assert len(first_maps) == 6
            last_harvested = max(h.sysmeta.dateSysMetadataModified for h in first)

            edit(
                root / "sitemap.xml",
                "edited</loc><lastmod>2024-01-01",
                "edited</loc><lastmod>2024-03-01",
            )
            edit(root / "dataset/edited.html", "version one", "version two")
            edit(
                root / "sitemap.xml",
                "withdrawn</loc><lastmod>2024-01-01",
                "withdrawn</loc><lastmod>2024-03-01",
            )
            rules = json.loads((root / "_headers.json").read_text())
            rules["/dataset/withdrawn"] = {"status": 410, "body": "<html><body>Gone</body></html>"}
            rules["/dataset/edited"]["etag"] = '"edited-v2"'  # else a 304 answers
            (root / "_headers.json").write_text(json.dumps(rules))
            summary = run_node(config, node)
            assert (summary.new_versions, summary.archived) == (2, 2), summary.as_dict()

            second = harvest(client, last_harvested + MS, datetime.now(UTC) + timedelta(seconds=1))
            second_maps = packages_of(client, second)
        store.close()
    finally:
        stop(servers)
    old_edited = next(h.pid for h in first if b"version one" in h.data)
    withdrawn = next(h.pid for h in first if b"withdrawn" in h.data.lower())
    map_of = {pid: sid for sid, m in first_maps.items() for pid in m.pids}
    old_edited_map, withdrawn_map = first_maps[map_of[old_edited]], first_maps[map_of[withdrawn]]
    changed = {h.pid: h.sysmeta for h in second}
    new = [pid for pid in changed if pid not in {h.pid for h in first}]
    [new_version] = [pid for pid in new if not pid.startswith("resource_map_")]
    [new_map] = [pid for pid in new if pid.startswith("resource_map_")]
    assert set(changed) == {
        old_edited,
        withdrawn,
        new_version,
        old_edited_map.pid,
        withdrawn_map.pid,
        new_map,
    }
    assert changed[old_edited].obsoletedBy.value() == new_version
    assert changed[new_version].obsoletes.value() == old_edited
    assert bool(changed[withdrawn].archived)
    assert next(h.data for h in second if h.pid == new_version).count(b"version two") >= 1
    # the edited Dataset's map: a new version of its series, of the new head only
    assert changed[new_map].obsoletes.value() == old_edited_map.pid
    assert changed[old_edited_map.pid].obsoletedBy.value() == new_map
    assert second_maps[old_edited_map.series_id].pids == {new_version}
    assert bool(changed[withdrawn_map.pid].archived)  # archived with its Dataset


@dataclass
class ServedMap:
    pid: str
    series_id: str
    pids: frozenset[str]  # what DataONE's library reads as aggregated


def packages_of(client: Any, harvested: list[Harvested]) -> dict[str, ServedMap]:
    """The resource maps among harvested objects, through the client: sysmeta, and the bytes
    read with `d1_common.resource_map`; seriesId -> the map (the heads, not archived)."""
    out = {}
    for h in harvested:
        if h.sysmeta.formatId != RESOURCE_MAP_FORMAT:
            continue
        sysmeta = h.sysmeta
        sid = sysmeta.seriesId.value()
        assert sid.endswith("#resourcemap") and h.pid.startswith("resource_map_sha256:")
        assert sysmeta.mediaType.name == "application/rdf+xml"
        ore = d1_common.resource_map.ResourceMap()
        ore.parseDoc(h.data)
        assert ore.getResourceMapPid() == h.pid
        pids = frozenset(ore.getAggregatedPids())
        for pid in pids:  # every member is served, in the map's own series' Dataset
            member = client.getSystemMetadata(pid)
            assert member.seriesId.value().startswith(sid.removesuffix("#resourcemap"))
        if sysmeta.obsoletedBy is None and not sysmeta.archived:
            assert client.get(sid).content == h.data  # the map's seriesId resolves to it
            out[sid] = ServedMap(h.pid, sid, pids)
        elif sysmeta.archived:
            out.setdefault(sid, ServedMap(h.pid, sid, pids))
    return out


def test_v1_api_through_the_v1_client(store: Store, node: NodeSettings) -> None:
    """v1 answers with v1 types (v1 clients and CN v1 code paths); PIDs only, no SIDs."""
    first = put_dataset(store, node, "10.5555/v1", "one").created[0]
    head = put_dataset(store, node, "10.5555/v1", "two").versions[0]
    with serve_app(store, [node]) as served:
        client = d1_client.mnclient.MemberNodeClient(
            f"{served.origin}/{node.short_name}", timeout_sec=10
        )
        assert client.ping() is True
        capabilities = client.getCapabilities()
        listed = client.listObjects(start=0, count=10)
        sysmeta = client.getSystemMetadata(first)
        log = client.getLogRecords(start=0, count=10)
        data = client.get(head).content
        with pytest.raises(d1_common.types.exceptions.NotFound):
            client.getSystemMetadata("doi:10.5555/v1")
    assert capabilities.identifier.value() == node.id
    # each object at its first change: the first version's obsoletedBy does not move it
    assert [i.identifier.value() for i in listed.objectInfo] == [first, head]
    assert sysmeta.obsoletedBy.value() == head
    assert "v1" in type(sysmeta).__module__ and not hasattr(sysmeta, "seriesId")
    assert log.total == 0
    assert hashlib.sha256(data).hexdigest() == head.removeprefix("sha256:")
