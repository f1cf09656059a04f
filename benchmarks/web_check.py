"""The check page against the command line: the same check, answered by a warm server.

Run: .venv/bin/python benchmarks/web_check.py [--runs 10]

Serves the sp-good fixture site on 127.0.0.1, starts `adapter web --trust` on
it, and times the same landing page checked by `adapter check-dataset --json`
(a new process each time: interpreter, imports, check) and by
`GET /check?url=...` (HTML and JSON) on the running server, where everything
was imported and every template compiled at start-up. Prints a Markdown table
for BENCHMARKS.md. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fixture_server import start_site, stop  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def timed(action: object, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        began = time.perf_counter()
        action()  # type: ignore[operator]
        out.append(time.perf_counter() - began)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    servers = start_site("sp-good")
    page = servers[0].url("/dataset/7")
    trust = [a for s in servers for a in ("--trust", s.origin)]
    with tempfile.TemporaryDirectory() as tmp:
        web = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "adapter",
                "web",
                "--port",
                "0",
                "--rate-limit",
                "100000",
                "--rate-file",
                f"{tmp}/rate.db",
                *trust,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=ENV,
        )
        assert web.stdout is not None
        check = web.stdout.readline().strip().rpartition(" ")[2]
        try:

            def cli() -> None:
                subprocess.run(
                    [sys.executable, "-m", "adapter", "check-dataset", "--json", page],
                    capture_output=True,
                    env=ENV,
                    check=False,
                )

            def html() -> None:
                requests.get(check, params={"url": page}, timeout=60).raise_for_status()

            def as_json() -> None:
                headers = {"Accept": "application/json"}
                requests.get(check, params={"url": page}, headers=headers, timeout=60).json()

            html()  # the first request warms the connection pool of the client only
            rows = [
                ("`adapter check-dataset --json URL` (new process)", timed(cli, args.runs)),
                ("`GET /check?url=URL` (HTML page)", timed(html, args.runs)),
                ("`GET /check?url=URL`, `Accept: application/json`", timed(as_json, args.runs)),
            ]
        finally:
            web.send_signal(signal.SIGTERM)
            web.wait(timeout=10)
    stop(servers)
    print("| how | median | min | max |\n| --- | --- | --- | --- |")
    for label, times in rows:
        ms = [t * 1000 for t in times]
        print(f"| {label} | {statistics.median(ms):.0f} ms | {min(ms):.0f} ms | {max(ms):.0f} ms |")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{args.runs} runs each; one landing page with a Link header, two link sets and "
        f"its JSON-LD, over 127.0.0.1.\nMachine: {os.cpu_count()} CPUs, {platform.machine()}, "
        f"Python {platform.python_version()}; load average {load} while measuring; "
        f"measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC."
    )


if __name__ == "__main__":
    main()
