"""COAR Notify under `adapter serve`, when a node configures `notify:` (the `notify` extra).

Under waitress the inbox and its worker are a thread pair in the server's process
(adapter.notify.front). Under granian the inbox answers in every forked worker and the
worker runs in a process of its own, spawned before granian forks; the inbox wakes it
with SIGUSR1.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import click

from adapter.config.settings import NodeSettings
from adapter.extras import require
from adapter.service.logsetup import LogFormat, configure
from adapter.signals import inbox

if TYPE_CHECKING:  # without importing coarnotify for `adapter --help`
    from multiprocessing.process import BaseProcess

    from adapter.notify.front import NotifyFront


def notify_front(store: Any, settings: list[NodeSettings]) -> NotifyFront | None:
    """COAR Notify's inbox and worker when a node configures `notify:` (the `notify` extra)."""
    if not any(s.notify.enabled for s in settings):
        return None
    require("coarnotify", "notify: in the configuration (COAR Notify)")
    # lazy: every command module loads for `adapter --help`, which needs no coarnotify
    from adapter.notify.front import NotifyFront, notify_nodes

    return NotifyFront(store, notify_nodes(settings))


def announce_notify(bound: str, front: NotifyFront | None) -> None:
    if front is not None:
        names = ", ".join(n.short_name for n in front.nodes)
        click.echo(f"COAR Notify inbox: {bound}/inbox (for {names})", err=True)


def start_notify_process(
    url: str, nodes: list[NodeSettings], public_url: str, logs: tuple[LogFormat, str]
) -> BaseProcess:
    """COAR Notify's worker process beside granian's workers, started before granian forks:
    the process is spawned, it inherits no thread."""
    require("coarnotify", "notify: in the configuration (COAR Notify)")
    context = multiprocessing.get_context("spawn")
    args = (url, nodes, public_url, logs, os.getpid())
    worker = context.Process(target=notify_process, args=args, name="adapter-notify")
    # ignored from its start (a disposition exec keeps) until it can handle the wake-up:
    # SIGUSR1's default would end it
    previous = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        worker.start()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    return worker


def wake(pid: int | None) -> None:
    """Tell the notify process the inbox took something (it also looks every 5 s)."""
    if pid is not None:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGUSR1)


def notify_process(
    url: str,
    nodes: list[NodeSettings],
    public_url: str,
    logs: tuple[LogFormat, str],
    parent: int,
) -> None:
    """COAR Notify's worker in a process of its own, beside granian's workers (which answer
    the inbox and wake it with SIGUSR1). It stops on SIGTERM, or when the server that
    started it is gone."""
    from adapter.notify.worker import NotifyWorker
    from adapter.store.db import Store

    configure(*logs)
    stop = inbox()  # not an Event: see adapter.signals.inbox
    signal.signal(signal.SIGTERM, lambda signum, _frame: stop.put(signum))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the server, which stops us
    store = Store.open(url, create=False)
    worker = NotifyWorker(store, nodes, public_url, poll=5.0)
    signal.signal(signal.SIGUSR1, lambda *_: worker.wake())  # the inbox took something
    worker.start()
    try:
        while os.getppid() == parent:
            with suppress(queue.Empty):
                stop.get(timeout=1.0)
                break
    finally:
        worker.close()
        store.close()
