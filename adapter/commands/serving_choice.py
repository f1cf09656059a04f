"""Which WSGI server `adapter serve` runs, with how many processes and threads, and why.

granian (the `granian` extra, adapter.commands.serving_granian) answers several times
waitress's requests per second, but its workers share one fixed port; waitress
(adapter.commands.serving) runs one process anywhere. The choice is pure, apart from
asking whether granian is installed and how many cores this process may use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

import click

from adapter.extras import install_hint, installed, require

WAITRESS_THREADS = 8
GRANIAN_THREADS = 4  # per worker: benchmarks/api.py measures 2 workers x 4 threads


@dataclass(frozen=True, slots=True)
class Server:
    """Which WSGI server answers, with how many processes and threads, and why that one."""

    kind: Literal["waitress", "granian"]
    workers: int
    threads: int
    why: str = ""  # why waitress when granian was not asked for

    def __str__(self) -> str:
        if self.kind == "granian":
            return f"with granian, {self.workers} worker(s) of {self.threads} threads"
        return f"with waitress, {self.threads} threads" + (f" ({self.why})" if self.why else "")


def cores() -> int:
    """The cores this process may run on (its affinity where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def choose_server(kind: str | None, workers: int | None, threads: int | None, port: int) -> Server:
    """The server `adapter serve` runs: granian when asked, or when installed and the port is
    fixed (its workers share one port the system cannot choose), else waitress.

    Asking for granian (`--server granian`, or `--workers`) without it installed says which
    extra to install; `--workers` under waitress, which runs one process, is a usage error.
    """
    if kind == "waitress":
        if workers is not None and workers > 1:
            raise click.UsageError("--workers needs granian (waitress runs one process)")
        return Server("waitress", 1, threads or WAITRESS_THREADS)
    asked = kind == "granian" or workers is not None
    if asked:
        require("granian", "--server granian" if kind == "granian" else "--workers")
    elif not installed("granian"):
        why = "granian is not installed; for several times the requests per second: "
        why += install_hint("granian")
        return Server("waitress", 1, threads or WAITRESS_THREADS, why)
    elif port == 0:
        why = "--port 0: granian's workers need a fixed --port"
        return Server("waitress", 1, threads or WAITRESS_THREADS, why)
    return Server("granian", workers or cores(), threads or GRANIAN_THREADS)
