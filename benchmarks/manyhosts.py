"""Many generated repositories in one cheap process: one listener per loopback address.

Linux routes all of 127.0.0.0/8 to `lo`, so host i listens on 127.0.0.(i+2)
at one shared port; the adapter's politeness key is host and port, so each
address is a distinct host to it. Pages are generated per request from
`benchmarks.synthrepo.page` (nothing on disk, nothing held), so 200 hosts of
500 pages cost this process a few MB and little CPU. Every request is logged
with its arrival time: the kernel's receive timestamp of its first segment
(`SO_TIMESTAMPNS`), so the server's own scheduling on a loaded machine does
not move it. The log is written as JSON lines when the process gets SIGTERM.

Host kinds: `ok` (plain), `slow` (each page answer waits `slow_seconds`),
`failing` (every 4th page 500 for good, every 4th+1 a 502 once, then 200),
`paused` (after a third of its pages, every request is a 503 with Retry-After
for `pause_seconds`; requests that arrive inside that window are logged as
`early`).

    python benchmarks/manyhosts.py SPEC.json LOG.jsonl   # SPEC: see `federation.spec`
"""

from __future__ import annotations

import heapq
import json
import math
import selectors
import signal
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import contextlib

from benchmarks.synthrepo import page

HEADER_LIMIT = 64  # header lines read per request at most


@dataclass
class Host:
    index: int
    address: str
    port: int
    kind: str
    pages: int
    crawl_delay: float | None
    slow_seconds: float = 0.0
    pause_seconds: float = 0.0
    page_requests: int = 0
    pause_until: float = 0.0  # a Retry-After window this host announced
    tried: set[int] = field(default_factory=set)  # failing: pages already answered 502 once

    @property
    def origin(self) -> str:
        return f"http://{self.address}:{self.port}"

    def robots(self) -> bytes:
        delay = f"Crawl-delay: {self.crawl_delay:g}\n" if self.crawl_delay else ""
        return (f"User-agent: *\nAllow: /\n{delay}\nSitemap: {self.origin}/sitemap.xml\n").encode()

    def sitemap(self) -> bytes:
        urls = "".join(
            f"<url><loc>{self.origin}/dataset/{i}</loc><lastmod>2024-01-0{1 + i % 9}</lastmod>"
            "</url>\n"
            for i in range(self.pages)
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
        ).encode()

    def link_header(self, i: int) -> str:
        return (
            f'<https://doi.org/10.5072/bench.{i}>; rel="cite-as", '
            f'<{self.origin}/metadata/{i}.xml>; rel="describedby"; type="application/xml"; '
            'profile="http://www.isotc211.org/2005/gmd", '
            '<https://schema.org/Dataset>; rel="type"'
        )


Answer = tuple[int, dict[str, str], bytes, str]  # status, headers, body, what was asked


def answer(host: Host, target: str, now: float) -> Answer:
    """What `host` answers to a GET of `target` at `now` (a pure function of its state)."""
    if target == "/robots.txt":
        return 200, {"Content-Type": "text/plain"}, host.robots(), "robots"
    if target == "/sitemap.xml":
        return 200, {"Content-Type": "application/xml"}, host.sitemap(), "sitemap"
    if not target.startswith("/dataset/") or not target[9:].isdigit():
        return 404, {"Content-Type": "text/plain"}, b"not here\n", "other"
    i = int(target[9:])
    if i >= host.pages:
        return 404, {"Content-Type": "text/plain"}, b"not here\n", "page"
    host.page_requests += 1
    if host.kind == "paused":
        if not host.pause_until and host.page_requests > host.pages // 3:
            host.pause_until = now + host.pause_seconds
        if now < host.pause_until:
            after = str(max(1, math.ceil(host.pause_until - now)))
            return 503, {"Retry-After": after, "Content-Type": "text/plain"}, b"busy\n", "page"
    if host.kind == "failing":
        if i % 4 == 0:
            return 500, {"Content-Type": "text/plain"}, b"broken\n", "page"
        if i % 4 == 1 and i not in host.tried:
            host.tried.add(i)
            return 502, {"Content-Type": "text/plain"}, b"gateway\n", "page"
    headers = {"Content-Type": "text/html; charset=utf-8", "Link": host.link_header(i)}
    return 200, headers, page(i, host.origin).encode(), "page"


