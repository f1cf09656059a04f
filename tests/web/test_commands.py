"""`adapter web` and `adapter serve` run the check page as a user starts them."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests

from adapter.store.db import Store
from tests.support import SERVE_AS_STARTED, stores
from tests.support.cli import run_in_process
from tests.support.member_node import node_settings, put_dataset
from tests.support.zygote import WarmProcess, adapter_popen
from tests.web.conftest import origins

ROOT = Path(__file__).resolve().parents[2]


def start(*args: str) -> tuple[WarmProcess, str]:
    """The command with `--port 0` (a real process, forked with its imports done:
    tests/support/zygote.py), and the first URL it prints once listening."""
    process = adapter_popen(*args, "--port", "0", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    line = process.stdout.readline()
    return process, line.strip().rpartition(" ")[2]


def stop(process: WarmProcess) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=10)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_adapter_web_checks_a_trusted_origin(sites: Any, tmp_path: Path) -> None:
    site = sites("sp-good")
    trust = [arg for o in origins(site) for arg in ("--trust", o)]
    process, url = start("web", *trust, "--rate-file", str(tmp_path / "rate.db"))
    try:
        assert url.endswith("/check"), url
        # mnlite: the page's metadata copy is EML, not the ISO one dataone asks for
        params = {"url": site[0].url("/dataset/7"), "profile": "mnlite"}
        got = requests.get(url, params=params, timeout=60)
        assert got.status_code == 200
        assert ">HARVESTABLE<" in got.text
    finally:
        assert stop(process) == 0


def test_adapter_web_refuses_a_trust_that_is_not_a_url(tmp_path: Path) -> None:
    done = run_in_process(["web", "--trust", "repo.example"], tmp_path)
    assert done.returncode == 2
    assert "'repo.example' is not an http(s) URL" in done.stderr


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_adapter_serve_has_the_check_page_beside_the_api(tmp_path: Path) -> None:
    url = stores.sqlite_url(tmp_path)
    store = Store.open(url)
    node = node_settings()
    put_dataset(store, node, "10.5555/w1", "Dataset w1")
    store.close()
    process, base = start("serve", *SERVE_AS_STARTED, "--store", url, "--node-id", node.id)
    origin = base.removesuffix(f"/{node.short_name}/v2")
    try:
        assert requests.get(base + "/monitor/ping", timeout=10).status_code == 200
        form = requests.get(origin + "/check", timeout=10)
        assert form.status_code == 200 and 'name="url"' in form.text
        assert "Content-Security-Policy" in form.headers
        assert requests.get(origin + "/", timeout=10).status_code == 404  # the API's own
        assert requests.get(origin + "/ops", timeout=10).status_code == 404  # not without --ops
    finally:
        assert stop(process) == 0
    process, base = start("serve", *SERVE_AS_STARTED, "--store", url, "--node-id", node.id, "--ops")
    origin = base.removesuffix(f"/{node.short_name}/v2")
    try:
        ops = requests.get(origin + "/ops", timeout=10)
        assert ops.status_code == 200 and node.id in ops.text
        queue = requests.get(origin + "/ops/queue", params={"node": node.id}, timeout=10)
        assert "doi:10.5555/w1" in queue.text
    finally:
        assert stop(process) == 0
    assert process.stderr is not None
    assert f"Operator view: {origin}/ops (loopback callers only" in process.stderr.read()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_adapter_web_with_a_store_serves_the_operator_view(tmp_path: Path) -> None:
    url = stores.sqlite_url(tmp_path)
    store = Store.open(url)
    node = node_settings()
    put_dataset(store, node, "10.5555/w2", "Dataset w2")
    store.close()
    process, check = start("web", "--rate-file", str(tmp_path / "rate.db"))
    try:  # not asked for: not served
        assert requests.get(check.removesuffix("/check") + "/ops", timeout=10).status_code == 404
    finally:
        assert stop(process) == 0
    rate = str(tmp_path / "rate.db")
    process, check = start("web", "--store", url, "--ops", "--rate-file", rate)
    try:
        assert process.stdout is not None
        said = process.stdout.readline()  # where /ops is, and to whom
        assert said.startswith("Operator view: http://127.0.0.1:") and "loopback" in said
        ops = requests.get(check.removesuffix("/check") + "/ops", timeout=10)
        assert ops.status_code == 200  # a loopback caller
        assert node.id in ops.text and "1 pending" in ops.text
    finally:
        assert stop(process) == 0


def test_adapter_web_refuses_a_store_file_that_is_not_there(tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path}/none.db"
    done = run_in_process(["web", "--ops", "--store", missing], tmp_path)
    assert done.returncode == 2
    assert "no store file" in done.stderr
    assert not (tmp_path / "none.db").exists()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_adapter_web_with_a_config_not_synced_yet_serves_the_check_page(tmp_path: Path) -> None:
    config = tmp_path / "node.yaml"
    config.write_text(
        f"store_url: sqlite:///{tmp_path}/not-yet.db\n"
        "nodes:\n"
        "  - id: urn:node:WEBTEST\n"
        "    name: Web test\n"
        '    start: {entry_urls: ["https://repo.example/"]}\n'
        "    dataone: {submitter: x, rights_holder: x, contact_subject: x}\n"
    )
    process, check = start(
        "web", "--config", str(config), "--ops", "--rate-file", str(tmp_path / "r.db")
    )
    try:
        assert requests.get(check, timeout=10).status_code == 200
        assert requests.get(check.removesuffix("/check") + "/ops", timeout=10).status_code == 404
    finally:
        assert stop(process) == 0
    assert process.stderr is not None
    assert "No operator view: no store yet" in process.stderr.read()
    assert not (tmp_path / "not-yet.db").exists()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_behind_a_trusted_proxy_the_rate_limit_counts_forwarded_clients(tmp_path: Path) -> None:
    refused = {"url": "http://10.0.0.1/dataset"}  # a check that never leaves the machine

    def status(check: str, client: str) -> int:
        headers = {"X-Forwarded-For": client}
        return requests.get(check, params=refused, headers=headers, timeout=30).status_code

    args = ("web", "--rate-limit", "1", "--rate-file")
    process, check = start(*args, str(tmp_path / "a.db"), "--trusted-proxy", "127.0.0.1")
    try:
        assert [status(check, c) for c in ("192.0.2.1", "192.0.2.2", "192.0.2.1")] == [
            200,
            200,
            429,
        ]
    finally:
        assert stop(process) == 0
    process, check = start(*args, str(tmp_path / "b.db"))  # no proxy: the header is ignored
    try:
        assert [status(check, c) for c in ("192.0.2.1", "192.0.2.2")] == [200, 429]
    finally:
        assert stop(process) == 0
