"""Where the suite's time goes, test by test: wall, CPU of this process, CPU of its children.

On a shared machine wall time is noise; CPU seconds are not, and wall minus CPU is what a test
spent waiting (a sleep, a server, a subprocess's start-up, a lease). Loaded by tests/conftest.py
when `ADAPTER_TEST_TIMINGS` names a file: each test appends one JSON line to it (every xdist
worker to the same file, `O_APPEND`), with its setup and teardown counted in (a module-scoped
server is paid by the first test that uses it). Summarise with
`python -m tests.support.timing FILE [N]`.

CPU here is the whole process's (`time.process_time`: every thread, a test's own server
included) plus the children it waited for (`resource.getrusage(RUSAGE_CHILDREN)`: a spawned
`adapter`, a checking pool's processes once they are reaped) and those a zygote forked for it.
A zygote's own imports are counted when it ends (the shared one of `adapter_popen` and the
hostile corpus, at the worker's exit, so in no test).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from dataclasses import dataclass

import pytest

from tests.support import zygote

ENV = "ADAPTER_TEST_TIMINGS"


def _children_cpu() -> float:
    """Children waited for, and the children of zygotes (tests/support/zygote.py) that ended."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime + zygote.CHILDREN_CPU


@dataclass
class _Open:
    wall: float = 0.0
    cpu: float = 0.0
    children: float = 0.0


class Timings:
    """The plugin: a test's phases summed, one line written when its teardown ends."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.open: dict[str, _Open] = defaultdict(_Open)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._measured(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._measured(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._measured(item)
        entry = self.open.pop(item.nodeid)
        line = {
            "test": item.nodeid,
            "worker": self.worker,
            "wall": round(entry.wall, 4),
            "cpu": round(entry.cpu, 4),
            "children": round(entry.children, 4),
            "slow": item.get_closest_marker("slow") is not None,
        }
        data = (json.dumps(line) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _measured(self, item: pytest.Item) -> Generator[None, None, None]:
        wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        yield
        entry = self.open[item.nodeid]
        entry.wall += time.perf_counter() - wall
        entry.cpu += time.process_time() - cpu
        entry.children += _children_cpu() - children


def register(config: pytest.Config) -> None:
    """Called from tests/conftest.py's `pytest_configure`."""
    path = os.environ.get(ENV)
    if path:
        config.pluginmanager.register(Timings(os.path.abspath(path)), "adapter-timings")


@dataclass(frozen=True)
class Row:
    test: str
    wall: float
    cpu: float  # this process's and its children's
    slow: bool


def _rows(path: str) -> list[Row]:
    with open(path, encoding="utf-8") as lines:
        raw = [json.loads(line) for line in lines if line.strip()]
    return [Row(r["test"], r["wall"], r["cpu"] + r["children"], r["slow"]) for r in raw]


def _total(rows: list[Row]) -> str:
    wall = sum(r.wall for r in rows)
    cpu = sum(r.cpu for r in rows)
    return (
        f"{len(rows):5d} tests  wall {wall:8.1f} s  cpu {cpu:7.1f} s  waiting {wall - cpu:7.1f} s"
    )


def _line(r: Row) -> str:
    return f"  {r.wall:7.2f} wall {r.cpu:7.2f} cpu {'S' if r.slow else ' '} {r.test}"


def summary(path: str, top: int = 20) -> str:
    """Totals, the `slow` split, per-file sums and the `top` tests by wall and by CPU."""
    rows = _rows(path)
    out = [
        "all      " + _total(rows),
        "slow     " + _total([r for r in rows if r.slow]),
        "not slow " + _total([r for r in rows if not r.slow]),
    ]
    files: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        files[r.test.split("::")[0]].append(r)
    out.append(f"\nfiles by wall (top {top}):")
    by_file = sorted(files.items(), key=lambda kv: -sum(r.wall for r in kv[1]))
    out.extend(f"  {_total(sel)}  {name}" for name, sel in by_file[:top])
    out.append(f"\ntests by wall (top {top}):")
    out.extend(_line(r) for r in sorted(rows, key=lambda r: -r.wall)[:top])
    out.append(f"\ntests by cpu (top {top}):")
    out.extend(_line(r) for r in sorted(rows, key=lambda r: -r.cpu)[:top])
    unmarked = sorted((r for r in rows if not r.slow and r.wall > 1.0), key=lambda r: -r.wall)
    out.append(f"\nnot marked slow, over 1 s of wall: {len(unmarked)}")
    out.extend(_line(r) for r in unmarked[:top])
    return "\n".join(out)


if __name__ == "__main__":
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20))
