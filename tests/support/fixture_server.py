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
  (see `MODES`) for the hostile cases; `answer_after` (seconds) delays the answer.
- Every request is logged (`server.log`) with its time, method, path and headers.
"""

from __future__ import annotations

import gzip
import json
import mimetypes
import random
import socket
import sys
import threading
import time
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SITES = FIXTURES / "sites"
MAIN_ORIGIN = "https://repo.example"
TEXT_TYPES = (
    "text/",
    "application/xml",
    "application/json",
    "application/ld+json",
    "application/linkset",
    "application/xhtml+xml",
    "application/rss+xml",
)


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
    counters: dict[str, int] = field(default_factory=dict)  # requests per path, for modes
    extra_rules: dict[str, Any] = field(default_factory=dict)  # over _headers.json
    lock: threading.Lock = field(default_factory=threading.Lock)
    # generated bodies, rewritten, by rule, path and rewrites: the hostile corpus asks for
    # each 3-8 MB page three times or more (check, discover, sync), and building and
    # rewriting it cost 0.24 CPU-s a round of the corpus's generated paths
    generated: dict[tuple[str, str, tuple[tuple[str, str], ...]], bytes] = field(
        default_factory=dict
    )

    @property
    def origin(self) -> str:
        assert self.httpd is not None
        host, port = self.httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address (bytes only for AF_UNIX)
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
        rules = json.loads(path.read_text()) if path.exists() else {}
        return {**rules, **self.extra_rules}


def _resolve(root: Path, path: str) -> Path | None:
    target = (root / path.lstrip("/")).resolve()
    if root.resolve() not in target.parents and target != root.resolve():
        return None
    if target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that stopped reading (a capped fetch) is what many fixtures are for:
        not worth a traceback, which would also land in the output of a command run in
        the test process (tests.support.cli). Anything else goes to the real stderr."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        traceback.print_exc(file=sys.__stderr__)


class _Handler(BaseHTTPRequestHandler):
    server_version = "FixtureServer/1.0"
    site: SiteServer  # set per server class

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet
        return

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        site = self.site
        site.log.append(
            LoggedRequest(
                time.monotonic(),
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
            )
        )
        rule = dict(site.rules().get(self.path.split("#")[0], {}))
        if not rule:
            rule = dict(site.rules().get(self.path.split("?")[0], {}))
        if "answer_after" in rule:  # a slow repository: the answer comes, late
            time.sleep(float(rule["answer_after"]))
        status = int(rule.get("status", 200))
        file = rule.get("file", self.path.split("?")[0])
        body: bytes | None = None
        ctype = rule.get("content_type") or _guess_type(file)
        rewritten = False
        if "generate" in rule:
            body = _generated(site, rule, self.path, ctype.startswith(TEXT_TYPES))
            rewritten = True
        elif "body" in rule:
            body = str(rule["body"]).encode()
        else:
            found = _resolve(site.root, file)
            if found is not None:
                body = found.read_bytes()
            elif status == 200 and rule.get("mode") is None:
                status, body = 404, b"<html><body>Not found</body></html>"
        if body is not None and not rewritten and ctype.startswith(TEXT_TYPES):
            body = site.rewrite(body.decode("utf-8", "surrogateescape")).encode(
                "utf-8", "surrogateescape"
            )
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


def _generated(site: SiteServer, rule: dict[str, Any], path: str, text: bool) -> bytes:
    """The generated body of `path` under `rule`, rewritten if `text` (generators are pure:
    the same rule and path give the same bytes), built once per server."""
    key = (json.dumps(rule, sort_keys=True), path, tuple(sorted(site.rewrites.items())))
    with site.lock:
        found = site.generated.get(key)
    if found is None:
        body = GENERATORS[rule["generate"]](site, rule, path)
        if text:
            body = site.rewrite(body)
        found = body.encode("utf-8", "surrogateescape")
        with site.lock:
            site.generated[key] = found
    return found


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
            h.wfile.write(body[i : i + 1] or b" ")
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
    h.connection.setsockopt(
        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
    )
    h.connection.close()


def _hang(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """No answer for `delay` seconds, or until the rule's `release` (a `threading.Event` a
    test sets once it no longer needs the request held) is set."""
    release = rule.get("release")
    if release is not None:
        release.wait(float(rule.get("delay", 30)))
    else:
        time.sleep(float(rule.get("delay", 30)))


def _trickle_headers(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """A status line, then header bytes one at a time: each read is quick, the whole is not."""
    delay = float(rule.get("delay", 0.5))
    try:
        h.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for _ in range(int(rule.get("headers", 10_000))):
            for byte in b"X-Slow: y\r\n":
                h.wfile.write(bytes([byte]))
                h.wfile.flush()
                time.sleep(delay)
    except OSError:
        return


def _endless_sitemap(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """A "2 GB sitemap", generated as it is read: never stored anywhere."""
    h.send_response(200)
    h.send_header("Content-Type", "application/xml")
    h.end_headers()
    origin = h.site.origin
    total = int(rule.get("bytes", 2 * 1024**3))
    sent = 0
    try:
        h.wfile.write(
            b'<?xml version="1.0" encoding="UTF-8"?>\n'
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        )
        n = 0
        while sent < total:
            block = "".join(
                f"<url><loc>{origin}/dataset/{n + i}</loc><lastmod>2024-01-01</lastmod></url>\n"
                for i in range(1000)
            )
            n += 1000
            data = block.encode()
            h.wfile.write(data)
            sent += len(data)
    except OSError:
        return


def _gzip_stream(
    h: _Handler, rule: dict[str, Any], body: bytes, blocks: int, filler: bytes
) -> None:
    """`body`, then `blocks` repetitions of a self-contained deflate block of `filler`."""
    as_file = rule.get("as_file", False)  # a .gz file rather than Content-Encoding
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = comp.compress(body) + comp.flush(zlib.Z_FULL_FLUSH)
    # an empty, non-final stored block (byte-aligned after a full flush) decodes to nothing
    block = (
        comp.compress(filler) + comp.flush(zlib.Z_FULL_FLUSH)
        if filler
        else (b"\x00\x00\x00\xff\xff")
    )
    h.send_response(200)
    h.send_header(
        "Content-Type", rule.get("content_type", "application/gzip" if as_file else "text/html")
    )
    if not as_file:
        h.send_header("Content-Encoding", "gzip")
    h.end_headers()
    per_write = max(1, 65536 // max(1, len(block)))
    try:
        h.wfile.write(head)
        for start in range(0, blocks, per_write):
            h.wfile.write(block * min(per_write, blocks - start))
        h.wfile.write(comp.flush())
    except OSError:
        return


def _gzip_bomb(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """Decompresses to `gigabytes` (default 10) of spaces after the body: 1 MiB per ~1 KB."""
    _gzip_stream(h, rule, body, int(float(rule.get("gigabytes", 10)) * 1024), b" " * 1024**2)


def _gzip_void(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """Endless empty deflate blocks: megabytes on the wire that decode to nothing."""
    _gzip_stream(h, rule, body, int(rule.get("blocks", 100_000_000)), b"")


def _wrong_length(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """Content-Length off by `delta` (negative: short, the rest is sent anyway; positive:
    the connection closes before the promised bytes)."""
    h.send_response(200)
    h.send_header("Content-Type", rule.get("content_type", "text/html; charset=utf-8"))
    h.send_header("Content-Length", str(max(0, len(body) + int(rule.get("delta", 1000)))))
    h.end_headers()
    h.wfile.write(body)


def _big_header(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """One Link header line of `bytes` (default 1 MiB), or `count` Link header fields."""
    origin = h.site.origin
    h.send_response(200)
    h.send_header("Content-Type", "text/html; charset=utf-8")
    count = int(rule.get("count", 1))
    size = int(rule.get("bytes", 1024**2))
    per = max(1, size // count)
    one = f"<{origin}/item/0>; rel=item, "
    for i in range(count):
        links = (f"<{origin}/item/{i}-{j}>; rel=item" for j in range(per // len(one) + 1))
        h.send_header("Link", ", ".join(links)[:per])
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    try:
        h.wfile.write(body)
    except OSError:
        return


def _random_bytes(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """`size` bytes of seeded noise under the rule's content type (binary served as HTML)."""
    data = random.Random(int(rule.get("seed", 9))).randbytes(int(rule.get("size", 200_000)))
    h.send_response(200)
    h.send_header("Content-Type", rule.get("content_type", "text/html; charset=utf-8"))
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def _fail_then_ok(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """The first `failures` requests get `status` (503) with `retry_after`; then the file.

    `retry_after` "date:N" sends an HTTP-date N seconds ahead instead of seconds.
    """
    site = h.site
    key = h.path
    with site.lock:
        seen = site.counters.get(key, 0)
        site.counters[key] = seen + 1
    if seen < int(rule.get("failures", 2)):
        h.send_response(int(rule.get("fail_status", 503)))
        retry = str(rule.get("retry_after", ""))
        if retry.startswith("date:"):
            retry = formatdate(time.time() + float(retry[5:]), usegmt=True)
        if retry:
            h.send_header("Retry-After", retry)
        h.send_header("Content-Length", "0")
        h.end_headers()
        return
    h.send_response(200)
    h.send_header("Content-Type", rule.get("content_type", "text/html; charset=utf-8"))
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _redirect_chain(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """`/path?n=N` redirects to `/path?n=N-1` ... down to 0, which serves the file."""
    base, _, query = h.path.partition("?")
    n = int(query.removeprefix("n=") or rule.get("hops", 30))
    if n > 0:
        h.send_response(302)
        h.send_header("Location", f"{base}?n={n - 1}")
        h.send_header("Content-Length", "0")
        h.end_headers()
        return
    h.send_response(200)
    h.send_header("Content-Type", rule.get("content_type", "text/html; charset=utf-8"))
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _drop(h: _Handler, rule: dict[str, Any], body: bytes) -> None:
    """Close the connection without a response."""
    h.close_connection = True


MODES: dict[str, Callable[[_Handler, dict[str, Any], bytes], None]] = {
    "trickle": _trickle,
    "endless": _endless,
    "reset": _reset,
    "hang": _hang,
    "trickle_headers": _trickle_headers,
    "endless_sitemap": _endless_sitemap,
    "gzip_bomb": _gzip_bomb,
    "gzip_void": _gzip_void,
    "wrong_length": _wrong_length,
    "big_header": _big_header,
    "random_bytes": _random_bytes,
    "fail_then_ok": _fail_then_ok,
    "redirect_chain": _redirect_chain,
    "drop": _drop,
}


# -- generated bodies (hostile cases too large or too regular to keep as files) --

_DATASET = (
    '{"@context": "https://schema.org/", "@type": "Dataset", "@id": "https://doi.org/10.5061/x1",'
    ' "name": "Generated", "description": "A generated hostile page.",'
    ' "url": "https://repo.example/", "identifier": "doi:10.5061/x1",'
    # what the default dataone profile requires: an ISO metadata copy and a download
    ' "encoding": {"@type": "MediaObject", "contentUrl": "https://repo.example/x1.xml",'
    ' "encodingFormat": "http://www.isotc211.org/2005/gmd"},'
    ' "distribution": {"@type": "DataDownload", "contentUrl": "https://repo.example/x1.csv",'
    ' "encodingFormat": "text/csv"}'
)


def _page(head: str = "", jsonld: str = "", body: str = "") -> str:
    script = f'<script type="application/ld+json">{jsonld}</script>' if jsonld else ""
    return (
        f"<!DOCTYPE html><html><head><title>Dataset</title>{head}{script}</head>"
        f"<body><h1>Dataset</h1>{body}</body></html>"
    )


def _gen_deep_jsonld(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 100_000))
    return _page(jsonld=_DATASET + ', "about": ' + "[" * n + "]" * n + "}")


def _gen_many_nodes(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 100_000))
    keywords = ", ".join(f'{{"@type": "DefinedTerm", "name": "k{i}"}}' for i in range(n))
    return _page(jsonld=_DATASET + f', "keywords": [{keywords}]}}')


