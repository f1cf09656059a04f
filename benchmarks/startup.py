"""Start-up of `adapter --help` and `adapter --version`: the time to a prompt.

Runs each command `--runs` times in a fresh interpreter (the way a user runs
it) for this checkout and, with `--before DIR`, for another checkout of the
adapter (the code before a change), and writes the median, min and max wall
times and the adapter modules `--help` imported to the "## Start-up" section
of BENCHMARKS.md. `python -X importtime` shows where the time goes.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Start-up"
COMMANDS = (["--help"], ["--version"])
PROBE = (
    "import sys\nfrom adapter.cli import cli\ncli.main(['--help'], standalone_mode=False)\n"
    "print(len([m for m in sys.modules if m.startswith('adapter')]), file=sys.stderr)\n"
)


def timed(checkout: Path, args: list[str], runs: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "adapter", *args], env=env, capture_output=True, check=True
        )
        out.append(time.perf_counter() - start)
    return out


def adapter_modules(checkout: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return int(result.stderr.strip().splitlines()[-1])


def rows(label: str, checkout: Path, runs: int) -> list[str]:
    out = []
    for args in COMMANDS:
        times = timed(checkout, args, runs)
        out.append(
            f"| {label} | `adapter {' '.join(args)}` | {statistics.median(times):.3f} s | "
            f"{min(times):.3f} s | {max(times):.3f} s |"
        )
    out.append(
        f"| {label} | adapter modules imported by `--help` | {adapter_modules(checkout)} | | |"
    )
    return out


def write_section(text: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    start = doc.find(SECTION + "\n")
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        end = doc.find("\n## ", start + len(SECTION))
        doc = doc[:start] + text + ("\n" + doc[end + 1 :] if end >= 0 else "")
    path.write_text(doc)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--before", type=Path, help="another checkout to compare with")
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md")
    opts = ap.parse_args()
    table = ["| code | measure | median | min | max |", "| --- | --- | --- | --- | --- |"]
    if opts.before:
        table += rows("before", opts.before.resolve(), opts.runs)
    table += rows("this checkout", ROOT, opts.runs)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = (
        f"{SECTION}\n\n`benchmarks/startup.py`: `python -m adapter --help` and `--version` in a "
        f"fresh interpreter, {opts.runs} runs each (wall clock). `--help` lists the verbs from\n"
        "`adapter.cli.COMMANDS` without importing them; before, it imported every command "
        "module\n(the pipeline, SQLAlchemy, the Member Node API).\n\n"
        + "\n".join(table)
        + f"\n\nMachine: {os.cpu_count()} CPUs, {platform.machine()}, Python "
        f"{platform.python_version()}; load average {load} while measuring; measured "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC.\n"
    )
    print(text)
    if not opts.no_write:
        write_section(text)


if __name__ == "__main__":
    main()
