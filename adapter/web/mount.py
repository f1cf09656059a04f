"""The web pages beside another WSGI application (the Member Node API) on one port.

A request whose first path segment is one of the web pages' (`check`,
`findings`, `static`) goes to them, unless that segment is one the other
application claims (a node's short name); everything else, the root too, goes
to the other application, which answers its own 404s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from adapter.web.app import PATHS, StartResponse, WsgiApp


class Mount:
    def __init__(self, web: WsgiApp, other: WsgiApp, claimed: Iterable[str] = ()) -> None:
        self.web = web
        self.other = other
        self.claimed = frozenset(claimed)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        first = path.lstrip("/").split("/", 1)[0]
        if first and first in PATHS and first not in self.claimed:
            return self.web(environ, start_response)
        return self.other(environ, start_response)
