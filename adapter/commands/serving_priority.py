"""The API's CPU priority: `adapter serve` yields the cores to a sync that shares them.

Set once, before granian forks its workers, so that they inherit it.
"""

from __future__ import annotations

import logging
import os
from contextlib import suppress

log = logging.getLogger(__name__)

# the API's CPU priority unless told: beside a full-speed sync on 2 shared cores, an API at full
# speed cost the sync 22 % at niceness 0, 5-13 % at 10 and 3-6 % under SCHED_IDLE, where the
# coordinating node's p99 wait grew from 60-70 ms to 180-200 ms (benchmarks/api.py, operate.md)
DEFAULT_NICE = 10
DEFAULT_IDLE = True


def lower_priority(niceness: int, idle: bool) -> None:
    """Yield the CPU to a sync on shared cores, in every thread and so in every worker started
    later: raise the niceness to `niceness` (never lower it: that needs privileges) and, when
    `idle`, run under SCHED_IDLE (Linux), which takes only the CPU time nothing else wants."""
    policy = getattr(os, "SCHED_IDLE", None) if idle else None
    for tid in _threads():
        with suppress(ProcessLookupError):  # a thread that ended meanwhile
            current = os.getpriority(os.PRIO_PROCESS, tid)
            if niceness > current:
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
            if policy is not None:
                os.sched_setscheduler(tid, policy, os.sched_param(0))
    if idle and policy is None:
        log.warning("--idle: this system has no SCHED_IDLE; the API runs at niceness %d", niceness)


def _threads() -> list[int]:
    """This process's thread ids (Linux: niceness and policy are per thread), else itself."""
    try:
        return [int(tid) for tid in os.listdir("/proc/self/task")]
    except FileNotFoundError:
        return [0]
