"""The Member Node API over HTTP: waitress on 127.0.0.1, a real SQLite store
written through the ledger, raw requests so every byte of the URL is ours."""

from __future__ import annotations

import hashlib
import json
import logging
import signal
import subprocess
import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import quote
from wsgiref.util import setup_testing_defaults

import pytest
import requests
from lxml import etree
from sqlalchemy import create_engine, select

import adapter.api.read
import adapter.api.syncfailed
from adapter.api.app import MemberNodeApp
from adapter.commands.serving_settings import member_node
from adapter.config.load import PLACEHOLDER_SUBJECTS
from adapter.config.settings import NodeSettings
from adapter.models import SyncRecord
from adapter.store import schema
from adapter.store.accesslog import LogQuery
from adapter.store.db import Store
from adapter.store.listing import Window
from tests.support import SERVE_AS_STARTED, stores
from tests.support.cli import run_in_process
from tests.support.d1schemas import pyxb_parse, validate_error, validate_types
from tests.support.member_node import (
    FORMAT,
    Served,
    archive,
    node_settings,
    put_dataset,
    serve_app,
)
from tests.support.zygote import WarmProcess, adapter_popen


@dataclass
class World:
    store: Store
    url: str  # the store URL (a SQLite file, or a fresh PostgreSQL schema)
    node: NodeSettings
    served: Served
    records: list[SyncRecord]  # every record, ascending as listObjects orders them

    @property
    def base(self) -> str:
        return self.served.base(self.node)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return requests.get(self.base + path, timeout=10, **kwargs)

    def head(self, path: str) -> requests.Response:
        return requests.head(self.base + path, timeout=10)


store_url = stores.store_url  # every test here runs on SQLite and on PostgreSQL


def build_world(url: str) -> Generator[World, None, None]:
    store = Store.open(url)
    node = node_settings()
    for i in range(5):
        put_dataset(store, node, f"10.5555/d{i}", f"Dataset {i}")
    put_dataset(store, node, "10.5555/d1", "Dataset 1, second version")
    put_dataset(store, node, "10.5555/a+b", "plus in the DOI")
    archive(store, node, "https://repo.example/dataset/10.5555/d3")
    records = store.list_changes(Window(node.id), count=100)[1]  # each at its first change
    with serve_app(store, [node]) as served:
        yield World(store, url, node, served, records)
    store.close()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    """One served store per engine for the tests that only read (and POST nothing)."""
    with stores.engine_url(request.param, tmp_path_factory.mktemp("world")) as url:
        yield from build_world(url)


@pytest.fixture
def fresh_world(store_url: str) -> Iterator[World]:
    """A world of its own, for tests that write (sync failures, a concurrent sync)."""
    yield from build_world(store_url)


def xml(response: requests.Response) -> Any:
    assert response.headers["Content-Type"].startswith("text/xml")
    validate_types(response.content)
    return pyxb_parse(response.content)


def error(response: requests.Response, status: int, name: str, detail: str) -> etree._Element:
    assert response.status_code == status, response.text
    validate_error(response.content)
    root = etree.fromstring(response.content)
    assert (root.get("name"), root.get("errorCode"), root.get("detailCode")) == (
        name,
        str(status),
        detail,
    )
    return root


def pids(response: requests.Response) -> list[str]:
    return [info.identifier.value() for info in xml(response).objectInfo]


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


# -- MNCore ----------------------------------------------------------------------------


def test_ping_is_200_with_date_and_no_cache(world: World) -> None:
    response = world.get("/monitor/ping")
    assert response.status_code == 200
    assert "GMT" in response.headers["Date"]
    assert "no-cache" in response.headers["Cache-Control"]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_capabilities_at_node_and_root_and_v1(world: World) -> None:
    node = xml(world.get("/node"))
    assert world.get("/").content == world.get("/node").content
    assert node.baseURL == f"{world.served.origin}/{world.node.short_name}"
    assert node.identifier.value() == world.node.id
    assert node.synchronization.schedule.min == "0/15"
    v1 = requests.get(world.served.base(world.node, "v1") + "/node", timeout=10)
    assert b"http://ns.dataone.org/service/types/v1" in v1.content
    validate_types(v1.content)