def _gen_long_string(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 8_000_000))
    return _page(jsonld=_DATASET.replace("A generated hostile page.", "x" * n) + "}")


def _gen_many_blocks(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 5000))
    block = f'<script type="application/ld+json">{_DATASET}}}</script>'
    return _page(head=block * n)


def _gen_many_html_links(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 100_000))
    links = "".join(
        f'<link rel="item" href="https://repo.example/f/{i}" type="text/csv">' for i in range(n)
    )
    return _page(head=links, jsonld=_DATASET + "}")


def _gen_big_robots(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("bytes", 2_000_000))
    line = "Disallow: /private/area/that/is/long/{}\n"
    lines = ["User-agent: *"]
    size = 0
    i = 0
    while size < n:
        lines.append(line.format(i).rstrip())
        size += len(lines[-1]) + 1
        i += 1
    lines.append("Sitemap: https://repo.example/good/sitemap.xml")
    return "\n".join(lines) + "\n"


def _gen_many_entries(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 60_000))
    urls = "".join(f"<url><loc>https://repo.example/dataset/{i}</loc></url>\n" for i in range(n))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
    )


def _gen_index_chain(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    """`?d=N` is an index listing `?d=N-1`; `?d=0` a sitemap with one good page."""
    base, _, query = path.partition("?")
    d = int(query.removeprefix("d=") or rule.get("depth", 12))
    if d <= 0:
        return (
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<url><loc>https://repo.example/good/1</loc></url></urlset>"
        )
    return (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>https://repo.example{base}?d={d - 1}</loc></sitemap></sitemapindex>"
    )


def _gen_many_linkset(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 100_000))
    items = ", ".join(
        f'{{"href": "https://repo.example/f/{i}", "type": "text/csv"}}' for i in range(n)
    )
    anchor = rule.get("anchor", "https://repo.example/c/linkset-many/page")
    return f'{{"linkset": [{{"anchor": "{anchor}", "item": [{items}]}}]}}'


