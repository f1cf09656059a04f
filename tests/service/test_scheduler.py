"""The scheduled sync process: no overlapping runs, clean stops, reloads, run logs.

Jobs here are either stand-ins (slow or blocking, to pin down the scheduling
rules) or the real `adapter.sync.run.run_node` against a fixture site served over
real HTTP. The `adapter schedule` process itself is run as a subprocess and
sent real signals.
"""

from __future__ import annotations

import io
import itertools
import json
import logging
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from adapter.config.load import parse_config
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.errors import AdapterError
from adapter.service.logsetup import configure
from adapter.service.scheduler import NodeScheduler
from tests.support.cli import run_in_process
from tests.support.stores import store_url
from tests.support.zygote import adapter_popen

if TYPE_CHECKING:  # the store tests below import the store only when they run
    from adapter.models import SyncRecord
    from adapter.store.db import Store

__all__ = ["store_url"]  # a fixture: SQLite and the real PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
WAIT = 30.0  # seconds a test waits for something that should happen at once


def node_yaml(node_id: str, schedule: str, url: str = "https://repo.example/") -> str:
    return (
        f"  - id: urn:node:{node_id}\n"
        f"    name: {node_id}\n"
        f"    start: {{entry_urls: ['{url}']}}\n"
        f"    schedule: {schedule}\n"
        "    dataone: {submitter: x, rights_holder: y, contact_subject: z}\n"
    )


def make_config(*nodes: str, store: str = "sqlite:///unused.db") -> AdapterConfig:
    return parse_config(f"store_url: {store}\nnodes:\n" + "".join(nodes))


@dataclass
class Counts:
    node_id: str
    pages: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class SlowJob:
    """Takes `seconds` (or until stopped); remembers how many ran at once."""

    def __init__(self, seconds: float, wanted: int) -> None:
        self.seconds = seconds
        self.wanted = wanted
        self.lock = threading.Lock()
        self.active = 0
        self.max_active = 0
        self.calls = 0
        self.started = threading.Event()
        self.enough = threading.Event()
        self.saw_stop = False

    def __call__(
        self, config: AdapterConfig, node: NodeSettings, *, stop: threading.Event
    ) -> Counts:
        with self.lock:
            self.active += 1
            self.calls += 1
            self.max_active = max(self.max_active, self.active)
        self.started.set()
        self.saw_stop = stop.wait(self.seconds)
        with self.lock:
            self.active -= 1
            if self.calls >= self.wanted:
                self.enough.set()
        return Counts(node.id, pages=self.calls)


@pytest.fixture
def scheduler_of() -> Iterator[Callable[..., NodeScheduler]]:
    made: list[NodeScheduler] = []

    def make(config: AdapterConfig, job: Any) -> NodeScheduler:
        scheduler = NodeScheduler(config, job)
        made.append(scheduler)
        return scheduler

    yield make
    for scheduler in made:
        if not scheduler.stop.is_set():
            scheduler.shutdown()


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the condition never became true"
        time.sleep(0.02)


def events(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "event", None) == name]


# -- scheduling rules, with stand-in jobs ------------------------------------------------


def test_a_slow_run_is_never_overlapped(
    scheduler_of: Callable[..., NodeScheduler], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="apscheduler")  # the handler keeps the last level
    caplog.set_level(logging.INFO, logger="adapter.service.scheduler")
    job = SlowJob(seconds=0.15, wanted=3)  # each run 2.5 intervals long
    config = make_config(node_yaml("SLOW", "{interval_minutes: 0.001}"))  # every 0.06 s
    scheduler = scheduler_of(config, job)
    scheduler.start(run_now=True)
    assert job.enough.wait(WAIT)
    scheduler.shutdown()
    assert job.max_active == 1
    assert events(caplog, "run-skipped"), "due runs during a slow run are skipped, and logged"
    # logged once: not again by APScheduler, as a line without an event
    theirs = [(r.name, r.getMessage()) for r in caplog.records if r.name.startswith("apscheduler")]
    assert theirs == []
    assert len(events(caplog, "run-start")) == job.calls
    assert len(events(caplog, "run-end")) == job.calls


