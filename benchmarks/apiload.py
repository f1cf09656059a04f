"""Load for the Member Node API benchmark: wrk with a PID-cycling Lua script, nginx beside it.

wrk runs with a Lua script that cycles through a file of request paths (each
thread from its own offset), so the server sees many PIDs, never one cached
URL; its `done` prints one JSON line with req/s, mean and p99 latency and the
error counts. CPU is read from /proc for the server's process tree and from
`getrusage` for wrk, so the report says how the two cores were shared.
nginx serves the same object bytes and pre-built XML from files at the same
paths (the physical limit of this machine for these responses).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

WRK = shutil.which("wrk") or "/usr/bin/wrk"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
HEADLOAD = Path(__file__).resolve().parent / "headload.py"
TICK = os.sysconf("SC_CLK_TCK")

LUA = r"""
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do paths[#paths + 1] = line end
local verb = os.getenv("WRK_VERB") or "GET"
local counter = 0
function setup(thread)
  thread:set("offset", counter * 7919)
  counter = counter + 1
end
local i = 0
function init(args)
  i = (offset or 0) % #paths
end
function request()
  i = i % #paths + 1
  return wrk.format(verb, paths[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests": %d, "duration_us": %d, "mean_us": %.1f, "p99_us": %.1f, ' ..
    '"max_us": %.1f, "connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}\n',
    summary.requests, summary.duration, latency.mean, latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
"""


@dataclass(frozen=True, slots=True)
class Load:
    """One wrk run: throughput, latency, errors, and the CPU each side used."""

    rps: float
    mean_ms: float
    p99_ms: float
    errors: int  # socket errors and non-2xx answers
    server_cores: float  # CPU seconds per second of the server's process tree
    wrk_cores: float

    def row(self) -> dict[str, float]:
        return {
            "rps": round(self.rps, 1),
            "mean_ms": round(self.mean_ms, 2),
            "p99_ms": round(self.p99_ms, 2),
            "errors": self.errors,
            "server_cores": round(self.server_cores, 2),
            "wrk_cores": round(self.wrk_cores, 2),
        }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                resp.read()
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer within {seconds:.0f} s") from None
            time.sleep(0.1)


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by `pid` and every live descendant."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        parents[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICK
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += cpu.get(p, 0.0)
        todo.extend(child for child, parent in parents.items() if parent == p)
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wrk(
    origin: str,
    paths: list[str],
    *,
    verb: str = "GET",
    connections: int = 20,
    seconds: int = 10,
    threads: int = 2,
    server_pid: int | None = None,
    lua_delay_ms: int | None = None,
) -> Load:
    """One wrk run of `seconds` over `paths` (cycled); `lua_delay_ms` paces each connection."""
    tmp = Path(tempfile.mkdtemp(prefix="wrk-"))
    try:
        (tmp / "paths.txt").write_text("\n".join(paths) + "\n")
        script = LUA + (f"function delay() return {lua_delay_ms} end\n" if lua_delay_ms else "")
        (tmp / "cycle.lua").write_text(script)
        env = {**os.environ, "WRK_PATHS": str(tmp / "paths.txt"), "WRK_VERB": verb}
        args = [WRK, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s"]
        server_before = tree_cpu(server_pid) if server_pid else 0.0
        wrk_before = _children_cpu()
        began = time.perf_counter()
        command = [*args, "-s", str(tmp / "cycle.lua"), origin]
        if verb == "HEAD":  # wrk waits for a HEAD answer's body: see headload.py
            host, port = origin.removeprefix("http://").rsplit(":", 1)
            command = [sys.executable, str(HEADLOAD), host, port, str(tmp / "paths.txt")]
            command += [str(connections), str(seconds)]
        out = subprocess.run(
            command,
            env=env,
            capture_output=True,
            text=True,
            timeout=seconds + 60,
            check=True,
        ).stdout
        wall = time.perf_counter() - began
        wrk_cpu = _children_cpu() - wrk_before
        server_cpu = (tree_cpu(server_pid) - server_before) if server_pid else 0.0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    line = next((x for x in out.splitlines() if x.startswith("WRKJSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary: {out[-2000:]}")
    s = json.loads(line.removeprefix("WRKJSON "))
    errors = sum(s[k] for k in ("connect", "read", "write", "status", "timeout"))
    return Load(
        rps=s["requests"] / (s["duration_us"] / 1e6),
        mean_ms=s["mean_us"] / 1000,
        p99_ms=s["p99_us"] / 1000,
        errors=errors,
        server_cores=server_cpu / wall,
        wrk_cores=wrk_cpu / wall,
    )


class Wrk:
    """wrk running in the background until stopped (load beside a sync)."""

    def __init__(
        self,
        origin: str,
        paths: list[str],
        connections: int,
        delay_ms: int | None,
        under: tuple[str, ...] = (),
    ) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="wrkbg-"))
        (self.tmp / "paths.txt").write_text("\n".join(paths) + "\n")
        script = LUA + (f"function delay() return {delay_ms} end\n" if delay_ms else "")
        (self.tmp / "cycle.lua").write_text(script)
        env = {**os.environ, "WRK_PATHS": str(self.tmp / "paths.txt"), "WRK_VERB": "GET"}
        self.began = time.perf_counter()
        args = list(under)  # e.g. nice -n 19
        args += [
            WRK,
            "-t1",
            f"-c{connections}",
            "-d600s",
            "-s",
            str(self.tmp / "cycle.lua"),
            origin,
        ]
        self.proc = subprocess.Popen(
            args,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def stop(self) -> tuple[float, float]:
        """Stop it: the requests per second it made, and their p99 latency in ms (0: none)."""
        self.proc.send_signal(signal.SIGINT)  # wrk prints its summary on SIGINT
        out, _ = self.proc.communicate(timeout=30)
        wall = time.perf_counter() - self.began
        shutil.rmtree(self.tmp, ignore_errors=True)
        line = next((x for x in out.splitlines() if x.startswith("WRKJSON ")), None)
        if line is None:
            return 0.0, 0.0
        summary = json.loads(line.removeprefix("WRKJSON "))
        return float(summary["requests"]) / wall, float(summary["p99_us"]) / 1000


NGINX_CONF = """
worker_processes {workers};
daemon off;
error_log {tmp}/error.log crit;
pid {tmp}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fcgi; uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
  server {{
    listen 127.0.0.1:{port};
    root {root};
    default_type text/xml;
    location /{short}/v2/object/ {{ default_type application/ld+json; }}
    location = /{short}/v2/object {{ try_files /list/$arg_start.xml =404; }}
  }}
}}
"""


class Nginx:
    """nginx serving a tree of files laid out at the API's own paths."""

    def __init__(self, root: Path, short: str, workers: int = 2) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="nginx-api-"))
        for folder in (root, *root.parents):  # nginx workers run as nobody
            if folder == Path(tempfile.gettempdir()):
                break
            folder.chmod(0o755)
        self.port = free_port()
        conf = self.tmp / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(tmp=self.tmp, port=self.port, root=root, short=short, workers=workers)
        )
        self.proc = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(self.tmp)])
        self.origin = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGQUIT)
        self.proc.wait(10)
        shutil.rmtree(self.tmp, ignore_errors=True)
