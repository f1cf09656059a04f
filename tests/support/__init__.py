"""Shared test helpers: fixture servers, stores, the Member Node, DataONE schemas, hostile cases."""

import socket

# `adapter serve` lowers its own priority by default (niceness 10, SCHED_IDLE). The suite runs
# three workers on two cores, so a lowered server can starve for tens of seconds and miss a
# test's timeout. Tests not about priority run it as started.
SERVE_AS_STARTED = ("--nice", "0", "--no-idle")


def free_port() -> int:
    """A loopback port free now (for servers that need a fixed one, like granian's workers)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
