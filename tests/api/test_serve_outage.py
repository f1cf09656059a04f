"""`adapter serve` through a PostgreSQL outage: ServiceFailure while it is down, no failure after.

The database (a private cluster: tests/support/pgcluster.py) is stopped under a running
server whose every thread has a connection open, then started again. While it is down the
API answers ServiceFailure and /readyz is not ready; once it is back, every request, from
several clients at once, succeeds, and /readyz is ready: no thread answers one more failure
on the connection the restart ended. Under waitress and under granian (two workers).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from lxml import etree

from adapter.store.db import Store
from tests.support import SERVE_AS_STARTED, free_port
from tests.support.member_node import node_settings, put_dataset
from tests.support.pgcluster import Cluster
from tests.support.pgcluster import outage_cluster as outage_cluster
from tests.support.pgcluster import outage_store_url as outage_store_url
from tests.support.zygote import adapter_popen

pytestmark = [pytest.mark.postgres, pytest.mark.slow]  # two outages, about 15 s each

NODE = node_settings()
CLIENTS = 12  # more clients than the server has threads, each on its own keep-alive connection
SERVERS = {
    "waitress": ("--server", "waitress", "--threads", "4"),
    "granian": ("--server", "granian", "--workers", "2", "--threads", "2"),
}


def _start(url: str, options: tuple[str, ...], log: Path) -> Iterator[tuple[str, str]]:
    """`adapter serve` on the store: (the node's base URL, the server's origin). Its log goes
    to a file: unread, a pipe would fill with the outage's errors and stop the server."""
    port = free_port()
    with log.open("w") as sink:
        process = adapter_popen(  # forked with its imports done (tests/support/zygote.py)
            *("serve", *SERVE_AS_STARTED),
            *("--port", str(port), "--store", url, "--node-id", NODE.id, *options),
            stdout=sink,
            stderr=sink,
        )
    origin = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{origin}/healthz", timeout=2)
            break
        except requests.ConnectionError:
            assert process.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)
    try:
        yield f"{origin}/{NODE.short_name}/v2", origin
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0


@pytest.fixture(params=list(SERVERS))
def served(
    request: pytest.FixtureRequest, outage_store_url: str, tmp_path: Path
) -> Iterator[tuple[str, str]]:
    store = Store.open(outage_store_url)
    try:
        for i in range(3):
            put_dataset(store, NODE, f"10.5555/o{i}", f"Dataset {i}")
    finally:
        store.close()
    yield from _start(outage_store_url, SERVERS[request.param], tmp_path / "serve.log")


def _paths(base: str) -> list[str]:
    """Reads of each kind: by PID (sysmeta, bytes, checksum), a page of the list, a ping."""
    listed = requests.get(f"{base}/object?count=10", timeout=10)
    assert listed.status_code == 200, listed.text
    pids = [
        quote(p, safe="") for p in etree.fromstring(listed.content).xpath("//identifier/text()")
    ]
    assert len(pids) == 3
    kinds = [f"/meta/{pids[0]}", f"/object/{pids[1]}", f"/checksum/{pids[2]}", "/object?count=2"]
    return [base + path for path in kinds]


def _from_every_client(paths: list[str], rounds: int) -> list[tuple[int, bytes]]:
    """Each path `rounds` times from each of CLIENTS keep-alive sessions at once."""

    def client(_: int) -> list[tuple[int, bytes]]:
        with requests.Session() as session:
            out = []
            for _round in range(rounds):
                for path in paths:
                    response = session.get(path, timeout=30)
                    out.append((response.status_code, response.content))
            return out

    with ThreadPoolExecutor(CLIENTS) as pool:
        return [answer for answers in pool.map(client, range(CLIENTS)) for answer in answers]


def _failure_name(body: bytes) -> str | None:
    name = etree.fromstring(body).get("name")
    return None if name is None else str(name)


def test_no_request_fails_once_the_database_is_back(
    served: tuple[str, str], outage_cluster: Cluster
) -> None:
    base, origin = served
    paths = _paths(base)
    before = _from_every_client(paths, rounds=3)  # every server thread opens its connections
    assert {status for status, _ in before} == {200}
    assert requests.get(f"{origin}/readyz", timeout=10).status_code == 200
    outage_cluster.stop()
    try:  # one request only: the threads that answer none keep the connection the stop ended
        down = requests.get(paths[0], timeout=30)
        assert (down.status_code, _failure_name(down.content)) == (500, "ServiceFailure")
        ready = requests.get(f"{origin}/readyz", timeout=30)
        assert ready.status_code == 503 and "store unreachable" in ready.text
    finally:
        outage_cluster.start()
    assert requests.get(f"{origin}/readyz", timeout=30).status_code == 200
    after = _from_every_client(paths, rounds=3)
    failed = [(status, body[:200]) for status, body in after if status != 200]
    assert failed == []
    assert requests.get(f"{origin}/readyz", timeout=10).status_code == 200