def _gen_sitemap_of(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    urls = "".join(f"<url><loc>https://repo.example{p}</loc></url>" for p in rule["locs"])
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    )


def _gen_many_attributes(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    n = int(rule.get("n", 5000))
    attributes = " ".join(f'data-a{i}="v{i}"' for i in range(n))
    return _page(
        body=f'<div vocab="https://schema.org/" property="name" {attributes}>Dataset</div>'
    )


def _gen_many_datasets(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    """A cruise's page listing every CTD cast as a Dataset in one @graph (`count` of them),
    as project pages of oceanographic repositories do; the casts numbered in `no_doi`
    have no DOI yet (minted later), so they are the page's only non-harvestable ones."""
    count, no_doi = int(rule.get("count", 214)), {int(n) for n in rule.get("no_doi", ())}
    graph = []
    for n in range(1, count + 1):
        node: dict[str, Any] = {
            "@type": "Dataset",
            "@id": f"https://repo.example/dataset/at50-12-ctd-{n:03}",
            "name": f"CTD cast {n:03}, R/V Atlantis cruise AT50-12",
            "description": (
                f"Conductivity, temperature and depth profile from cast {n:03} of cruise "
                "AT50-12 in the Gulf of Maine, processed with SBE Data Processing 7.26."
            ),
            "url": f"https://repo.example/dataset/at50-12-ctd-{n:03}",
            "dateModified": "2024-02-0" + str(1 + n % 9),
            "keywords": ["CTD", "temperature", "salinity", "Gulf of Maine"],
            "license": "https://creativecommons.org/licenses/by/4.0/",
            "creator": {"@type": "Person", "name": "Rosa Vega", "@id": _ORCID},
            "encoding": {
                "@type": "MediaObject",
                "contentUrl": f"https://repo.example/meta/at50-12-ctd-{n:03}.xml",
                "encodingFormat": "http://www.isotc211.org/2005/gmd",
            },
            "distribution": {
                "@type": "DataDownload",
                "contentUrl": f"https://repo.example/files/at50-12-ctd-{n:03}.csv",
                "encodingFormat": "text/csv",
            },
        }
        if n not in no_doi:
            node["identifier"] = f"https://doi.org/10.5072/at50-12.ctd{n:03}"
        graph.append(node)
    block = json.dumps({"@context": "https://schema.org/", "@graph": graph}, indent=1)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>Cruise AT50-12: CTD casts | Example Ocean Data Office</title>"
        f'<script type="application/ld+json">{block}</script></head>'
        f"<body><h1>Cruise AT50-12</h1><p>{count} CTD casts.</p></body></html>"
    )


_ORCID = "https://orcid.org/0000-0002-1825-0097"


def _gen_repeat(site: SiteServer, rule: dict[str, Any], path: str) -> str:
    return str(rule["text"]) * int(rule["n"])


GENERATORS: dict[str, Callable[[SiteServer, dict[str, Any], str], str]] = {
    "repeat": _gen_repeat,
    "many_attributes": _gen_many_attributes,
    "sitemap_of": _gen_sitemap_of,
    "deep_jsonld": _gen_deep_jsonld,
    "many_nodes": _gen_many_nodes,
    "long_string": _gen_long_string,
    "many_blocks": _gen_many_blocks,
    "many_html_links": _gen_many_html_links,
    "big_robots": _gen_big_robots,
    "many_entries": _gen_many_entries,
    "index_chain": _gen_index_chain,
    "many_linkset": _gen_many_linkset,
    "many_datasets": _gen_many_datasets,
}


def start_site(
    site: str, sites_dir: Path = SITES, rules: dict[str, Any] | None = None
) -> list[SiteServer]:
    """Start one server for the site and one per `_hosts/<name>`; the first is the site.

    `rules` are added to the main site's `_headers.json` (the hostile corpus keeps
    each case's rules beside its expectations)."""
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
        if r == root and rules:
            server.extra_rules = dict(rules)
        handler = type("Handler", (_Handler,), {"site": server})
        server.httpd = _Server(("127.0.0.1", 0), handler)
        rewrites[src] = server.origin
        # shutdown() waits for the loop's next look at its flag: at the default 0.5 s, a
        # site's three servers took 1.5 s to stop, in every test that started one
        serve = partial(server.httpd.serve_forever, poll_interval=POLL)
        threading.Thread(target=serve, daemon=True).start()
        servers.append(server)
    return servers


POLL = 0.05  # seconds between a serving loop's looks at its shutdown flag


def stop(servers: list[SiteServer]) -> None:
    running = [s.httpd for s in servers if s.httpd is not None]
    stoppers = [threading.Thread(target=httpd.shutdown) for httpd in running]
    for t in stoppers:  # all at once: each waits for its own loop's next look
        t.start()
    for t in stoppers:
        t.join()
    for httpd in running:
        httpd.server_close()