def test_configured_base_url_is_used_without_version(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    node = node_settings(
        dataone={
            "contact_subject": "http://orcid.org/0000-0002-1825-0097",
            "base_url": "https://mn.example.org/mn/TESTREPO/v2/",
        }
    )
    with serve_app(store, [node]) as served:
        document = xml(requests.get(served.base(node) + "/node", timeout=10))
    assert document.baseURL == "https://mn.example.org/mn/TESTREPO"


def test_unknown_node_and_version_are_dataone_errors(world: World) -> None:
    error(requests.get(world.served.origin + "/OTHER/v2/node", timeout=10), 404, "NotFound", "0")
    root = error(requests.get(world.served.origin + "/", timeout=10), 404, "NotFound", "0")
    assert root.get("nodeId") is None
    assert f"/{world.node.short_name}/v2" in (root.findtext("description") or "")
    wrong = requests.get(f"{world.served.origin}/{world.node.short_name}/v3/node", timeout=10)
    assert error(wrong, 501, "NotImplemented", "0").get("nodeId") == world.node.id


def test_a_start_past_what_the_schema_holds_is_lowered_to_its_largest(world: World) -> None:
    """An empty page echoes start, an xs:int: 2**31 gave a document that broke D1-XSD (the
    query fuzzing of test_fuzz_params found it on getLogRecords)."""
    for path in ("/object?formatId=none%2Fsuch&start=2147483648", "/log?start=99999999999"):
        page = xml(world.get(path))  # validates against D1-XSD
        assert (page.start, page.count, page.total) == (2**31 - 1, 0, 0)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_log_lists_reads_anonymously_with_filters_and_paging(fresh_world: World) -> None:
    world = fresh_world
    empty = xml(world.get("/log?fromDate=2020-01-01T00:00:00.000+00:00&start=0&count=10"))
    assert (empty.total, empty.count, len(empty.logEntry)) == (0, 0, 0)
    first, second = world.records[0], world.records[2]
    agent = {"User-Agent": "log-test/1.0"}
    for record in (first, second, first):
        assert world.get(f"/object/{record.pid}", headers=agent).status_code == 200
    world.head(f"/object/{second.pid}")  # describe, getSystemMetadata: not reads of bytes
    world.get(f"/meta/{second.pid}")
    log = xml(world.get("/log"))
    assert log.total == 3
    entries = log.logEntry
    assert [e.identifier.value() for e in entries] == [first.pid, second.pid, first.pid]
    assert {(e.event, e.userAgent, e.ipAddress, e.subject.value()) for e in entries} == {
        ("read", "log-test/1.0", "withheld", "withheld")  # subject withheld too
    }
    assert all(e.nodeIdentifier.value() == world.node.id for e in entries)
    moments = [e.dateLogged for e in entries]
    assert moments == sorted(moments)
    prefix = quote(first.pid[:20], safe="")
    assert xml(world.get(f"/log?idFilter={prefix}")).total == 2
    v1 = requests.get(
        f"{world.served.base(world.node, 'v1')}/log?pidFilter={second.pid}", timeout=10
    )
    assert xml(v1).total == 1
    assert xml(world.get("/log?event=read")).total == 3
    assert xml(world.get("/log?event=create")).total == 0
    after = stamp(moments[1])
    assert xml(world.get(f"/log?fromDate={quote(after)}")).total == 2
    assert xml(world.get(f"/log?toDate={quote(after)}")).total == 1
    page = xml(world.get("/log?start=1&count=1"))
    assert (page.start, page.count, page.total) == (1, 1, 3)
    assert page.logEntry[0].entryId == entries[1].entryId
    error(world.get("/log?start=3"), 400, "InvalidRequest", "1480")
    error(world.get("/log?toDate=soon"), 400, "InvalidRequest", "1480")
    error(world.get("/log?count=-5"), 400, "InvalidRequest", "1480")
    error(world.get("/log?event=stolen"), 400, "InvalidRequest", "1480")


def test_log_of_a_node_without_public_read_is_empty_to_anonymous_callers(
    tmp_path: Path,
) -> None:
    store = Store.open(stores.sqlite_url(tmp_path))
    node = node_settings(
        dataone={
            "contact_subject": "http://orcid.org/0000-0002-1825-0097",
            "access_policy": [
                {"subject": "CN=curators,DC=dataone,DC=org", "permissions": ["read"]}
            ],
        }
    )
    pid = put_dataset(store, node, "10.5555/private", "not public").created[0]
    with serve_app(store, [node]) as served:
        # changed with access enforcement: an anonymous get of a restricted object is refused
        refused = requests.get(f"{served.base(node)}/object/{pid}", timeout=10)
        error(refused, 401, "NotAuthorized", "1000")
        log = xml(requests.get(f"{served.base(node)}/log", timeout=10))
    assert log.total == 0
    assert store.access_events(node.id, LogQuery())[0] == 0  # a refused get is no read
    store.close()


# -- listObjects -----------------------------------------------------------------------


def test_count_zero_probe_and_total(world: World) -> None:
    probe = xml(world.get("/object?start=0&count=0"))
    assert (probe.total, probe.count, len(probe.objectInfo)) == (7, 0, 0)
    assert xml(world.get("/object")).total == 7


def test_pages_are_stable_ascending_and_complete(world: World) -> None:
    seen: list[str] = []
    start = 0
    while True:
        page = xml(world.get(f"/object?start={start}&count=3"))
        assert page.total == 7 and page.start == start
        seen += [info.identifier.value() for info in page.objectInfo]
        start += page.count
        if start >= page.total:
            break
    assert seen == [r.pid for r in world.records]
    keys = [(r.date_modified, r.pid) for r in world.records]
    assert keys == sorted(keys)
    error(world.get("/object?start=7&count=3"), 400, "InvalidRequest", "1540")


@pytest.mark.parametrize(
    "form",
    [
        lambda d: stamp(d),  # 2024-...T..:..:..+00:00 with a raw "+"
        lambda d: stamp(d).replace("+", "%2B"),
        lambda d: stamp(d).replace("+00:00", "Z"),
        lambda d: stamp(d).replace("+00:00", ""),
        lambda d: stamp(d).replace("+", "%20"),  # a "+" that became a space
        lambda d: d.astimezone(UTC).isoformat(),  # d1_client: microseconds
    ],
)
def test_from_date_inclusive_to_date_exclusive(world: World, form: Any) -> None:
    second, fifth = world.records[1], world.records[4]
    window = pids(
        world.get(
            f"/object?fromDate={form(second.date_modified)}&toDate={form(fifth.date_modified)}"
        )
    )
    assert window == [r.pid for r in world.records[1:4]]


def test_filters_format_identifier_replica_status_and_node(world: World) -> None:
    assert len(pids(world.get(f"/object?formatId={FORMAT}"))) == 7
    assert pids(world.get("/object?formatId=eml://ecoinformatics.org/eml-2.1.1")) == []
    one = world.records[0].pid
    assert pids(world.get(f"/object?identifier={one}")) == [one]
    series = pids(world.get("/object?identifier=doi:10.5555%2Fd1"))
    assert len(series) == 2
    assert pids(world.get("/object?identifier=doi:10.5555/a+b")) == [
        r.pid for r in world.records if r.series_id == "doi:10.5555/a+b"
    ]
    assert len(pids(world.get("/object?replicaStatus=false"))) == 7
    assert pids(world.get("/object?nodeId=urn:node:OTHER")) == []
    error(world.get("/object?replicaStatus=maybe"), 400, "InvalidRequest", "1540")


def test_count_is_capped(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter.api.read, "MAX_COUNT", 4)
    page = xml(world.get("/object?count=5000"))
    assert (page.count, page.total) == (4, 7)


@pytest.mark.parametrize(
    "query",
    [
        "count=-1",
        "count=abc",
        "start=1.5",
        "fromDate=2024-02-30",
        "toDate=tomorrow",
        "count=1&count=2",
        "fromDate=0001-01-01T00:00:00%2B01:00",
        "toDate=9999-12-31T23:59:59-01:00",
        "start=1000000000000000",
        "formatId=a%00b",
        "nodeId=%0Aurn:node:X",
        "identifier=%FF",
        "fromDate=%E0%80",
    ],
)
def test_bad_parameters_are_invalid_requests(world: World, query: str) -> None:
    error(world.get(f"/object?{query}"), 400, "InvalidRequest", "1540")


# -- get, describe, getSystemMetadata, getChecksum ------------------------------------


def test_get_returns_exact_bytes_with_dataone_headers(world: World) -> None:
    for record in world.records:
        full = world.store.get_record(world.node.id, record.pid, with_bytes=True)
        assert full is not None and full.object_bytes is not None
        response = world.get(f"/object/{record.pid}")
        assert response.status_code == 200
        assert response.content == full.object_bytes
        h = response.headers
        assert h["Content-Type"] == "application/ld+json"
        assert int(h["Content-Length"]) == record.size
        assert h["DataONE-FormatId"] == h["DataONE-ObjectFormat"] == FORMAT
        assert h["DataONE-Checksum"] == f"{record.checksum_algorithm},{record.checksum}"
        assert h["DataONE-SerialVersion"] == str(record.serial_version)
        assert h["DataONE-SeriesId"] == record.series_id
        assert h.get("DataONE-ObsoletedBy") == record.obsoleted_by
        assert h.get("DataONE-Obsoletes") == record.obsoletes
        assert "GMT" in h["Last-Modified"]
        described = world.head(f"/object/{record.pid}")
        assert described.status_code == 200 and described.content == b""
        assert {k: v for k, v in described.headers.items() if k != "Date"} == {
            k: v for k, v in h.items() if k != "Date"
        }


def test_series_id_resolves_to_head_on_v2_only(world: World) -> None:
    [head] = [r for r in world.records if r.series_id == "doi:10.5555/d1" and not r.obsoleted_by]
    for spelling in ("doi:10.5555%2Fd1", "doi%3A10.5555%2Fd1", "doi:10.5555/d1"):
        assert world.head(f"/object/{spelling}").headers["DataONE-Checksum"].endswith(head.checksum)
        meta = xml(world.get(f"/meta/{spelling}"))
        assert meta.identifier.value() == head.pid
        checksum = xml(world.get(f"/checksum/{spelling}"))
        assert (checksum.algorithm, checksum.value()) == (head.checksum_algorithm, head.checksum)
        computed = xml(world.get(f"/checksum/{spelling}?checksumAlgorithm=SHA-256"))
        assert (
            computed.value() == hashlib.sha256(world.get(f"/object/{head.pid}").content).hexdigest()
        )
    assert head.checksum != next(r.checksum for r in world.records if r.obsoleted_by == head.pid)
    [plus] = [r for r in world.records if r.series_id == "doi:10.5555/a+b"]
    assert xml(world.get("/meta/doi:10.5555%2Fa+b")).identifier.value() == plus.pid
    assert xml(world.get("/meta/doi:10.5555%2Fa%2Bb")).identifier.value() == plus.pid
    v1 = world.served.base(world.node, "v1")
    error(requests.get(f"{v1}/meta/doi:10.5555%2Fd1", timeout=10), 404, "NotFound", "1060")
    error(requests.get(f"{v1}/checksum/doi:10.5555%2Fd1", timeout=10), 404, "NotFound", "1420")
    assert requests.head(f"{v1}/object/doi:10.5555%2Fd1", timeout=10).status_code == 404


def test_system_metadata_of_obsoleted_and_archived_objects(world: World) -> None:
    for record in world.records:
        meta = xml(world.get(f"/meta/{record.pid}"))
        assert meta.identifier.value() == record.pid
        assert meta.checksum.value() == record.checksum
        assert (meta.obsoletedBy.value() if meta.obsoletedBy else None) == record.obsoleted_by
        assert bool(meta.archived) == record.archived
    assert sum(r.archived for r in world.records) == 1
    assert sum(r.obsoleted_by is not None for r in world.records) == 1


def test_checksum_stored_and_computed(world: World) -> None:
    record = world.records[0]
    stored = xml(world.get(f"/checksum/{record.pid}"))
    assert (stored.algorithm, stored.value()) == (record.checksum_algorithm, record.checksum)
    data = world.get(f"/object/{record.pid}").content
    for spelling, name in (("sha-256", "sha256"), ("SHA1", "sha1"), ("SHA-512", "sha512")):
        computed = xml(world.get(f"/checksum/{record.pid}?checksumAlgorithm={spelling}"))
        assert computed.value() == hashlib.new(name, data).hexdigest()
    root = error(
        world.get(f"/checksum/{record.pid}?checksumAlgorithm=whirlpool"),
        400,
        "InvalidRequest",
        "1402",
    )
    assert "SHA-256" in (root.findtext("description") or "")


@pytest.mark.parametrize(
    ("path", "detail"),
    [("/object/", "1020"), ("/meta/", "1060"), ("/checksum/", "1420")],
)
def test_unknown_pids_are_not_found_with_the_methods_code(
    world: World, path: str, detail: str
) -> None:
    root = error(world.get(path + "sha256:nothing%2Fhere"), 404, "NotFound", detail)
    assert root.get("identifier") == "sha256:nothing/here"
    assert root.get("nodeId") == world.node.id


def test_head_errors_travel_in_headers(world: World) -> None:
    response = world.head("/object/no+such%2Fpid")
    assert response.status_code == 404 and response.content == b""
    h = response.headers
    assert h["DataONE-Exception-Name"] == "NotFound"
    assert (h["DataONE-Exception-ErrorCode"], h["DataONE-Exception-DetailCode"]) == ("404", "1380")
    assert h["DataONE-Exception-Identifier"] == "no+such/pid"
    assert h["DataONE-Exception-NodeId"] == world.node.id
    assert h["DataONE-Exception-Description"]


# -- what the node does not offer ----------------------------------------------------


@pytest.mark.parametrize(
    ("verb", "path", "detail"),
    [
        ("POST", "/object", "1101"),
        ("PUT", "/object/x", "1201"),
        ("DELETE", "/object/x", "2904"),
        ("PUT", "/archive/x", "2914"),
        ("POST", "/generate", "2194"),
        ("PUT", "/meta", "4866"),
        ("POST", "/dirtySystemMetadata", "1330"),
        ("GET", "/isAuthorized/x?action=read", "1780"),
        ("POST", "/replicate", "2150"),
        ("GET", "/query/solr", "0"),
        ("GET", "/no/such/thing", "0"),
        ("POST", "/node", "0"),
        ("DELETE", "/log", "0"),
    ],
)
def test_everything_else_is_not_implemented(
    world: World, verb: str, path: str, detail: str
) -> None:
    response = requests.request(verb, world.base + path, timeout=10)
    error(response, 501, "NotImplemented", detail)


# -- synchronizationFailed -------------------------------------------------------------

FAILURE = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<error name="SynchronizationFailed" errorCode="0" detailCode="5000" '
    b'identifier="sha256:abc" nodeId="urn:node:CN"><description>Checksum mismatch'
    b"</description></error>"
)


