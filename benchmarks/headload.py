"""HEAD load for `describe`, since wrk cannot: its parser waits for a HEAD response's body.

wrk 4.1 parses every response as if it had the body its Content-Length
announces, so a HEAD request never completes. This is the same closed loop as
wrk (each connection sends its next request when the last answer is in,
keep-alive, cycling through a file of paths from its own offset) on asyncio
streams, in its own process; it prints the same summary line as the Lua script
(`WRKJSON {...}`). It costs more CPU per request than wrk, which the report's
"wrk cores" column shows.

    python benchmarks/headload.py HOST PORT PATHS_FILE CONNECTIONS SECONDS
"""

from __future__ import annotations

import asyncio
import json
import sys
import time


async def _connection(
    host: str, port: int, paths: list[str], offset: int, until: float, out: dict[str, list[float]]
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    i = offset
    try:
        while True:
            began = time.perf_counter()
            if began >= until:
                return
            path = paths[i % len(paths)]
            i += 1
            writer.write(f"HEAD {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            out["latency"].append(time.perf_counter() - began)
            if not head.startswith((b"HTTP/1.1 2", b"HTTP/1.0 2")):
                out["status"].append(1.0)
    except (OSError, asyncio.IncompleteReadError):
        out["read"].append(1.0)
    finally:
        writer.close()


async def _run(host: str, port: int, paths: list[str], connections: int, seconds: float) -> str:
    out: dict[str, list[float]] = {"latency": [], "status": [], "read": []}
    began = time.perf_counter()
    until = began + seconds
    await asyncio.gather(
        *(_connection(host, port, paths, c * 7919, until, out) for c in range(connections))
    )
    duration = time.perf_counter() - began
    lat = sorted(out["latency"]) or [0.0]
    summary = {
        "requests": len(out["latency"]),
        "duration_us": int(duration * 1e6),
        "mean_us": sum(lat) / len(lat) * 1e6,
        "p99_us": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6,
        "max_us": lat[-1] * 1e6,
        "connect": 0,
        "read": len(out["read"]),
        "write": 0,
        "status": len(out["status"]),
        "timeout": 0,
    }
    return "WRKJSON " + json.dumps(summary)


def main() -> None:
    host, port, paths_file, connections, seconds = sys.argv[1:6]
    with open(paths_file) as f:
        paths = [line.strip() for line in f if line.strip()]
    print(asyncio.run(_run(host, int(port), paths, int(connections), float(seconds))))


if __name__ == "__main__":
    main()
