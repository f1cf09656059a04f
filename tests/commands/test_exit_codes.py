"""Every documented exit of every command, from the real `adapter` executable.

The README's table (Commands, Exit codes) is the contract: 0 ok, 1 the checked
thing fails, 2 a usage, configuration or environment error in one line (no
traceback), 130 Ctrl-C, 0 after SIGTERM for the long-lived commands. Each case
runs `adapter`'s entry point against fixture sites on 127.0.0.1: in the test
process (`tests.support.cli`) where only the contract is the point, as a real
process where a run's process tree is (a sync, a worker), and for signals.
Fetches time their retries on a virtual clock (the `virtual_clock` fixture),
so a closed port costs no 4-10 s of backoff; the sync of a closed port runs
as a process, asked once (ADAPTER_LIMITS max_retries=0: the exit code is
under test here, the retries in tests/http).
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import SERVE_AS_STARTED
from tests.support.cli import run_in_process
from tests.support.clock import FakeClock
from tests.support.fixture_server import start_site, stop
from tests.support.workersite import fixture_site, write_config
from tests.support.zygote import adapter_popen

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = Path(sys.executable).parent / "adapter"
WAIT = 60.0
BIG_PAGE = 30_000_000  # a page answered 200 that passes max_page_bytes


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class World:
    """Fixture sites, stores and configurations the cases name by key."""

    tmp: Path
    values: dict[str, str]

    def args(self, template: tuple[str, ...]) -> list[str]:
        return [a.format(**self.values) for a in template]


NO_RETRIES = {"ADAPTER_LIMITS": "max_retries=0"}  # read when a process starts


def run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A real `adapter` process, forked with its imports done (tests/support/zygote.py)."""
    proc = adapter_popen(
        *args,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess([str(ADAPTER), *args], proc.wait(), out, err)


def in_process(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    ran = run_in_process(args, cwd, env={"COLUMNS": "100"})
    return subprocess.CompletedProcess(args, ran.returncode, ran.stdout, ran.stderr)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("exits")
    big = {"/big": {"generate": "repeat", "text": "x" * 1000, "n": BIG_PAGE // 1000}}
    good = start_site("page-good", rules=big)
    bad = start_site("page-bad")
    change = start_site("sync-change")
    fixture_site(tmp / "sites", "workers", 4)
    workers = start_site("workers", tmp / "sites")
    # the quick sync run as a process: one page, so its default 2 requests/s costs ~1 s, not
    # sync-change's ~6 s (the exit code and its process tree are the point, not the pages)
    fixture_site(tmp / "sites", "quick", 1)
    quick = start_site("quick", tmp / "sites")
    servers = [good, bad, change, workers, quick]
    closed = f"http://127.0.0.1:{closed_port()}/"
    synced = tmp / "synced.db"
    cfg_ok = write_config(
        tmp / "ok.yaml",
        f"sqlite:///{synced}",
        workers[0].url("/robots.txt"),
        rate=200,
        concurrency=2,
    )
    cfg_failed = write_config(
        tmp / "failed.yaml",
        f"sqlite:///{tmp / 'failed.db'}",
        closed + "robots.txt",
        rate=200,
        concurrency=2,
    )
    with cfg_failed.open("a") as f:  # the node's closed port is asked once
        f.write("    limits:\n      max_retries: 0\n")
    assert in_process(["sync", "--config", str(cfg_ok)], tmp).returncode == 0
    assert in_process(["sync", "--config", str(cfg_failed)], tmp).returncode == 1
    (tmp / "a-file").write_text("not a folder")
    cfg_info = tmp / "info.yaml"  # the scheduler logs its next runs at INFO
    cfg_info.write_text(cfg_ok.read_text().replace("log_level: WARNING", "log_level: INFO"))
    values = {
        "tmp": str(tmp),
        "good": good[0].url("/dataset/1.html"),
        "bad": bad[0].url("/dataset/doi-null.html"),
        "big": good[0].url("/big"),
        "change": change[0].url("/sitemap.xml"),
        "quick": quick[0].url("/robots.txt"),
        "origin": change[0].url("/"),
        "closed": closed,
        "store": f"sqlite:///{synced}",
        "missing": f"sqlite:///{tmp / 'missing.db'}",
        "under_file": f"sqlite:///{tmp / 'a-file' / 'x.db'}",
        "no_folder": f"sqlite:///{tmp / 'no-such-folder' / 'x.db'}",
        "cfg_ok": str(cfg_ok),
        "cfg_failed": str(cfg_failed),
        "cfg_info": str(cfg_info),
        "cfg_bad": str(ROOT / "fixtures" / "config" / "invalid-rate.yaml"),
        "cfg_demo": str(ROOT / "config" / "demo.yaml"),
        "page_file": str(ROOT / "fixtures" / "sites" / "page-good" / "dataset" / "1.html"),
        "harvested": workers[0].url("/dataset/0"),
    }
    yield World(tmp, values)
    for s in servers:
        stop(s)


# (command line, exit code, a fragment of stdout+stderr)
CASES: list[tuple[tuple[str, ...], int, str]] = [
    # check-dataset
    (("check-dataset", "{good}"), 0, "HARVESTABLE"),
    (("check-dataset", "{bad}"), 1, "NOT HARVESTABLE"),
    (("check-dataset", "{big}"), 1, "HTTP 200"),
    (("check-dataset", "{closed}"), 2, "fetch/connection-failed"),
    (("check-dataset", "http://127.0.0.1:99999/"), 2, "Port out of range"),
    (("check-dataset", "http://exa mple.org/"), 2, "contains a space"),
    (("check-dataset", "http://[::1"), 2, "Invalid IPv6 URL"),
    (("check-dataset", "ftp://repo.example/x"), 2, "not an http(s) URL"),
    (("check-dataset",), 2, "give a URL"),
    (("check-dataset", "--file", "{page_file}", "--base-url", "{good}"), 0, "HARVESTABLE"),
    (("check-dataset", "--file", "{tmp}/nothing.html"), 2, "nothing.html"),
    (("check-dataset", "--config", "{cfg_ok}", "--node", "urn:node:WORKERS", "{harvested}"), 0, ""),
    (("check-dataset", "--config", "{cfg_ok}", "--node", "urn:node:NOPE", "{good}"), 2, "NOPE"),
    # findings
    (("findings",), 0, "dataone/"),
    (("findings", "--bogus"), 2, "No such option"),
    # discover
    (("discover", "{origin}"), 0, "landing pages"),
    (("discover", "{closed}"), 1, "0 landing pages"),
    (("discover", "http://127.0.0.1:99999/"), 2, "Port out of range"),
    # sync
    (("sync", "{quick}", "--store", "sqlite:///{tmp}/quick.db"), 0, "ok"),
    (("sync", "{closed}", "--store", "sqlite:///{tmp}/closed.db"), 1, "could not reach"),
    (("sync", "{closed}", "--store", "sqlite://"), 2, "in-memory"),
    (("sync", "{closed}", "--store", "sqlite://harvest2.db"), 2, "sqlite:///harvest2.db"),
    (("sync", "{closed}", "--store", "{under_file}"), 2, "is a file, not a folder"),
    (("sync", "{closed}", "--store", "{no_folder}"), 2, "does not exist"),
    (("sync", "http://[::1", "--store", "sqlite:///{tmp}/v6.db"), 2, "Invalid IPv6 URL"),
    (("sync", "--config", "{cfg_bad}"), 2, "requests_per_second"),
    (("sync", "--config", "{cfg_ok}", "urn:node:NOPE"), 2, "NOPE"),
    (("sync",), 2, "give one URL"),
    # runs, pages, queue, db
    (("runs", "--store", "{store}"), 0, "urn:node:WORKERS"),
    (("runs", "--store", "{missing}"), 2, "no store file"),
    (("runs", "--store", "sqlite://harvest2.db"), 2, "three slashes"),
    (("pages", "--store", "{store}"), 0, "/dataset/0"),
    (("pages", "--store", "{missing}"), 2, "no store file"),
    (("pages", "show", "{harvested}", "--store", "{store}"), 0, "HARVESTABLE"),
    (("pages", "show", "{closed}", "--store", "{store}"), 2, "no page"),
    (("queue", "list", "--store", "{store}"), 0, "create"),
    (("queue", "list", "--store", "{missing}"), 2, "no store file"),
    (("db", "upgrade", "--store", "sqlite:///{tmp}/new.db"), 0, "schema created"),
    (("db", "upgrade", "--store", "{under_file}"), 2, "is a file, not a folder"),
    # config, status, worker, serve, schedule, demo
    (("config", "check", "{cfg_ok}"), 0, "urn:node:WORKERS"),
    (("config", "check", "{cfg_bad}"), 2, "requests_per_second"),
    (("status", "--config", "{cfg_ok}"), 0, "ok"),
    (("status", "--config", "{cfg_failed}"), 1, "could not reach"),
    (("status", "--config", "{cfg_bad}"), 2, "requests_per_second"),
    (("worker", "--config", "{cfg_ok}", "--until-idle"), 0, "worker ok"),
    (("worker", "--store", "{missing}", "--node-id", "urn:node:X"), 2, "no store file"),
    (("serve", "--store", "{missing}"), 2, "no store file"),
    (("schedule", "--config", "{cfg_bad}"), 2, "requests_per_second"),
    (("demo", "--store", "sqlite://"), 2, "in-memory"),
    (("bogus-command",), 2, "No such command"),
]


# what runs as a real process: a run with its process tree, and a closed port asked once
# (ADAPTER_LIMITS is read when a process starts)
IN_A_PROCESS = {
    ("sync", "{quick}", "--store", "sqlite:///{tmp}/quick.db"),
    ("worker", "--config", "{cfg_ok}", "--until-idle"),
}
CLOSED_PORT = {("sync", "{closed}", "--store", "sqlite:///{tmp}/closed.db")}


def _params() -> list[object]:
    """The cases; those run as a real process are `slow` (the quick loop runs the rest)."""
    slow = IN_A_PROCESS | CLOSED_PORT
    return [
        pytest.param(*case, marks=[pytest.mark.slow] if case[0] in slow else []) for case in CASES
    ]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@pytest.mark.parametrize(("template", "code", "fragment"), _params(), ids=lambda v: str(v))
def test_exit_code(
    world: World, template: tuple[str, ...], code: int, fragment: str, virtual_clock: FakeClock
) -> None:
    args = world.args(template)
    if template in CLOSED_PORT:
        result = run(args, world.tmp, NO_RETRIES)
    elif template in IN_A_PROCESS:
        result = run(args, world.tmp)
    else:
        result = in_process(args, world.tmp)
    out = result.stdout + result.stderr
    assert result.returncode == code, out
    assert fragment in out
    assert "Traceback" not in out
    assert sum(line.startswith("Error:") for line in result.stderr.splitlines()) <= 1


def test_refused_stores_leave_nothing_behind(world: World) -> None:
    """A missing folder is not created; a read-only command does not create a store file."""
    in_process(["sync", world.values["closed"], "--store", world.values["no_folder"]], world.tmp)
    assert not (world.tmp / "no-such-folder").exists()
    for command in (["runs"], ["queue", "list"], ["pages"]):
        in_process([*command, "--store", world.values["missing"]], world.tmp)
    assert not (world.tmp / "missing.db").exists()


@pytest.mark.slow  # a real server process
@pytest.mark.parametrize("verb", ["serve", "web"])
def test_a_busy_port_is_one_line_after_serving_nothing(world: World, verb: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        ops = ["--ops"] if verb == "web" else []  # web reads a store only for /ops
        result = run([verb, *ops, "--store", world.values["store"], "--port", str(port)], world.tmp)
    assert result.returncode == 2, result.stderr
    assert f"127.0.0.1:{port}" in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.stderr


class Running:
    """A long-lived `adapter` process whose output is read as it comes."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.proc = adapter_popen(
            *args,
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, text: str) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return
        raise AssertionError(f"no line with {text!r}; saw:\n" + "".join(self.seen))

    def stop(self, signum: int) -> int:
        self.proc.send_signal(signum)
        try:
            return self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:  # say what it printed: once seen in a full suite
            self.proc.kill()
            self.proc.wait(timeout=WAIT)
            self.reader.join(WAIT)  # its output read to the end
            while not self.lines.empty():
                self.seen.append(self.lines.get())
            raise AssertionError(
                f"still running {WAIT:.0f} s after signal {signum}; it printed:\n"
                + "".join(self.seen)
            ) from None
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


LONG_LIVED: list[tuple[tuple[str, ...], str]] = [
    (("serve", *SERVE_AS_STARTED, "--store", "{store}", "--port", "0"), "Serving"),
    (("web", "--port", "0"), "Ctrl-C stops"),
    (("worker", "--config", "{cfg_ok}"), "Working on"),
    (("schedule", "--config", "{cfg_info}"), "next run"),
    # `demo --serve` holds the fixed demo port: its Ctrl-C case lives in test_demo.py, whose
    # tests run one after another on one worker (--dist loadfile), never beside this file's
]


@pytest.mark.slow  # real processes and signals
@pytest.mark.parametrize(("template", "ready"), LONG_LIVED, ids=lambda v: str(v))
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_ctrl_c_exits_130_and_sigterm_0(
    world: World, template: tuple[str, ...], ready: str, signum: int, code: int
) -> None:
    process = Running(world.args(template), world.tmp)
    process.wait_for(ready)
    assert process.stop(signum) == code, "".join(process.seen)


@pytest.mark.slow  # a real sync and a signal
def test_ctrl_c_during_a_sync_exits_130(world: World, tmp_path: Path) -> None:
    fixture_site(tmp_path / "sites", "workers", 40)
    servers = start_site("workers", tmp_path / "sites")
    try:
        slow = write_config(
            tmp_path / "slow.yaml",
            f"sqlite:///{tmp_path / 'slow.db'}",
            servers[0].url("/robots.txt"),
            rate=4,
            concurrency=1,
        )
        process = Running(["sync", "--config", str(slow)], tmp_path)
        deadline = time.monotonic() + WAIT
        while not (tmp_path / "slow.db").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.stop(signal.SIGINT) == 130
    finally:
        stop(servers)