def test_two_nodes_run_side_by_side(scheduler_of: Callable[..., NodeScheduler]) -> None:
    both = threading.Barrier(2, timeout=WAIT)
    met: list[str] = []

    def job(config: AdapterConfig, node: NodeSettings, *, stop: threading.Event) -> None:
        both.wait()  # only returns when the other node's run is going too
        met.append(node.id)

    config = make_config(
        node_yaml("A", "{interval_minutes: 60}"), node_yaml("B", "{cron: '@daily'}")
    )
    scheduler = scheduler_of(config, job)
    scheduler.start(run_now=True)
    wait_until(lambda: len(met) == 2)
    assert sorted(met) == ["urn:node:A", "urn:node:B"]


def test_shutdown_stops_the_running_sync_and_waits_for_it(
    scheduler_of: Callable[..., NodeScheduler], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="adapter.service.scheduler")
    job = SlowJob(seconds=WAIT, wanted=1)
    scheduler = scheduler_of(make_config(node_yaml("A", "{interval_minutes: 60}")), job)
    scheduler.start(run_now=True)
    assert job.started.wait(WAIT)
    assert scheduler.running() == ["urn:node:A"]
    scheduler.shutdown()
    assert job.saw_stop and job.active == 0  # it returned before shutdown did
    [end] = events(caplog, "run-end")
    assert "stopped early" in end.getMessage()
    assert vars(end)["counts"] == {"pages": 1}  # a structured field passed by `extra`
    assert job.calls == 1


def test_a_failing_run_is_logged_and_the_schedule_goes_on(
    scheduler_of: Callable[..., NodeScheduler], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="adapter.service.scheduler")
    calls: list[float] = []
    twice = threading.Event()

    def job(config: AdapterConfig, node: NodeSettings, *, stop: threading.Event) -> None:
        calls.append(time.monotonic())
        if len(calls) >= 2:
            twice.set()
        raise AdapterError("store sqlite:///x.db cannot be written: database is locked")

    scheduler = scheduler_of(make_config(node_yaml("A", "{interval_minutes: 0.002}")), job)
    scheduler.start(run_now=True)
    assert twice.wait(WAIT)
    scheduler.shutdown()
    failed = events(caplog, "run-failed")
    assert len(failed) >= 2
    assert "database is locked" in failed[0].getMessage()
    assert not failed[0].exc_info  # an AdapterError is a message, not a traceback


def test_reload_reschedules_adds_and_removes_nodes(
    scheduler_of: Callable[..., NodeScheduler],
) -> None:
    job = SlowJob(seconds=0, wanted=1)
    first = make_config(
        node_yaml("A", "{interval_minutes: 600}"),
        node_yaml("B", "{cron: '0 3 * * *'}"),
        node_yaml("C", "{interval_minutes: 600}"),
    )
    scheduler = scheduler_of(first, job)
    scheduler.start()
    before = scheduler.next_runs()
    assert set(before) == {"urn:node:A", "urn:node:B", "urn:node:C"}
    second = make_config(
        node_yaml("A", "{interval_minutes: 5}"),
        node_yaml("C", "{interval_minutes: 600}", url="https://mirror.example/"),
        node_yaml("D", "{cron: '0 4 * * *'}"),
    )
    changes = scheduler.reload(second)
    assert changes == [
        "urn:node:A rescheduled: every 5 min",
        "urn:node:C changed (from its next run)",
        "urn:node:D added",
        "urn:node:B removed (a run in progress finishes)",
    ]
    after = scheduler.next_runs()
    assert set(after) == {"urn:node:A", "urn:node:C", "urn:node:D"}
    assert after["urn:node:A"] is not None and before["urn:node:A"] is not None
    assert after["urn:node:A"] < before["urn:node:A"]
    assert after["urn:node:C"] == before["urn:node:C"]  # unchanged schedule, same next run
    assert scheduler.config is second
    moved = parse_config(
        second.model_dump_json(exclude={"source"}).replace("unused.db", "other.db")
    )
    assert scheduler.reload(moved) == ["store_url changed (from the next runs)"]


