"""Hostile requests to the Member Node API (`adapter serve`): every parameter is validated,
nothing outside the store is exposed, and no request gets a 500 or a traceback."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from subprocess import PIPE, STDOUT

import pytest
import requests

from tests.support import SERVE_AS_STARTED, free_port
from tests.support.fixture_server import SiteServer
from tests.support.hostile import NODE_ID, argv_for, node_config, start_corpus, stop
from tests.support.zygote import adapter_popen

SHORT = NODE_ID.removeprefix("urn:node:")
READY_WITHIN = 120.0  # seconds for the serve process to answer ping (a loaded machine is slow)
pytestmark = pytest.mark.slow  # a real sync, then a real serve process


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("adapter.commands.serve")
    work = tmp_path_factory.mktemp("serve")
    db = work / "store.db"
    servers: list[SiteServer] = start_corpus()
    try:
        url = servers[0].url("/good/sitemap.xml")
        config = node_config(work / "node.yaml", url, db, {})
        # real processes, forked with their imports done (tests/support/zygote.py)
        sync = adapter_popen(*argv_for("sync", url, config)[1:], stdout=PIPE, stderr=STDOUT)
        out, _ = sync.communicate(timeout=120)
        assert sync.returncode == 0, out
    finally:
        stop(servers)
    port = free_port()
    proc = adapter_popen(
        "serve",
        *SERVE_AS_STARTED,
        "--store",
        f"sqlite:///{db}",
        "--node-id",
        NODE_ID,
        "--port",
        str(port),
        stdout=PIPE,
        stderr=STDOUT,
    )
    base = f"http://127.0.0.1:{port}/{SHORT}/v2"
    deadline = time.monotonic() + READY_WITHIN
    while proc.poll() is None and time.monotonic() < deadline:  # not 10 s: under load the
        try:  # process took longer to start, and every test then failed on a refused port
            if requests.get(f"{base}/monitor/ping", timeout=1).status_code == 200:
                break
        except requests.ConnectionError:
            time.sleep(0.05)
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)


HOSTILE_PATHS = [
    "/object/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/object/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/object/../../../../etc/passwd",
    "/meta/..%2F..%2Fstore.db",
    "/object/%00",
    "/meta/%ff%fe",
    "/checksum/x?checksumAlgorithm=../../etc/passwd",
    "/object?count=-1",
    "/object?count=99999999999999999999",
    "/object?start=-5",
    "/object?start=abc",
    "/object?fromDate=yesterday",
    "/object?fromDate=9999-99-99T99:99:99",
    "/object?formatId=%27%20OR%201%3D1%20--",
    "/object?identifier=%27%3B%20DROP%20TABLE%20records%3B%20--",
    "/object?" + "&".join(f"p{i}=x" for i in range(2000)),
    "/log?count=-3",
    "/object/" + "a" * 5000,
    "/../../../etc/passwd",
    "/replica/x",
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_hostile_request_gets_a_dataone_error_or_an_answer(api: str, path: str) -> None:
    resp = requests.get(api + path, timeout=10)
    body = resp.text
    assert resp.status_code != 500, body[:500]
    assert "Traceback" not in body and "root:x:0:0" not in body
    assert "SQLite" not in body and "sqlalchemy" not in body.lower()
    if resp.status_code >= 400:
        assert "<error" in body or resp.status_code in (400, 414, 431), body[:300]


def test_hostile_head_and_post(api: str) -> None:
    head = requests.head(api + "/object/..%2F..%2Fetc%2Fpasswd", timeout=10)
    assert head.status_code == 404
    assert any(k.lower().startswith("dataone-exception") for k in head.headers)
    post = requests.post(api + "/error", data=b"<not-xml" * 1000, timeout=10)
    assert post.status_code != 500 and "Traceback" not in post.text


XXE_REPORT = """<?xml version="1.0"?>
<!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd">
 <!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]>
<d1:synchronizationFailed xmlns:d1="http://ns.dataone.org/service/types/v1"
  name="SynchronizationFailed" errorCode="500" detailCode="6001" pid="&secret;&f;">
  <description>&secret;&f;</description></d1:synchronizationFailed>"""


def test_error_reports_with_entities_expand_nothing(api: str) -> None:
    resp = requests.post(
        api + "/error", files={"message": ("error.xml", XXE_REPORT, "text/xml")}, timeout=10
    )
    assert resp.status_code != 500 and "Traceback" not in resp.text
    assert "root:x:0:0" not in resp.text and "aaaaaaaaaaaaaaaaaaaa" not in resp.text


def test_the_store_is_still_served_after_all_that(api: str) -> None:
    listed = requests.get(api + "/object", timeout=10)
    assert listed.status_code == 200
    assert listed.text.count("<objectInfo>") == 4  # 2 Datasets and their maps, nothing dropped


def test_no_file_outside_the_store_is_reachable(api: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do-not-serve")
    quoted = str(secret).replace("/", "%2F")
    for path in (f"/object/{quoted}", f"/object/..%2F..{quoted}", f"/meta/{quoted}"):
        resp = requests.get(api + path, timeout=10)
        assert resp.status_code == 404 and "do-not-serve" not in resp.text