def multipart(parts: list[tuple[str, bytes]], boundary: str = "d1-boundary") -> bytes:
    out = b""
    for name, body in parts:
        out += (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                f'filename="{name}.xml"\r\nContent-Type: text/xml\r\n\r\n'
            ).encode()
            + body
            + b"\r\n"
        )
    return out + f"--{boundary}--\r\n".encode()


def failure_naming(pid: str, description: str = "Checksum mismatch") -> bytes:
    return FAILURE.replace(b"sha256:abc", pid.encode()).replace(
        b"Checksum mismatch", description.encode()
    )


def post_failure(world: World, body: bytes) -> requests.Response:
    return requests.post(
        world.base + "/error",
        data=multipart([("other", b"x"), ("message", body)]),
        headers={"Content-Type": "multipart/mixed; boundary=d1-boundary"},
        timeout=10,
    )


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_synchronization_failed_is_recorded_and_logged(
    fresh_world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="adapter.api.syncfailed")
    pid = fresh_world.records[0].pid
    response = post_failure(fresh_world, failure_naming(pid))
    assert (response.status_code, response.text) == (200, "OK")
    [failure] = fresh_world.store.sync_failures(fresh_world.node.id)
    assert failure.pid == pid and failure.xml == failure_naming(pid).decode()
    assert any(pid in r.getMessage() and "5000" in r.getMessage() for r in caplog.records)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_synchronization_failed_keeps_at_most_the_daily_caps(fresh_world: World) -> None:
    """Per object, and for reports naming no object of this node (a made-up PID included)."""
    caps = adapter.api.syncfailed.CAPS
    pid = fresh_world.records[0].pid
    sid = "doi:10.5555/d1"
    for i in range(caps.per_object_per_day + 3):
        assert post_failure(fresh_world, failure_naming(pid, f"report {i}")).status_code == 200
        assert post_failure(fresh_world, failure_naming(sid, f"by sid {i}")).status_code == 200
    for i in range(caps.unnamed_per_day + 3):
        made_up = failure_naming(f"sha256:made-up-{i}")
        assert post_failure(fresh_world, made_up).status_code == 200
        assert post_failure(fresh_world, b"no identifier at all").status_code == 200
    kept = fresh_world.store.sync_failures(fresh_world.node.id, limit=1000)
    by_pid: dict[str | None, int] = {}
    for failure in kept:
        by_pid[failure.pid] = by_pid.get(failure.pid, 0) + 1
    assert by_pid == {
        pid: caps.per_object_per_day,
        sid: caps.per_object_per_day,
        None: caps.unnamed_per_day,
    }
    kept_texts = {f.xml for f in kept if f.pid == pid}
    assert kept_texts == {
        failure_naming(pid, f"report {i}").decode() for i in range(caps.per_object_per_day)
    }


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_anonymous_reports_do_not_grow_the_store(tmp_path: Path) -> None:
    """100 anonymous reports of 60 KB (6 MB, five times the daily cap of them) grow the SQLite
    store (file and WAL) by < 2 MB."""
    url = stores.sqlite_url(tmp_path)
    worlds = build_world(url)
    world = next(worlds)
    db = Path(url.removeprefix("sqlite:///"))

    def size() -> int:
        return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))

    before = size()
    filler = "x" * (60 * 1024)
    try:
        for i in range(100):
            body = failure_naming(f"sha256:anon-{i}", filler)
            assert len(body) > 60 * 1024
            assert post_failure(world, body).status_code == 200
        grown = size() - before
        assert grown < 2 * 1024 * 1024, grown
        kept = world.store.sync_failures(world.node.id, limit=1000)
        cap = adapter.api.syncfailed.CAPS
        assert len(kept) == cap.unnamed_per_day
        assert all(len(f.xml) <= cap.max_chars for f in kept)
    finally:
        worlds.close()