def test_jobs_carry_the_overlap_coalesce_and_grace_rules(
    scheduler_of: Callable[..., NodeScheduler],
) -> None:
    config = make_config(
        node_yaml("A", "{cron: '0 3 * * 0', jitter_seconds: 120, misfire_grace_seconds: 45}")
    )
    scheduler = scheduler_of(config, SlowJob(0, 1))
    scheduler.start()
    [job] = scheduler._scheduler.get_jobs()
    assert (job.max_instances, job.coalesce, job.misfire_grace_time) == (1, True, 45)
    assert job.trigger.jitter == 120
    assert str(job.trigger.fields[4]) == "sun"


# -- logging ------------------------------------------------------------------------------


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.usefixtures("restore_logging")
def test_json_lines_log_one_line_per_run_start_and_end(
    scheduler_of: Callable[..., NodeScheduler],
) -> None:
    stream = io.StringIO()
    configure("json", "INFO", stream)
    job = SlowJob(seconds=0, wanted=1)
    scheduler = scheduler_of(make_config(node_yaml("A", "{interval_minutes: 600}")), job)
    scheduler.start(run_now=True)
    assert job.enough.wait(WAIT)
    scheduler.shutdown()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    by_event = {line.get("event"): line for line in lines}
    assert by_event["run-start"]["node"] == "urn:node:A"
    end = by_event["run-end"]
    assert end["counts"] == {"pages": 1}
    assert end["level"] == "INFO" and end["logger"] == "adapter.service.scheduler"
    assert isinstance(end["seconds"], float) and end["ts"].endswith("+00:00")


@pytest.mark.usefixtures("restore_logging")
def test_human_log_lines_carry_the_counts() -> None:
    stream = io.StringIO()
    configure("human", "INFO", stream)
    logging.getLogger("adapter.service.scheduler").info(
        "run finished: %s", "urn:node:A", extra={"event": "run-end", "counts": {"fetched": 3}}
    )
    line = stream.getvalue().strip()
    assert line.endswith(
        "INFO adapter.service.scheduler: run finished: urn:node:A event=run-end counts=fetched:3"
    )


# -- the `adapter schedule` process -----------------------------------------------------------


