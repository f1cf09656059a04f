"""`adapter serve` yields the CPU to a sync on shared cores: SCHED_IDLE and niceness 10 unless
told, in every thread and in every worker it starts.

`lower_priority` is checked in forked children (cheap); one end-to-end case checks the command
wires it before granian forks its workers, once, on SQLite. It stops the server right after its
workers exist: a stop that came while a worker started used to be lost (the worker was killed
STOP_SECONDS later, 40 of this test's 50 s), so it must end well within that.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import pytest

from adapter.commands.serving_granian import STOP_SECONDS
from adapter.commands.serving_priority import DEFAULT_NICE, lower_priority
from tests.api.test_server import World, stop_serve, world  # noqa: F401  (the module's fixture)
from tests.support import free_port
from tests.support.zygote import adapter_popen

IDLE, NORMAL = os.SCHED_IDLE, os.SCHED_OTHER


def _stat(tid: int) -> list[str]:
    """/proc/TID/stat's fields from the third (state) on: the name may hold spaces."""
    return Path(f"/proc/{tid}/stat").read_text().rsplit(")", 1)[1].split()


def priority(tid: int) -> tuple[int, int]:
    """(niceness, scheduling policy) of one thread."""
    fields = _stat(tid)
    return int(fields[16]), int(fields[38])


def tasks(pid: int) -> list[int]:
    """The process's threads: niceness and scheduling policy are per thread on Linux."""
    return [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]


def children(pid: int) -> list[int]:
    found = (Path(f"/proc/{pid}/task/{tid}/children").read_text() for tid in tasks(pid))
    return [int(child) for text in found for child in text.split()]


def in_child(body: Callable[[], list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Run `body` in a forked child (priority only ever goes down) and return what it saw."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write, json.dumps(body()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        seen = pipe.read()
    os.waitpid(pid, 0)
    assert seen, "the child reported nothing"
    return [(niceness, policy) for niceness, policy in json.loads(seen)]


def lowered_everywhere(niceness: int, idle: bool, start_at: int = 0) -> list[tuple[int, int]]:
    """A thread running before the call and a process forked after it: what each ends at."""
    os.setpriority(os.PRIO_PROCESS, 0, start_at)
    stop = threading.Event()
    earlier = threading.Thread(target=stop.wait)
    earlier.start()
    assert earlier.native_id is not None
    lower_priority(niceness, idle)
    read, write = os.pipe()
    forked = os.fork()
    if forked == 0:  # pragma: no cover - the grandchild
        os.write(write, json.dumps(priority(threading.get_native_id())).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        later = tuple(json.loads(pipe.read()))
    os.waitpid(forked, 0)
    seen = [priority(threading.get_native_id()), priority(earlier.native_id), later]
    stop.set()
    earlier.join()
    return seen


@pytest.mark.parametrize(
    ("niceness", "idle", "start_at", "expected"),
    [
        (DEFAULT_NICE, True, 0, (DEFAULT_NICE, IDLE)),
        (DEFAULT_NICE, False, 0, (DEFAULT_NICE, NORMAL)),
        (0, False, 0, (0, NORMAL)),
        (5, False, 15, (15, NORMAL)),
    ],
    ids=["default", "no-idle", "nice 0: as started", "never lowered"],
)
def test_every_thread_and_later_process_yields(
    niceness: int, idle: bool, start_at: int, expected: tuple[int, int]
) -> None:
    seen = in_child(lambda: lowered_everywhere(niceness, idle, start_at))
    assert seen == [expected] * 3  # this thread, one started before, a process forked after


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@pytest.mark.parametrize("world", ["sqlite"], indirect=True)
def test_adapter_serve_yields_in_every_granian_worker_by_default(world: World) -> None:  # noqa: F811
    # forked from the warm zygote: a fresh interpreter's imports ran before the command lowered
    # its priority, but on the suite's busy cores they took 10-20 s of the 50 s this test took
    process = adapter_popen(
        "serve", "--port", str(free_port()), "--store", world.url, "--node-id", world.node.id,
        "--server", "granian", "--workers", "2",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None and world.node.id in process.stdout.readline()
        deadline = time.monotonic() + 120
        while len(workers := children(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(workers) == 2
        for tid in (tid for pid in (process.pid, *workers) for tid in tasks(pid)):
            assert priority(tid) == (DEFAULT_NICE, IDLE)
    finally:
        _back_to_normal(process.pid)
        assert stop_serve(process, timeout=STOP_SECONDS - 10) == 0  # no worker was killed


def _back_to_normal(pid: int) -> None:
    """The server's threads and workers at normal priority again so it stops soon (best
    effort: lowering the niceness needs root)."""
    with suppress(OSError):
        for tid in (tid for process in (pid, *children(pid)) for tid in tasks(process)):
            with suppress(OSError):
                os.sched_setscheduler(tid, NORMAL, os.sched_param(0))
                os.setpriority(os.PRIO_PROCESS, tid, 0)
