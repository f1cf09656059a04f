"""A granian worker hears a stop however late its server loop starts listening.

granian's worker sets its stop signal from the handler, and its server loop, started a moment
later, waits for the next one; `serving_granian._resend_stop` sets it again every SLICE once a
stop came. Here granian's `set_sync_signals` is replaced by one returning a counter, so what the
wrapped one does with it is seen: told nothing, it is never set; after SIGTERM, again and again.
It runs in a process of its own: it changes that process's signal handlers.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("granian")

PROBE = """
import os, signal, sys, time
import granian._signals as granian_signals
from adapter import signals
from adapter.commands.serving_granian import _resend_stop

class Counted:
    times = 0
    def set(self):
        Counted.times += 1

granian_signals.set_sync_signals = Counted  # granian's own installs handlers; ours replace them
_resend_stop()
granian_signals.set_sync_signals()
first = signals.nudge_main()
print("nudged once:", signals.nudge_main() is first)
if sys.argv[1] == "stop":
    os.kill(os.getpid(), signal.SIGTERM)
time.sleep(1.0)  # four SLICEs
print("set:", Counted.times, flush=True)
"""


def probe(stop: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, stop], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return dict(line.split(": ", 1) for line in done.stdout.splitlines())


def test_after_a_stop_the_worker_is_told_again_and_again() -> None:
    said = probe("stop")
    assert int(said["set"]) >= 3  # the handler's once, then every SLICE
    assert said["nudged once"] == "True"


def test_without_a_stop_the_worker_is_told_nothing() -> None:
    assert int(probe("none")["set"]) == 0
