"""`adapter demo`: the bundled repository served on 127.0.0.1 and synced, offline.

Real `adapter` processes where one is the point (a demo left serving, Ctrl-C, SIGTERM, a
command run in an empty directory) are forked warm (tests/support/zygote.py)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapter.cli import cli
from adapter.commands import demo as demo_command
from adapter.commands.demo import DEMO_NODE, DEMO_PORT
from adapter.demo.server import DemoServer, demo_site
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.store.db import Store
from tests.support.cli import run_in_process
from tests.support.zygote import adapter_popen

ROOT = Path(__file__).resolve().parents[2]


def test_demo_site_is_package_data_and_serves_signposting() -> None:
    assert (demo_site() / "robots.txt").is_file()
    with DemoServer() as server, Fetcher(policy=AddressPolicy([server.origin])) as fetcher:
        robots = fetcher.get(server.url("/robots.txt"))
        assert f"Sitemap: {server.origin}/sitemap_index.xml" in robots.body.decode()
        page = fetcher.get(server.url("/dataset/ocean-temperature-2019"))
        assert page.status == 200 and 'rel="cite-as"' in ",".join(page.link_headers)
        again = fetcher.get(server.url("/dataset/ocean-temperature-2019"), etag=page.etag)
        assert again.status == 304
        assert fetcher.get(server.url("/dataset/coastal-survey-1998")).status == 410
        assert fetcher.get(server.url("/../pyproject.toml")).status == 404
        signmap = fetcher.get(server.url("/sitemaps/datasets-1.xml")).body.decode()
        assert '<rs:ln rel="cite-as"' in signmap and "demo.example" not in signmap


@pytest.mark.slow  # a demo sync or a demo process
def test_demo_syncs_the_bundled_repository(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'demo.db'}"
    result = CliRunner().invoke(cli, ["demo", "--store", store_url])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "pages seen 6, due 6, fetched 6" in out
    # under the default dataone profile only the ocean Dataset (with its ISO copy and resource
    # map) is synced: the glacier and soil Datasets have no ISO metadata copy, the lake-ice
    # one no DOI
    assert "new objects 3" in out and "gone 1" in out
    assert "3  dataone/profile-unmet" in out
    for code in ("dataone/profile-unmet", "extract/js-rendered"):
        assert code in out
    assert f"adapter queue list --store {store_url}" in out
    assert f"adapter serve --store {store_url}" in out
    store = Store.open(store_url, create=False)
    total, records = store.list_objects(DEMO_NODE)
    assert total == 3
    series = sorted(r.series_id or "" for r in records)
    assert series == [
        "doi:10.5072/demo.ocean.2019",
        "doi:10.5072/demo.ocean.2019#iso19139",
        "doi:10.5072/demo.ocean.2019#resourcemap",
    ]
    again = CliRunner().invoke(cli, ["demo", "--store", store_url])
    assert again.exit_code == 0 and "new objects 0" in again.output
    # the same series, live; if port 8737 was taken, the demo site moved to another
    # origin and each series followed its DOI there as a new version (issue 15)
    heads = [r for r in store.list_objects(DEMO_NODE)[1] if r.obsoleted_by is None]
    assert sorted(r.series_id or "" for r in heads) == series
    assert not any(r.archived for r in heads)


def _hang_up(holder: socket.socket) -> None:
    """Accept each connection on `holder` and close it unanswered, until `holder` closes."""
    with contextlib.suppress(OSError):
        while True:
            holder.accept()[0].close()


@pytest.mark.slow  # a demo sync or a demo process
def test_demo_runs_as_a_command_in_an_empty_directory(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT of others
    with contextlib.suppress(OSError):  # taken already: also fine, the demo falls back
        holder.bind(("127.0.0.1", DEMO_PORT))
        holder.listen()
        # the holder hangs up on the demo's probe at once: a silent one would hold the probe
        # its whole 3 s (that case has a test of its own, with a short probe timeout)
        threading.Thread(target=_hang_up, args=(holder,), daemon=True).start()
    try:
        proc = adapter_popen(
            "demo", cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = proc.communicate(timeout=120)
    finally:
        with contextlib.suppress(OSError):  # wakes the thread's accept: the port is free again
            holder.shutdown(socket.SHUT_RDWR)
        holder.close()
    assert proc.returncode == 0, err
    assert (tmp_path / "demo-harvest.db").is_file()
    assert f"127.0.0.1:{DEMO_PORT}/" not in out  # the preferred port is taken
    listed = _adapter(
        "queue", "list", "--store", "sqlite:///demo-harvest.db", "--json", cwd=tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    # the ocean Dataset, its ISO copy and resource map: the others fail the default dataone profile
    assert len([json.loads(x) for x in listed.stdout.splitlines()]) == 3


@pytest.mark.slow  # a demo sync or a demo process
def test_demo_serve_keeps_the_repository_up_for_check_dataset(tmp_path: Path) -> None:
    """`adapter demo --serve`: after the sync the site stays up until SIGTERM (exit 0)."""
    import re
    import signal
    import time

    proc = adapter_popen(
        "demo",
        "--serve",
        "--store",
        f"sqlite:///{tmp_path / 'd.db'}",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "adapter check-dataset" in line:
                break
        url = re.search(r"check-dataset (\S+)", "".join(lines))
        assert url, "".join(lines)
        # another program reads the served site: the command's contract, in this process
        check = run_in_process(["check-dataset", "--json", url.group(1)], tmp_path)
        assert check.returncode == 0, check.stdout + check.stderr
        assert json.loads(check.stdout)["harvestable"] is True
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Stopped." in rest


@pytest.mark.slow  # a demo sync or a demo process
def test_ctrl_c_stops_demo_serve_with_130(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) ends `adapter demo --serve` with 130, as the README's exit codes say."""
    import signal

    proc = adapter_popen(
        "demo",
        "--serve",
        "--store",
        f"sqlite:///{tmp_path / 'd.db'}",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "Serving the demo repository" in line:
            break
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130, "".join(seen)


def _adapter(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The entry point in the test process: the demo's contract, not a process, is the point."""
    ran = run_in_process(list(args), cwd)
    return subprocess.CompletedProcess(args, ran.returncode, ran.stdout, ran.stderr)


@pytest.mark.slow  # a demo sync or a demo process
def test_a_second_demo_uses_the_one_serving_instead_of_moving_port(tmp_path: Path) -> None:
    """`adapter demo` while `adapter demo --serve` runs: same URLs, so no duplicate DOIs."""
    import signal

    store = f"sqlite:///{tmp_path / 'd.db'}"
    proc = adapter_popen(
        "demo",
        "--serve",
        "--store",
        store,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        seen = ""
        while "until Ctrl-C" not in seen and proc.poll() is None:
            seen += proc.stdout.readline()
        if f"127.0.0.1:{DEMO_PORT}/" not in seen:
            pytest.skip(f"port {DEMO_PORT} is held by another program on this machine")
        again = _adapter("demo", "--store", store, cwd=tmp_path)
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"already served at http://127.0.0.1:{DEMO_PORT}/" in again.stdout
        assert "duplicate-doi" not in again.stdout
        assert "new objects 0" in again.stdout
        second = _adapter("demo", "--serve", "--store", store, cwd=tmp_path)
        assert second.returncode == 2 and "already served" in second.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


@pytest.mark.slow  # a demo sync or a demo process
def test_a_port_held_by_another_program_is_refused_once_the_store_has_demo_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the holder never answers: each run's probe waits its whole timeout for it
    monkeypatch.setattr(demo_command, "PROBE_TIMEOUT", 0.2)
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        holder.bind(("127.0.0.1", DEMO_PORT))
    except OSError:
        holder.close()
        pytest.skip(f"port {DEMO_PORT} is held by another program on this machine")
    holder.listen()
    try:
        first = _adapter("demo", cwd=tmp_path)  # a new store: a free port is harmless
        assert first.returncode == 0, first.stderr
        assert f"Port {DEMO_PORT} is taken" in first.stdout
        again = _adapter("demo", cwd=tmp_path)
    finally:
        holder.close()
    assert again.returncode == 2
    assert f"port {DEMO_PORT} is used by another program" in again.stderr
    assert "Traceback" not in again.stderr


def test_config_demo_yaml_describes_the_node_the_demo_writes() -> None:
    from adapter.commands.demo import demo_node
    from adapter.config.load import load_config

    config = load_config(ROOT / "config" / "demo.yaml")
    [configured] = config.nodes
    written = demo_node(f"http://127.0.0.1:{DEMO_PORT}/")
    assert configured.id == written.id and configured.name == written.name
    for key in ("submitter", "rights_holder", "contact_subject", "sync_metadata_copy"):
        assert getattr(configured.dataone, key) == getattr(written.dataone, key), key
    assert configured.politeness == written.politeness
    assert config.store_url == "sqlite:///demo-harvest.db"