SO_TIMESTAMPNS = 35  # Linux: the kernel stamps each received segment (CLOCK_REALTIME)
STAMP = struct.Struct("qq")  # struct timespec


@dataclass
class Conn:
    sock: socket.socket
    host: Host
    buf: bytes = b""
    stamp: float = 0.0  # when the current request's first bytes reached the kernel
    out: bytes = b""


class Server:
    """A selector loop over every host's listener; request times are the kernel's.

    The arrival time of a request is the kernel's receive timestamp of its first
    segment, not when this process got round to reading it: on a loaded machine
    the server's own scheduling would otherwise squeeze or stretch the gaps it
    reports.
    """

    def __init__(self, hosts: list[Host]) -> None:
        self.hosts = hosts
        self.log: list[tuple[int, float, str, int, int]] = []  # host, time, what, status, early
        self.sel = selectors.DefaultSelector()
        self.timers: list[tuple[float, int, Conn, bytes]] = []  # slow answers, by due time
        self.stopped = False

    def listen(self) -> None:
        for host in self.hosts:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # on the listener, so a connection's first request, queued before accept, has it too
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            sock.bind((host.address, host.port))
            sock.listen(256)
            sock.setblocking(False)
            self.sel.register(sock, selectors.EVENT_READ, host)

    def serve(self) -> None:
        while not self.stopped:
            wait = 0.5
            if self.timers:
                wait = max(0.0, min(wait, self.timers[0][0] - time.time()))
            for key, events in self.sel.select(wait):
                if isinstance(key.data, Host):
                    self.accept(key.fileobj, key.data)  # type: ignore[arg-type]
                elif events & selectors.EVENT_READ:
                    self.read(key.data)
                else:
                    self.flush(key.data)
            while self.timers and self.timers[0][0] <= time.time():
                _, _, conn, data = heapq.heappop(self.timers)
                conn.out += data
                self.flush(conn)

    def accept(self, listener: socket.socket, host: Host) -> None:
        try:
            sock, _ = listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(False)
        self.sel.register(sock, selectors.EVENT_READ, Conn(sock, host))

    def read(self, conn: Conn) -> None:
        try:
            data, anc, _, _ = conn.sock.recvmsg(65536, socket.CMSG_SPACE(STAMP.size))
        except BlockingIOError:
            return
        except OSError:
            data, anc = b"", []
        if not data:
            self.close(conn)
            return
        stamp = time.time()  # only when the kernel gave none
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = STAMP.unpack(value[: STAMP.size])
                stamp = sec + nsec / 1e9
        if not conn.buf:
            conn.stamp = stamp
        conn.buf += data
        while b"\r\n\r\n" in conn.buf:
            head, conn.buf = conn.buf.split(b"\r\n\r\n", 1)
            self.respond(conn, head.split(b"\r\n", 1)[0].decode("latin-1"), conn.stamp)
            conn.stamp = stamp
        if len(conn.buf) > 65536:
            self.close(conn)

    def respond(self, conn: Conn, line: str, now: float) -> None:
        host = conn.host
        parts = line.split()
        target = parts[1] if len(parts) > 1 else "/"
        early = int(host.pause_until > 0 and now < host.pause_until)
        status, headers, body, what = answer(host, target, now)
        self.log.append((host.index, now, what, status, early))
        head = f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()
        )
        data = head.encode("latin-1") + b"\r\n" + body
        if host.kind == "slow" and what == "page":
            heapq.heappush(self.timers, (time.time() + host.slow_seconds, id(data), conn, data))
            return
        conn.out += data
        self.flush(conn)

    def flush(self, conn: Conn) -> None:
        try:
            sent = conn.sock.send(conn.out) if conn.out else 0
        except BlockingIOError:
            sent = 0
        except OSError:
            self.close(conn)
            return
        conn.out = conn.out[sent:]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.out else 0)
        with contextlib.suppress(KeyError, ValueError):
            self.sel.modify(conn.sock, events, conn)

    def close(self, conn: Conn) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(conn.sock)
        conn.sock.close()


def main(spec_path: str, log_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    server = Server([Host(**h) for h in spec["hosts"]])

    def stop(*_: object) -> None:
        server.stopped = True

    signal.signal(signal.SIGTERM, stop)
    server.listen()
    print("ready", flush=True)
    server.serve()
    with open(log_path, "w") as out:
        for row in server.log:
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
