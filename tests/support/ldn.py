"""A small real LDN inbox on 127.0.0.1: what a repository runs to hear from the adapter.

It takes POSTed JSON-LD, keeps each body with its Content-Type, and answers `status`
(201 by default, with a Location). It can be created on a fixed port and started later,
so a test can have the adapter send to an inbox that is down, then bring it up.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support import free_port


class LdnInbox:
    def __init__(self, port: int | None = None, status: int = 201) -> None:
        self.port = port or free_port()
        self.status = status
        self.received: list[dict[str, Any]] = []
        self.content_types: list[str] = []
        self._lock = threading.Condition()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/inbox"

    def start(self) -> LdnInbox:
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with inbox._lock:
                    inbox.received.append(json.loads(body))
                    inbox.content_types.append(self.headers.get("Content-Type", ""))
                    inbox._lock.notify_all()
                self.send_response(inbox.status)
                self.send_header("Location", f"{inbox.url}/{len(inbox.received)}")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        # shutdown() waits for the loop's next look at its flag: 0.5 s at the default interval
        serve = partial(self._httpd.serve_forever, poll_interval=0.05)
        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def wait_for(
        self, matches: Callable[[dict[str, Any]], bool], timeout: float = 60.0
    ) -> dict[str, Any]:
        """The first notification received that `matches`, waiting up to `timeout` s."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for doc in self.received:
                    if matches(doc):
                        return doc
                left = deadline - time.monotonic()
                if left <= 0:
                    kinds = [d.get("type") for d in self.received]
                    raise AssertionError(f"no matching notification within {timeout} s: {kinds}")
                self._lock.wait(left)


def of_type(kind: str, in_reply_to: str | None = None) -> Callable[[dict[str, Any]], bool]:
    """A matcher: a notification whose type is or includes `kind` (and answers `in_reply_to`)."""

    def matches(doc: dict[str, Any]) -> bool:
        types = doc.get("type")
        types = types if isinstance(types, list) else [types]
        return kind in types and (in_reply_to is None or doc.get("inReplyTo") == in_reply_to)

    return matches