def test_old_reports_are_deleted_when_new_ones_arrive(tmp_path: Path) -> None:
    store = Store.open(stores.sqlite_url(tmp_path))
    caps = adapter.api.syncfailed.CAPS
    old = datetime(2020, 1, 1, tzinfo=UTC)
    assert store.keep_sync_failure("urn:node:X", None, "old", caps, now=old) is not None
    later = old + timedelta(days=caps.keep_days + 1)
    assert store.keep_sync_failure("urn:node:X", None, "new", caps, now=later) is not None
    assert [f.xml for f in store.sync_failures("urn:node:X")] == ["new"]
    store.close()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/mixed; boundary=d1-boundary", multipart([("message", b"<not xml")])),
        ("multipart/mixed; boundary=nothing", b"garbage"),
        ("text/xml", FAILURE),
        ("", b""),
        ("text/xml", b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><error>&e;</error>'),
        ("application/octet-stream", b"\x00\x01\xff binary, NUL included"),
    ],
)
def test_synchronization_failed_always_answers_200(
    fresh_world: World, content_type: str, body: bytes
) -> None:
    response = requests.post(
        fresh_world.base + "/error", data=body, headers={"Content-Type": content_type}, timeout=10
    )
    assert response.status_code == 200
    [failure] = fresh_world.store.sync_failures(fresh_world.node.id)
    assert "root:" not in failure.xml  # no entity was expanded


