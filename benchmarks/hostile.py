"""The hostile corpus, measured: each case's limit, wall time and peak RSS per command.

Run: .venv/bin/python benchmarks/hostile.py [--parallel 12] [--only id,id]

Starts the hostile fixture server (fixtures/hostile/), runs every case through
real `adapter check-dataset`, `adapter discover` and `adapter sync` processes
(the same runner as tests/hostile/test_hostile.py), and writes RELIABILITY.md: per
case, what the server does, the limit that stops it, the finding each command
ended with, its wall time and its peak RSS. Wall times include the other
cases running at the same time (`--parallel`); run with `--parallel 1` for
uncontended figures. Not a test: nothing is asserted, outcomes are reported.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapter.limits import documented  # noqa: E402
from tests.support.hostile import (  # noqa: E402
    COMMANDS,
    Run,
    cases,
    load_corpus,
    problems,
    run_case,
    seed_store,
    start_corpus,
    stop,
    store_state,
)

OUT = ROOT / "RELIABILITY.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", type=int, default=12)
    parser.add_argument("--only", default="", help="comma-separated case ids")
    args = parser.parse_args()
    selected = [c for c in cases() if not args.only or c["id"] in args.only.split(",")]
    servers = start_corpus()
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            template = work / "template.db"
            seeded = seed_store(template, servers[0].origin, work)
            before = store_state(template)[1] if seeded else set()
            with ThreadPoolExecutor(args.parallel) as pool:
                batches = list(
                    pool.map(
                        lambda c: run_case(c, servers[0], work, template if seeded else None),
                        selected,
                    )
                )
        wall = time.monotonic() - started
        leaked = len(servers[1].log) + len(servers[2].log)
    finally:
        stop(servers)
    OUT.write_text(render(selected, batches, before, wall, leaked, args.parallel))
    print(f"wrote {OUT} ({len(selected)} cases, {wall:.0f} s)")


def render(
    selected: list[dict[str, Any]],
    batches: list[list[Run]],
    seeded: set[str],
    wall: float,
    leaked: int,
    parallel: int,
) -> str:
    defaults = load_corpus()["defaults"]
    runs = [r for batch in batches for r in batch]
    failures = 0
    lines = [
        "# Reliability: the hostile corpus",
        "",
        "Written by `benchmarks/hostile.py`; the same cases run in CI as "
        "`tests/hostile/test_hostile.py`.",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{len(selected)} cases x {len(COMMANDS)} commands as real `adapter` processes, "
        f"{parallel} at a time, {wall:.0f} s in all. Times are wall-clock under that load "
        "(a case's wall limit, 20 s unless it names another; the quadratic-parser cases also "
        "have a CPU budget, which the machine's load does not change); "
        "peak RSS is each process's own (ru_maxrss).",
        "",
        "Every case is served by `tests/support/fixture_server.py` (its mode or generator is named "
        "in `fixtures/hostile/cases.json`); the case's small limits are passed as `ADAPTER_LIMITS` "
        "to check-dataset and discover and as the node's `limits:` to sync. Each sync runs into "
        "a copy of a SQLite store already holding the good site's records.",
        "",
        "| case | what the server does | limit | command | finding | s | MB | ok |",
        "|---|---|---|---|---|---:|---:|---|",
    ]
    by_case = {c["id"]: c for c in selected}
    for run in runs:
        case = by_case[run.case]
        found = problems(case, run, defaults)
        if run.store is not None:
            integrity, urls = run.store
            if integrity != "ok" or not seeded <= urls:
                found.append("store damaged")
        failures += bool(found)
        expected = case["expect"][run.command]
        shown = ", ".join(f"`{c}`" for c in expected) or "none (recovers)"
        first = run.command == COMMANDS[0]
        lines.append(
            f"| {run.case if first else ''} | {_cell(case['what']) if first else ''} "
            f"| {case['limit'] if first else ''} | {run.command} | {shown} "
            f"| {run.seconds:.1f} | {run.rss_mb:.0f} | {'yes' if not found else '; '.join(found)} |"
        )
    peak = max((r.rss_mb for r in runs), default=0)
    worst = max(runs, key=lambda r: r.seconds) if runs else None
    slow = f"{worst.case} / {worst.command} {worst.seconds:.1f} s" if worst else "-"
    lines += [
        "",
        f"Runs: {len(runs)}; not as expected: {failures}; highest peak RSS {peak:.0f} MB; "
        f"slowest {slow}; requests that reached an origin the operator did not name: {leaked}.",
        "",
        "## The limits",
        "",
        "Defaults (`adapter/limits.py`); each is settable per node under `limits:` and, for "
        'commands run without a configuration, in `ADAPTER_LIMITS="name=value,..."`.',
        "",
        "| limit | default | unit | bounds |",
        "|---|---:|---|---|",
    ]
    for name, default, unit, doc in documented():
        lines.append(f"| `{name}` | {default} | {unit} | {_cell(doc)} |")
    lines += [
        "",
        "Fixed by the HTTP client: a response header line over 65,536 bytes or more than 100 "
        "header fields ends the fetch with `fetch/headers-too-large`.",
        "",
    ]
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Table-safe Markdown: no raw tags, no column breaks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("|", "/")


if __name__ == "__main__":
    main()
