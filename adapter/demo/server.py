"""A tiny HTTP server for the demo repository on 127.0.0.1 (any free port).

Serves `adapter/demo/site/` (or any directory laid out the same way): files by
path, `.html` implied for extension-less paths, per-path rules from
`_rules.json` (status, body, file, headers), `https://demo.example` rewritten
to the live origin, and an ETag on every 200 so a second `adapter sync` gets
304s. Standard library only; no network beyond the loopback address.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any

DEMO_ORIGIN = "https://demo.example"
TEXT_PREFIXES = ("text/", "application/xml", "application/json", "application/ld+json")


def demo_site() -> Path:
    """The bundled site directory (package data)."""
    return Path(str(files("adapter.demo").joinpath("site")))


class DemoServer:
    """`with DemoServer() as server: server.url("/robots.txt")`."""

    def __init__(self, root: Path | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.root = (root or demo_site()).resolve()
        handler = type("DemoHandler", (_Handler,), {"demo": self})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def start(self) -> DemoServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def rules(self) -> dict[str, Any]:
        path = self.root / "_rules.json"
        return dict(json.loads(path.read_text("utf-8"))) if path.exists() else {}

    def rewrite(self, text: str) -> str:
        return text.replace(DEMO_ORIGIN, self.origin)

    def find(self, name: str) -> Path | None:
        for candidate in (name, name + ".html", name.rstrip("/") + "/index.html"):
            target = (self.root / candidate.lstrip("/")).resolve()
            if self.root in target.parents and target.is_file():
                return target
        return None


class _Handler(BaseHTTPRequestHandler):
    demo: DemoServer
    server_version = "DemoRepository/1.0"  # how `adapter demo` recognises a running demo

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        return

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        rule: dict[str, Any] = self.demo.rules().get(path, {})
        status = int(rule.get("status", 200))
        found = self.demo.find(str(rule.get("file", path)))
        if "body" in rule:
            body = str(rule["body"]).encode()
            ctype = "text/html; charset=utf-8"
        elif found is not None:
            body = found.read_bytes()
            ctype = _content_type(found)
        else:
            status, body, ctype = 404, b"<html><body>Not found</body></html>", "text/html"
        if ctype.startswith(TEXT_PREFIXES):
            body = self.demo.rewrite(body.decode("utf-8")).encode("utf-8")
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        if status == 200 and self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for name, value in rule.get("headers", []):
            self.send_header(name, self.demo.rewrite(value))
        if status == 200:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


def _content_type(path: Path) -> str:
    if path.suffix == ".html":
        return "text/html; charset=utf-8"
    if path.suffix in (".jsonld", ".json-ld"):
        return "application/ld+json"
    if path.suffix == ".xml":
        return "application/xml"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"
