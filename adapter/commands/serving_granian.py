"""`adapter serve --server granian`: the same WSGI application in several processes.

Why: under waitress one Python process answers every request, so the API
never uses more than one core, and waitress's own request handling costs
about twice what the API's handlers do. granian parses HTTP in Rust and runs
the application in `workers` forked processes, each with `threads` Python
threads (benchmarks/api.py measured three times waitress's requests per
second for the same CPU).

Each worker builds its own application after the fork (`build` is called in
the worker: a store's connections must never cross a fork) and flushes its
access log at exit. granian gives no raw request target, so the API routes on
PATH_INFO (adapter.api.app.raw_target): a PID with `%2F` is read as one with `/`,
which names the same path. granian handles SIGTERM and Ctrl-C itself and exits 0
after either.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from multiprocessing.util import Finalize
from typing import Any

from adapter.commands.args import BadValue
from adapter.signals import SLICE, nudge_main

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Any]
STOP_SECONDS = 40  # a worker's last access-log flush may wait on the store up to 30 s


def check_port(host: str, port: int) -> None:
    """BadValue when host:port cannot be listened on (granian would fail in a worker)."""
    if port == 0:
        raise BadValue("--server granian needs a fixed --port (its workers share it)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise BadValue(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
                "stop what uses it or choose another --port"
            ) from None


def stop_until_served(main: int) -> None:
    """A worker forked by `main` ends at SIGTERM or Ctrl-C until granian sets its own handlers.

    The fork inherits the main process's handlers, which only set a flag the worker never
    reads: a stop that came while a worker started was lost, and the worker served on until
    killed STOP_SECONDS later. Reset in `load` that window was still the worker's whole start
    (logging, its event loop), 40 s of a stop right after a start under SCHED_IDLE on busy
    cores; at the fork it is gone. The worker has served nothing yet."""

    def in_worker() -> None:
        if os.getppid() == main:  # not a fork by one of its children
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)

    os.register_at_fork(after_in_child=in_worker)


def serve_forked(
    build: Callable[[], tuple[WsgiApp, Callable[[], None]]],
    host: str,
    port: int,
    *,
    workers: int,
    threads: int,
    announce: Callable[[], None],
) -> None:
    """Serve `build()`'s application in `workers` processes until SIGTERM or Ctrl-C.

    `build` returns the application and what to run when the worker exits.
    """
    from granian.constants import Interfaces  # lazy: only this server needs it
    from granian.log import LogLevels
    from granian.server import Server

    check_port(host, port)

    stop_until_served(os.getpid())

    def load(_target: str) -> WsgiApp:
        nudge_main()  # in the worker: its main thread waits on granian's Event too
        _resend_stop()
        app, at_exit = build()
        done: list[bool] = []

        def once() -> None:
            if not done:
                done.append(True)
                at_exit()

        # a forked worker ends in os._exit: atexit never runs there, multiprocessing's
        # finalizers do (and atexit covers a worker that is not a multiprocessing child)
        Finalize(None, once, exitpriority=10)
        atexit.register(once)
        return app

    server = Server(
        "adapter",  # the application comes from `load`, not from an import path
        address=host,
        port=port,
        interface=Interfaces.WSGI,
        workers=workers,
        blocking_threads=threads,
        log_level=LogLevels.error,
        workers_kill_timeout=STOP_SECONDS,  # a worker that will not stop is killed
    )
    announce()
    nudge_main()  # granian's main loop waits on an Event with no timeout
    server.serve(target_loader=load)


def _resend_stop() -> None:
    """In a worker: once a stop signal came, tell granian's worker again every SLICE.

    granian's worker sets its stop Event from the handler, and its server loop, started a
    moment later, waits for the next one: a stop that came in between was lost, and the
    worker served on until killed (STOP_SECONDS). Told again, the loop hears it. The worker
    calls `granian._signals.set_sync_signals` after `load`; this wraps it there (a granian
    without it is left as it is)."""
    import granian._signals as granian_signals  # lazy: only this server needs it

    plain = getattr(granian_signals, "set_sync_signals", None)
    if plain is None:  # another granian: it stops as it stops
        return

    def set_sync_signals() -> Any:
        event = plain()
        asked = threading.Event()

        def handler(_signum: int, _frame: object) -> None:
            asked.set()
            event.set()

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, handler)

        def again() -> None:
            asked.wait()
            while True:
                time.sleep(SLICE)
                event.set()

        threading.Thread(target=again, name="stop-again", daemon=True).start()
        return event

    granian_signals.set_sync_signals = set_sync_signals