# -- the store is only read ------------------------------------------------------------


def dump(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table but the sync-failure and access logs, in a stable order."""
    out = {}
    with store.read() as conn:
        for table in schema.metadata.sorted_tables:
            if table.name not in ("sync_failures", "access_log"):
                rows = conn.execute(select(table)).all()
                out[table.name] = sorted((tuple(row) for row in rows), key=repr)
    return out


def test_reading_writes_nothing(world: World) -> None:
    before = dump(world.store)
    for path in ("/node", "/monitor/ping", "/object", "/log", "/object?count=0"):
        assert world.get(path).status_code == 200
    for record in world.records:
        for prefix in ("/object/", "/meta/", "/checksum/"):
            assert world.get(prefix + record.pid).status_code == 200
        world.head("/object/" + record.pid)
    assert dump(world.store) == before


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_reads_while_a_sync_writes(fresh_world: World) -> None:
    """Pages stay valid and totals only grow while another thread adds versions."""
    stop = threading.Event()
    written: list[str] = []

    def writer() -> None:
        i = 0
        while not stop.is_set() and i < 40:
            applied = put_dataset(
                fresh_world.store, fresh_world.node, "10.5555/busy", f"version {i}"
            )
            written.extend(applied.created + applied.versions)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    totals = []
    try:
        for _ in range(20):
            page = xml(fresh_world.get("/object?count=5&start=0"))
            totals.append(page.total)
            assert fresh_world.get("/monitor/ping").status_code == 200
    finally:
        stop.set()
        thread.join()
    assert totals == sorted(totals)
    assert xml(fresh_world.get("/object?count=0")).total == 7 + len(written)


# -- the raw path ----------------------------------------------------------------------


def call_app(app: MemberNodeApp, environ: dict[str, Any]) -> tuple[str, bytes]:
    status: list[str] = []
    body = b"".join(app(environ, lambda s, h: status.append(s)))
    return status[0], body


def test_raw_request_uri_wins_over_decoded_path_info(world: World) -> None:
    app = MemberNodeApp(world.store, [member_node(world.node, "http://127.0.0.1:9")])
    base = f"/{world.node.short_name}/v2"
    environ: dict[str, Any] = {"wsgi.input": BytesIO()}
    setup_testing_defaults(environ)
    environ.update(
        PATH_INFO=f"{base}/meta/doi:10.5555/d1",  # what a server decoded
        REQUEST_URI=f"{base}/meta/doi:10.5555%2Fd1",
    )
    status, body = call_app(app, environ)
    assert status.startswith("200") and b"<seriesId>doi:10.5555/d1</seriesId>" in body
    # without a raw URI, PATH_INFO is taken as already decoded (no second decoding)
    del environ["REQUEST_URI"]
    environ["PATH_INFO"] = f"{base}/meta/doi:10.5555/a+b"
    status, body = call_app(app, environ)
    assert status.startswith("200") and b"<seriesId>doi:10.5555/a+b</seriesId>" in body
    environ["PATH_INFO"] = f"{base}/meta/doi:10.5555%2Fd1"
    status, _ = call_app(app, environ)
    assert status.startswith("404")


# -- adapter serve -----------------------------------------------------------------------


def start_serve(*args: str, nodes: int = 1) -> tuple[WarmProcess, dict[str, str]]:
    """`adapter serve ... --port 0` (a real process, forked with its imports done:
    tests/support/zygote.py); the node -> base URL lines it prints once listening."""
    process = adapter_popen(
        "serve",
        "--port",
        "0",
        *SERVE_AS_STARTED,
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    bases: dict[str, str] = {}
    for line in process.stdout:
        node_id, _, url = line.strip().partition(": ")
        bases[node_id] = url
        if len(bases) == nodes:
            break
    return process, bases


def stop_serve(process: WarmProcess | subprocess.Popen[str], timeout: float = 10) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=timeout)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_adapter_serve_from_a_store_url(world: World) -> None:
    process, bases = start_serve(
        "--store", world.url, "--node-id", world.node.id, "--log-format", "json"
    )
    try:
        base = bases[world.node.id]
        assert base.endswith(f"/{world.node.short_name}/v2")
        assert requests.get(base + "/monitor/ping", timeout=10).status_code == 200
        listed = xml(requests.get(base + "/object?count=0", timeout=10))
        assert listed.total == len(world.records)
        node = xml(requests.get(base + "/node", timeout=10))
        assert node.baseURL == base.removesuffix("/v2")  # where it listens, nothing else
        spoofed = requests.get(base + "/node", headers={"Host": "evil.example:666"}, timeout=10)
        assert xml(spoofed).baseURL == node.baseURL
        assert node.contactSubject[0].value() == PLACEHOLDER_SUBJECTS["contact_subject"]
    finally:
        assert stop_serve(process) == 0
    assert process.stderr is not None
    stderr = list(process.stderr)
    [warning] = [line for line in stderr if "placeholder" in line]
    assert "submitter, rights_holder, contact_subject" in warning and world.node.id in warning
    lines = [json.loads(line) for line in stderr if line.startswith("{")]
    requests_logged = [line for line in lines if line.get("event") == "request"]
    assert [r["status"] for r in requests_logged][:3] == [200, 200, 200]
    assert requests_logged[0]["message"].startswith("GET /")
    assert requests_logged[0]["message"].endswith("/monitor/ping")
    process, bases = start_serve(
        "--store",
        world.url,
        "--public-url",
        "https://mn.example.org/d1/",
        "--contact-subject",
        "CN=Jane Operator,DC=dataone,DC=org",
    )
    try:
        node = xml(requests.get(bases[world.node.id] + "/node", timeout=10))
        assert node.baseURL == f"https://mn.example.org/d1/{world.node.short_name}"
        assert node.contactSubject[0].value() == "CN=Jane Operator,DC=dataone,DC=org"
    finally:
        assert stop_serve(process) == 0
    assert process.stderr is not None
    [warning] = [line for line in process.stderr if "placeholder" in line]
    assert "submitter, rights_holder are placeholder" in warning


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
# the file's settings in the Node document: nothing here differs by engine (serving from a
# PostgreSQL store: test_adapter_serve_from_a_store_url)
@pytest.mark.parametrize("world", ["sqlite"], indirect=True)
def test_adapter_serve_from_a_configuration_file(world: World, tmp_path: Path) -> None:
    config = tmp_path / "nodes.yaml"
    config.write_text(
        f"""store_url: "{world.url}"
nodes:
  - id: {world.node.id}
    name: Test repository
    description: A repository of test datasets
    start:
      sitemap_urls: ["https://repo.example/sitemap.xml"]
    schedule:
      cron: "30 */6 * * *"
    dataone:
      submitter: "http://orcid.org/0000-0002-1825-0097"
      rights_holder: "http://orcid.org/0000-0002-1825-0097"
      contact_subject: "http://orcid.org/0000-0002-1825-0097"
  - id: urn:node:SECOND
    name: Second repository
    start:
      sitemap_urls: ["https://second.example/sitemap.xml"]
    schedule:
      cron: "15 3 * * 1"
      timezone: Asia/Kolkata
    dataone:
      harvest_delay_minutes: 30
      submitter: "http://orcid.org/0000-0002-1825-0097"
      rights_holder: "http://orcid.org/0000-0002-1825-0097"
      contact_subject: "http://orcid.org/0000-0002-1825-0097"
""",
        "utf-8",
    )
    process, bases = start_serve("--config", str(config), nodes=2)
    try:
        node = xml(requests.get(bases[world.node.id] + "/node", timeout=10))
        assert (node.name, node.description) == ("Test repository", "A repository of test datasets")
        schedule = node.synchronization.schedule
        assert (schedule.min, schedule.hour, schedule.wday) == ("30", "0/6", "?")
        second = xml(requests.get(bases["urn:node:SECOND"] + "/object", timeout=10))
        assert second.total == 0  # one store, each node sees only its own records
        # Monday 03:15 in India (+05:30) is Sunday 21:45 UTC; published 30 minutes later
        harvest = xml(requests.get(bases["urn:node:SECOND"] + "/node", timeout=10))
        quartz = harvest.synchronization.schedule
        assert (quartz.min, quartz.hour, quartz.mday, quartz.wday) == ("15", "22", "?", "1")
    finally:
        assert stop_serve(process) == 0


def test_adapter_serve_refuses_a_store_it_would_have_to_create(tmp_path: Path) -> None:
    # the command's contract (exit code, message, no file), in the test process: it stops
    # before it listens
    result = run_in_process(
        ["serve", "--store", f"sqlite:///{tmp_path / 'no.db'}", "--node-id", "urn:node:X",
         "--port", "0"],
        tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert "adapter db upgrade" in result.stderr
    assert not (tmp_path / "no.db").exists()  # serving never creates a store


def test_v1_documents_are_v1_types(world: World) -> None:
    v1 = world.served.base(world.node, "v1")
    for record in world.records:
        meta = requests.get(f"{v1}/meta/{record.pid}", timeout=10)
        assert b'xmlns:d1="http://ns.dataone.org/service/types/v1"' in meta.content
        assert b"seriesId" not in meta.content
        assert xml(meta).identifier.value() == record.pid
    log = requests.get(f"{v1}/log", timeout=10)
    assert b"http://ns.dataone.org/service/types/v1" in log.content
    assert xml(log).total == world.store.access_events(world.node.id, LogQuery())[0]


def test_a_store_that_cannot_be_read_is_a_service_failure(tmp_path: Path) -> None:
    """A database without the adapter's tables (or one gone away) answers ServiceFailure
    with each method's code, and ping says the node is down."""
    broken = Store(create_engine(f"sqlite:///{tmp_path / 'empty.db'}"), "sqlite:///empty.db")
    node = node_settings()
    with serve_app(broken, [node]) as served:
        base = served.base(node)
        error(requests.get(base + "/monitor/ping", timeout=10), 500, "ServiceFailure", "2042")
        error(requests.get(base + "/object", timeout=10), 500, "ServiceFailure", "1580")
        error(requests.get(base + "/meta/x", timeout=10), 500, "ServiceFailure", "1090")
        root = error(requests.get(base + "/object/x", timeout=10), 500, "ServiceFailure", "1030")
        assert "empty.db" not in etree.tostring(root).decode()  # no internals leak
        response = requests.post(base + "/error", data=b"x", timeout=10)
        assert response.status_code == 200  # like GMN, whatever happens
        xml(requests.get(base + "/node", timeout=10))  # needs no store
