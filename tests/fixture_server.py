"""A real HTTP server on 127.0.0.1 serving one fixture site from `fixtures/sites/`.

Conventions (so fixture files read like real sites and work offline too):
- Files use the origin `https://repo.example`; the server rewrites it to its own
  `http://127.0.0.1:<port>` in text bodies and headers. Other hosts a site
  needs live in `<site>/_hosts/<name>/` (e.g. `_hosts/other.example/`), each
  served by its own server, `https://<name>` rewritten to that server.
- `<site>/_headers.json` maps a path to a response rule:
  `{"/dataset/1": {"status": 200, "headers": [["Link", "<...>; rel=cite-as"]],
    "content_type": "text/html", "file": "dataset/1.html", "gzip": true,
    "mode": "trickle"}}`. Paths without a rule are served from the file of that
  name (a directory serves its `index.html`). `mode` names a misbehaviour
  (see `MODES`) for the hostile cases.
- Every request is logged (`server.log`) with its time, method, path and headers.
"""

from __future__ import annotations

import gzip
import json
import mimetypes
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SITES = FIXTURES / "sites"
MAIN_ORIGIN = "https://repo.example"
TEXT_TYPES = ("text/", "application/xml", "application/json", "application/ld+json",
              "application/linkset", "application/xhtml+xml", "application/rss+xml")


@dataclass
class LoggedRequest:
    time: float
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class SiteServer:
    site: str
    root: Path
    rewrites: dict[str, str]
    log: list[LoggedRequest] = field(default_factory=list)
    httpd: ThreadingHTTPServer | None = None

    @property
    def origin(self) -> str:
        assert self.httpd is not None
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def rewrite(self, text: str) -> str:
        # longest first, so https://repo.example.org is not cut by https://repo.example
        for src in sorted(self.rewrites, key=len, reverse=True):
            text = text.replace(src, self.rewrites[src])
        return text

    def rules(self) -> dict[str, Any]:
        path = self.root / "_headers.json"
        return json.loads(path.read_text()) if path.exists() else {}


def _resolve(root: Path, path: str) -> Path | None:
    target = (root / path.lstrip("/")).resolve()
    if root.resolve() not in target.parents and target != root.resolve():
        return None
    if target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None


class _Handler(BaseHTTPRequestHandler):
    server_version = "FixtureServer/1.0"
    site: SiteServer  # set per server class

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        site = self.site
        site.log.append(LoggedRequest(time.monotonic(), self.command, self.path,
                                      {k.lower(): v for k, v in self.headers.items()}))
        rule = dict(site.rules().get(self.path.split("#")[0], {}))
        if not rule:
            rule = dict(site.rules().get(self.path.split("?")[0], {}))
        status = int(rule.get("status", 200))
        file = rule.get("file", self.path.split("?")[0])
        body: bytes | None = None
        if "body" in rule:
            body = str(rule["body"]).encode()
        else:
            found = _resolve(site.root, file)
            if found is not None:
                body = found.read_bytes()
            elif status == 200 and rule.get("mode") is None:
                status, body = 404, b"<html><body>Not found</body></html>"
        ctype = rule.get("content_type") or _guess_type(file)
        if body is not None and ctype.startswith(TEXT_TYPES):
            body = site.rewrite(body.decode("utf-8", "surrogateescape")).encode(
                "utf-8", "surrogateescape")
        if body is not None and rule.get("gzip"):
            body = gzip.compress(body, mtime=0)
        mode = rule.get("mode")
        if mode:
            MODES[mode](self, rule, body or b"")
            return
        headers = [(k, site.rewrite(v)) for k, v in rule.get("headers", [])]
        etag = rule.get("etag")
        if etag and self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self.send_response(status)
        if not any(k.lower() == "content-type" for k, _ in headers):
            self.send_header("Content-Type", ctype)
        for name, value in headers:
            self.send_header(name, value)
        if etag:
            self.send_header("ETag", etag)
        payload = body or b""
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if not head:
            self.wfile.write(payload)


def _guess_type(path: str) -> str:
    if path.endswith((".jsonld", ".json-ld")):
        return "application/ld+json"
    if path.endswith(".gz"):
        return "application/gzip"
    guessed = mimetypes.guess_type(path)[0]
    if guessed is None and (path.endswith("/") or "." not in path.rsplit("/", 1)[-1]):
        return "text/html; charset=utf-8"
    return guessed or "application/octet-stream"


# -- misbehaviour modes (hostile cases); each writes the whole response itself --

def _trickle(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    h.send_response(200)
    h.send_header("Content-Type", rule.get("content_type", "text/html"))
    h.send_header("Content-Length", str(max(len(body), 1_000_000)))
    h.end_headers()
    delay = float(rule.get("delay", 1.0))
    try:
        for i in range(int(rule.get("bytes", 600))):
            h.wfile.write(body[i:i + 1] or b" ")
            h.wfile.flush()
            time.sleep(delay)
    except OSError:
        return


def _endless(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    h.send_response(200)
    h.send_header("Content-Type", rule.get("content_type", "text/html"))
    h.end_headers()
    chunk = b"<p>" + b"x" * 65536 + b"</p>\n"
    try:
        for _ in range(int(rule.get("chunks", 100_000))):
            h.wfile.write(chunk)
    except OSError:
        return


def _reset(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    h.send_response(200)
    h.send_header("Content-Type", rule.get("content_type", "text/html"))
    h.send_header("Content-Length", str(len(body) * 2 + 100))
    h.end_headers()
    h.wfile.write(body[: len(body) // 2])
    h.wfile.flush()
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    h.connection.close()


def _hang(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    time.sleep(float(rule.get("delay", 30)))


MODES: dict[str, Callable[[_Handler, dict[str, Any], bytes], None]] = {
    "trickle": _trickle,
    "endless": _endless,
    "reset": _reset,
    "hang": _hang,
}


def start_site(site: str, sites_dir: Path = SITES) -> list[SiteServer]:
    """Start one server for the site and one per `_hosts/<name>`; the first is the site."""
    root = sites_dir / site
    if not root.is_dir():
        raise FileNotFoundError(root)
    roots = [(MAIN_ORIGIN, root)]
    hosts = root / "_hosts"
    if hosts.is_dir():
        roots += [(f"https://{d.name}", d) for d in sorted(hosts.iterdir()) if d.is_dir()]
    rewrites: dict[str, str] = {}
    servers: list[SiteServer] = []
    for src, r in roots:
        server = SiteServer(site, r, rewrites)
        handler = type("Handler", (_Handler,), {"site": server})
        server.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.httpd.daemon_threads = True
        rewrites[src] = server.origin
        threading.Thread(target=server.httpd.serve_forever, daemon=True).start()
        servers.append(server)
    return servers


def stop(servers: list[SiteServer]) -> None:
    for s in servers:
        if s.httpd is not None:
            s.httpd.shutdown()
            s.httpd.server_close()