class Process:
    """`adapter schedule` in a subprocess, its log lines collected as they come."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = adapter_popen(  # a real process, forked with its imports done
            "schedule",
            *args,
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no log line with {text!r}; saw:\n" + "\n".join(self.seen))

    def finish(self) -> int:
        code = self.proc.wait(timeout=WAIT)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def schedule_process(tmp_path: Path) -> Iterator[Callable[..., Process]]:
    started: list[Process] = []

    def start(config: Path, *extra: str, env: dict[str, str] | None = None) -> Process:
        process = Process(["--config", str(config), *extra], env or {}, tmp_path)
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_sigterm_stops_the_process_cleanly(
    tmp_path: Path, serve_site: Callable[[str], Any], schedule_process: Callable[..., Process]
) -> None:
    server = serve_site("sched-coastal")
    config = tmp_path / "adapter.yaml"
    store = f"sqlite:///{tmp_path / 'harvest.db'}"
    config.write_text(coastal_yaml(server.origin, store, 2, "{interval_minutes: 600}"))
    process = schedule_process(config, "--now", "--log-format", "json")
    process.wait_for('"run-start"')
    wait_until(lambda: bool(station_requests(server)))  # a real sync, its pages under way
    process.proc.send_signal(signal.SIGTERM)
    assert process.finish() == 0
    records = [json.loads(line) for line in process.seen if line.startswith("{")]
    names = [r.get("event") for r in records]
    assert (
        names.index("scheduler-stopping") < names.index("run-end") < names.index("scheduler-stop")
    )
    end = next(r for r in records if r.get("event") == "run-end")
    assert end["counts"]["status"] == "interrupted"  # the run saw the stop and finished
    assert 1 <= end["counts"]["fetched"] < STATIONS


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_sighup_reloads_and_keeps_the_old_configuration_when_the_new_one_is_bad(
    tmp_path: Path, schedule_process: Callable[..., Process]
) -> None:
    config = tmp_path / "adapter.yaml"
    head = "store_url: sqlite:///unused.db\nnodes:\n"
    config.write_text(head + node_yaml("A", "{interval_minutes: 600}"))
    process = schedule_process(config)
    process.wait_for("next run of urn:node:A")

    config.write_text(head + node_yaml("A", "{cron: '61 * * * *'}"))
    process.proc.send_signal(signal.SIGHUP)
    problem = process.wait_for("nodes[0].schedule.cron")
    assert "minute field '61'" in problem
    process.wait_for("configuration not reloaded: keeping the running one")

    config.write_text(
        head + node_yaml("A", "{interval_minutes: 600}") + node_yaml("B", "{cron: '@daily'}")
    )
    process.proc.send_signal(signal.SIGHUP)
    process.wait_for("configuration reloaded: urn:node:B added")
    process.wait_for("next run of urn:node:B")

    process.proc.send_signal(signal.SIGINT)
    assert process.finish() == 130  # Ctrl-C never exits 0 (README, exit codes)
    assert any("stopping on SIGINT" in line for line in process.seen)


def test_schedule_with_a_broken_file_exits_2(tmp_path: Path) -> None:
    broken = ROOT / "fixtures" / "config" / "invalid-cron.yaml"
    # the command's contract (exit code, the error's place) in this process: it stops before
    # any schedule, signal or process is the point
    result = run_in_process(["schedule", "--config", str(broken)], tmp_path)
    assert result.returncode == 2
    assert "nodes[1].schedule.cron" in result.stderr


# -- real syncs against a fixture site over real HTTP -------------------------------------------

STATIONS = 8  # landing pages in fixtures/sites/sched-coastal, every one harvestable


def coastal_yaml(origin: str, store: str, rate: float, schedule: str) -> str:
    return (
        f"store_url: {store}\n"
        "nodes:\n"
        "  - id: urn:node:COASTAL\n"
        "    name: Coastal Observing Network\n"
        f"    start: {{entry_urls: ['{origin}/']}}\n"
        f"    schedule: {schedule}\n"
        f"    politeness: {{requests_per_second: {rate}, concurrency: 1}}\n"
        "    dataone: {submitter: ops, rights_holder: coastal, contact_subject: ops}\n"
    )


def station_requests(server: Any) -> list[str]:
    return [r.path for r in list(server.log) if r.path.startswith("/station/")]


def check_records(store: Store, node_id: str) -> list[SyncRecord]:
    """Every record is whole: its bytes are there and match its size and checksum. The
    Datasets' records (each also has a resource map: new_objects counts both)."""
    import hashlib

    from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT

    total, records = store.list_objects(node_id, count=1000)
    assert total == len(records)
    for listed in records:
        record = store.get_record(node_id, listed.pid, with_bytes=True)
        assert record is not None and record.object_bytes is not None
        assert len(record.object_bytes) == record.size
        algorithm = {"MD5": "md5", "SHA-1": "sha1"}[record.checksum_algorithm]
        assert hashlib.new(algorithm, record.object_bytes).hexdigest() == record.checksum
    return [r for r in records if r.format_id != RESOURCE_MAP_FORMAT]


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_scheduled_real_syncs_never_overlap(
    store_url: str,
    serve_site: Callable[[str], Any],
    scheduler_of: Callable[..., NodeScheduler],
    caplog: pytest.LogCaptureFixture,
) -> None:
    from adapter.store.db import Store
    from adapter.sync.run import run_node

    caplog.set_level(logging.INFO, logger="adapter.service.scheduler")
    server = serve_site("sched-coastal")
    # 10 requests at 8 per second make the first run longer than the 0.3 s interval
    config = parse_config(coastal_yaml(server.origin, store_url, 8, "{interval_minutes: 0.005}"))
    finished = threading.Semaphore(0)

    def job(config: AdapterConfig, node: NodeSettings, *, stop: threading.Event) -> Any:
        try:
            return run_node(config, node, stop=stop)
        finally:
            finished.release()

    scheduler = scheduler_of(config, job)
    scheduler.start(run_now=True)
    for _ in range(3):
        assert finished.acquire(timeout=WAIT)
    scheduler.shutdown()

    store = Store.open(store_url, create=False)
    try:
        runs = sorted(store.runs("urn:node:COASTAL", limit=100), key=lambda r: r.started_at)
        assert len(runs) >= 3 and all(r.status == "ok" for r in runs)
        for earlier, later in itertools.pairwise(runs):
            assert earlier.finished_at is not None and earlier.finished_at <= later.started_at
        assert runs[0].summary["new_objects"] == 2 * STATIONS
        assert all(r.summary["new_objects"] == 0 for r in runs[1:])
        assert len(check_records(store, "urn:node:COASTAL")) == STATIONS
    finally:
        store.close()
    assert len(station_requests(server)) == STATIONS  # each page once: no run repeated another
    assert events(caplog, "run-skipped")
    ends = events(caplog, "run-end")
    assert vars(ends[0])["counts"]["new_objects"] == 2 * STATIONS


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_sigterm_mid_sync_finishes_pages_in_flight_and_a_rerun_completes(
    tmp_path: Path,
    store_url: str,
    serve_site: Callable[[str], Any],
    schedule_process: Callable[..., Process],
) -> None:
    from adapter.config.load import load_config
    from adapter.store.db import Store
    from adapter.sync.run import run_node

    server = serve_site("sched-coastal")
    config_path = tmp_path / "adapter.yaml"
    config_path.write_text(coastal_yaml(server.origin, store_url, 4, "{interval_minutes: 600}"))
    process = schedule_process(config_path, "--now", "--log-format", "json")
    wait_until(lambda: len(station_requests(server)) >= 2)
    process.proc.send_signal(signal.SIGTERM)
    assert process.finish() == 0
    requested = station_requests(server)
    assert 2 <= len(requested) < STATIONS  # it stopped starting pages

    store = Store.open(store_url, create=False)
    try:
        [run] = store.runs("urn:node:COASTAL")
        assert run.status == "interrupted" and run.finished_at is not None
        records = check_records(store, "urn:node:COASTAL")
        # every page that was requested (in flight at the signal or before) was committed
        assert sorted(urlsplit_path(r.source_url) for r in records) == sorted(set(requested))
        end = next(json.loads(x) for x in process.seen if '"run-end"' in x)
        assert end["counts"]["status"] == "interrupted"
        assert end["counts"]["new_objects"] == 2 * len(records)

        config = load_config(config_path)
        node = config.nodes[0]
        fast = node.model_copy(
            update={"politeness": node.politeness.model_copy(update={"requests_per_second": 50})}
        )
        summary = run_node(config, fast, stop=threading.Event())
        assert summary.status == "ok"
        assert summary.new_objects == 2 * (STATIONS - len(records))
        assert len(check_records(store, "urn:node:COASTAL")) == STATIONS
    finally:
        store.close()


