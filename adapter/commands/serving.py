"""A command's WSGI server under waitress: a busy port is one line, Ctrl-C exits 130.

`adapter serve` and `adapter web` run the same loop: listen (a busy or
unusable address is a usage error naming it), announce where they listen,
serve until SIGTERM (exit 0) or Ctrl-C (exit 130, as every command).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import waitress

from adapter.commands.args import BadValue
from adapter.signals import on_signals


def listen(app: Any, host: str, port: int, **settings: Any) -> Any:
    """A waitress server bound to host:port, or BadValue saying why it cannot be."""
    try:
        return waitress.create_server(app, host=host, port=port, **settings)
    except OSError as exc:
        raise BadValue(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
            "stop what uses it or choose another --port"
        ) from None


def serve_until_stopped(server: Any, announce: Callable[[], None]) -> None:
    """Announce, then serve until SIGTERM (returns) or Ctrl-C (SystemExit 130).

    The announcement runs with the handlers in place, so a signal that comes
    while it prints stops the server the same way. The server is closed either way.
    """
    stopped_by: list[int] = []

    def on_stop(signum: int) -> None:
        stopped_by.append(signum)
        raise KeyboardInterrupt  # waitress closes its sockets and returns

    try:
        with on_signals(on_stop):
            announce()
            server.run()
    except KeyboardInterrupt:
        stopped_by.append(signal.SIGINT)
    finally:
        server.close()
    if stopped_by[:1] == [signal.SIGINT]:
        raise SystemExit(130)
