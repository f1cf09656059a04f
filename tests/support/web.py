"""Test helpers for the web pages: the real WSGI app under waitress on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import waitress
from waitress.server import BaseWSGIServer

from adapter.web.app import WsgiApp


@dataclass
class ServedWeb:
    server: BaseWSGIServer
    origin: str  # http://127.0.0.1:PORT

    def url(self, path: str = "/") -> str:
        return self.origin + path


@contextmanager
def serve_wsgi(app: WsgiApp) -> Iterator[ServedWeb]:
    """`app` under waitress (threads) on an ephemeral port, stopped afterwards."""
    server = waitress.create_server(
        app, host="127.0.0.1", port=0, threads=4, ident="adapter"
    )  # waitress reads asyncore_loop_timeout as an int: 0.1 was 0, a select() loop spinning
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield ServedWeb(server, f"http://127.0.0.1:{server.effective_port}")
    finally:
        stop_waitress(server, thread)


def stop_waitress(server: BaseWSGIServer, thread: threading.Thread) -> None:
    """Finish in-flight requests, then close every socket from the loop's own thread.

    Closing from the loop's thread means its select() never sees a descriptor vanish.
    A trigger that is already closed (EBADF) means the loop has ended on its own:
    then there is nothing left to close, only the thread to wait for.
    """
    server.task_dispatcher.shutdown(timeout=5)
    with suppress(OSError):
        server.trigger.pull_trigger(lambda: [c.close() for c in list(server._map.values())])
    thread.join(timeout=5)