def urlsplit_path(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path


# -- adapter status ----------------------------------------------------------------------------


def _status(config_path: Path, *extra: str) -> tuple[Any, str]:
    from click.testing import CliRunner

    from adapter.cli import cli

    args = ["status", "--config", str(config_path), *extra]
    result = CliRunner().invoke(cli, args, standalone_mode=False, catch_exceptions=False)
    return result.return_value, result.output


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_status_shows_last_and_next_run_of_each_node(
    tmp_path: Path, serve_site: Callable[[str], Any]
) -> None:
    from adapter.config.load import load_config
    from adapter.sync.run import run_node

    server = serve_site("sched-coastal")
    store_url = f"sqlite:///{tmp_path / 'harvest.db'}"
    config_path = tmp_path / "adapter.yaml"
    config_path.write_text(
        coastal_yaml(server.origin, store_url, 50, "{interval_minutes: 90}")
        + node_yaml("IDLE", "{cron: '15 4 * * *'}")
    )
    code, out = _status(config_path)
    assert code == 0 and out.count("last run    never") == 2  # no store yet: never run

    config = load_config(config_path)
    summary = run_node(config, config.nodes[0], stop=threading.Event())
    code, out = _status(config_path)
    assert code == 0
    coastal, idle = out.split("\n\n")[1:]
    assert ", ok, took " in coastal
    assert f"pages_seen {STATIONS}, due {STATIONS}, fetched {STATIONS}" in coastal
    assert f"new_objects {2 * STATIONS}" in coastal
    assert "last run    never" in idle and "04:15:00 UTC" in idle

    code, out = _status(config_path, "--json")
    document = json.loads(out)
    first = document["nodes"][0]
    assert first["last_run"]["status"] == "ok"
    assert first["last_run"]["summary"]["new_objects"] == summary.new_objects == 2 * STATIONS
    started = datetime.fromisoformat(first["last_run"]["started_at"])
    assert datetime.fromisoformat(first["next_run"]) == started + timedelta(minutes=90)
    assert document["nodes"][1]["last_run"] is None


def test_a_scheduled_enqueue_only_node_leaves_the_pages_to_workers(
    store_url: str,
    serve_site: Callable[[str], Any],
    scheduler_of: Callable[..., NodeScheduler],
) -> None:
    from adapter.store.db import Store
    from adapter.sync.drain import WorkOptions
    from adapter.sync.run import run_node
    from adapter.sync.worker import work

    server = serve_site("sched-coastal")
    yaml_text = coastal_yaml(server.origin, store_url, 50, "{interval_minutes: 60}")
    config = parse_config(yaml_text + "    sync: {enqueue_only: true}\n")
    finished = threading.Semaphore(0)
    summaries: list[Any] = []

    def job(config: AdapterConfig, node: NodeSettings, *, stop: threading.Event) -> Any:
        try:
            summaries.append(run_node(config, node, stop=stop))  # the scheduler's real job
            return summaries[-1]
        finally:
            finished.release()

    scheduler = scheduler_of(config, job)
    scheduler.start(run_now=True)
    assert finished.acquire(timeout=WAIT)
    scheduler.shutdown()
    assert (summaries[0].pages_seen, summaries[0].due, summaries[0].fetched) == (STATIONS,) * 2 + (
        0,
    )
    assert station_requests(server) == []  # discovery only: no landing page fetched

    store = Store.open(store_url, create=False)
    try:
        done = work(store, list(config.nodes), threading.Event(), WorkOptions(until_idle=True))
        assert done["urn:node:COASTAL"].new_objects == 2 * STATIONS
        assert len(check_records(store, "urn:node:COASTAL")) == STATIONS
    finally:
        store.close()


def test_a_run_whose_pages_go_on_after_its_job_returned_is_never_overlapped(
    scheduler_of: Callable[..., NodeScheduler], caplog: pytest.LogCaptureFixture
) -> None:
    """A job may return a future of its summary (its pages in the drain loop): the run
    lasts until that is done, for the skip rule, the run-end line and shutdown."""
    caplog.set_level(logging.INFO, logger="adapter.service.scheduler")
    runs: list[Future[Counts]] = []

    def job(config: AdapterConfig, node: NodeSettings, *, stop: threading.Event) -> Any:
        runs.append(Future())
        return runs[-1]

    config = make_config(node_yaml("LOOP", "{interval_minutes: 0.001}"))  # every 0.06 s
    scheduler = scheduler_of(config, job)
    scheduler.start(run_now=True)
    wait_until(lambda: len(events(caplog, "run-skipped")) >= 2)
    assert len(runs) == 1 and scheduler.running() == ["urn:node:LOOP"]
    assert not events(caplog, "run-end")
    threading.Timer(0.3, lambda: runs[0].set_result(Counts("urn:node:LOOP", 7))).start()
    scheduler.shutdown()  # waits for the run's future
    [end] = events(caplog, "run-end")
    assert vars(end)["counts"] == {"pages": 7}
    assert scheduler.running() == []


def test_shutdown_returns_once_a_run_end_is_logged_not_once_its_future_is_done(
    scheduler_of: Callable[..., NodeScheduler], caplog: pytest.LogCaptureFixture
) -> None:
    """A future's waiters wake before its callbacks run: a slow callback ahead of the
    scheduler's made shutdown return before the run-end line (and CI saw the same race)."""
    caplog.set_level(logging.INFO, logger="adapter.service.scheduler")
    runs: list[Future[Counts]] = []

    def job(config: AdapterConfig, node: NodeSettings, *, stop: threading.Event) -> Any:
        future: Future[Counts] = Future()
        future.add_done_callback(lambda _: time.sleep(0.3))  # ahead of the scheduler's
        runs.append(future)
        return future

    config = make_config(node_yaml("LATE", "{interval_minutes: 60}"))
    scheduler = scheduler_of(config, job)
    scheduler.start(run_now=True)
    wait_until(lambda: len(runs) == 1 and scheduler.running() == ["urn:node:LATE"])
    threading.Timer(0.1, lambda: runs[0].set_result(Counts("urn:node:LATE", 3))).start()
    scheduler.shutdown()
    [end] = events(caplog, "run-end")
    assert vars(end)["counts"] == {"pages": 3}
