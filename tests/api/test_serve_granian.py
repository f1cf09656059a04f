"""`adapter serve` under granian: forked workers answer exactly as waitress does.

The same store is served by the in-process waitress server of the other API
tests and by `adapter serve` on a fixed port, which runs granian (installed by the
`test` extra) with a worker per core and says so; every read method
must give the same status, body and DataONE headers for every record (odd
identifiers included), and the reads granian served must reach the access log.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from adapter.commands.serving_choice import cores
from adapter.store.accesslog import LogQuery
from tests.api.test_server import World, world  # noqa: F401  (the module's fixture)
from tests.support import SERVE_AS_STARTED, free_port
from tests.support.cli import run_in_process
from tests.support.zygote import WarmProcess, adapter_popen

pytestmark = pytest.mark.slow  # over 1 s (tests/support/timing.py)

HEADERS = (
    "Content-Type",
    "Content-Length",
    "Last-Modified",
    "DataONE-Checksum",
    "DataONE-SeriesId",
)


def _start(served: World, port: int) -> tuple[WarmProcess, str]:
    process = adapter_popen(
        "serve",
        *SERVE_AS_STARTED,
        "--store",
        served.url,
        "--node-id",
        served.node.id,
        "--port",
        str(port),  # a fixed port and granian installed: granian, a worker per core
        "--threads",
        "2",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    base = process.stdout.readline().strip().partition(": ")[2]
    deadline = time.monotonic() + 30
    while True:
        try:
            requests.get(base + "/monitor/ping", timeout=2)
            return process, base
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError("granian did not answer within 30 s") from None
            time.sleep(0.1)


def _same(a: requests.Response, b: requests.Response, what: str) -> None:
    assert (a.status_code, a.content) == (b.status_code, b.content), what
    for name in HEADERS:
        assert a.headers.get(name) == b.headers.get(name), (what, name)


def test_granian_workers_answer_as_waitress_does(world: World) -> None:  # noqa: F811
    began = datetime.now(UTC)
    process, base = _start(world, free_port())
    agent = {"User-Agent": f"granian-parity-{time.time_ns()}"}
    answers: dict[str, requests.Response] = {}
    try:
        assert base.endswith(f"/{world.node.short_name}/v2")
        for record in world.records:
            pid = quote(record.pid, safe="")
            for path in (f"/meta/{pid}", f"/object/{pid}", f"/checksum/{pid}"):
                answers[path] = requests.get(base + path, headers=agent, timeout=10)
            answers["HEAD " + pid] = requests.head(f"{base}/object/{pid}", timeout=10)
        for path in ("/object?count=2&start=1", "/object?count=0", "/meta/no-such-pid"):
            answers[path] = requests.get(base + path, timeout=10)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert process.stderr is not None
    assert f"with granian, {cores()} worker(s) of 2 threads" in process.stderr.read()
    for what, theirs in answers.items():
        if what.startswith("HEAD "):
            quoted = what.removeprefix("HEAD ")
            _same(theirs, requests.head(f"{world.base}/object/{quoted}", timeout=10), what)
        else:
            _same(theirs, world.get(what), what)
    # the workers flushed their reads (get) to the access log when they stopped
    _, events = world.store.access_events(world.node.id, LogQuery(from_date=began), count=1000)
    logged = [e for e in events if e.user_agent == agent["User-Agent"]]
    assert sorted(e.pid for e in logged) == sorted(r.pid for r in world.records)


# the command's contract (exit 2, one line), in the test process: it stops before granian
# starts (--nice 0 --no-idle: the test process keeps its priority); the port, not the engine
@pytest.mark.parametrize("world", ["sqlite"], indirect=True)
def test_granian_needs_a_fixed_free_port(world: World, tmp_path: Path) -> None:  # noqa: F811
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for given in ("0", str(port)):
            result = run_in_process(
                ["serve", *SERVE_AS_STARTED, "--store", world.url,
                 "--port", given, "--node-id", world.node.id, "--server", "granian"],
                tmp_path,
            )  # fmt: skip
            assert result.returncode == 2, result.stderr
            assert ("fixed --port" if given == "0" else "cannot listen") in result.stderr
