"""Instructions a first sync costs, counted by callgrind: a figure the machine's load does not move.

A first sync's wall and CPU time drift by up to 15 % within minutes on a shared 2-core
machine, and identical trees differ by 4 % over eight alternating runs (BENCHMARKS.md, round
12): more than most changes to the sync are worth. `valgrind --tool=callgrind` counts the
instructions each process runs, within ~0.5 % from run to run whatever else the machine
does. This script runs the first sync of a small synthetic repository
(`benchmarks/synthrepo.py`, ISO copies on, nginx on 127.0.0.1, 2 checking processes as on
the bench) under it, for this tree and a baseline tree taking turns, and prints millions of
instructions a page: the parent, the other processes (the checking children), and in all.

Instructions are not time: cache misses, the kernel's work and waiting are not in them. And
the sync runs ~50 times slower under callgrind, so what it does on a clock (the pacer's
turns, polls with a timeout, threads waiting for work) happens more or less often than
without: a change to threads or waits counts wrongly (2 checking threads a child instead of 8
counted +12 %, where whole syncs spent ~3 % less CPU). Use it for changes to the work a page
costs, beside `throughput.py`. A baseline is any checkout beside this one
(`git worktree add /tmp/base HEAD~1`); both run on this tree's venv.

    .venv/bin/python benchmarks/instructions.py [--pages 200] [--rounds 1] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import synthrepo  # noqa: E402
from benchmarks.sections import write_section  # noqa: E402
from benchmarks.throughput import run_summary, write_config  # noqa: E402

TITLE = "## Instructions a first sync costs"
THIS = "this tree"
COLLECTED = re.compile(r"^==(\d+)== Collected : (\d+)$", re.MULTILINE)
TIMEOUT = 1800  # seconds for one sync under callgrind (about 50 times slower than without)


@dataclass(frozen=True)
class Count:
    """One sync's instructions: its own process's, and the rest of its tree's."""

    parent: int
    others: int

    @property
    def total(self) -> int:
        return self.parent + self.others


def counted_sync(tree: Path, config: Path, work: Path, pages: int) -> Count:
    """The first sync of `config` with `tree`'s code, under callgrind."""
    command = [
        "valgrind", "--tool=callgrind", "--trace-children=yes",
        # a forked child starts with its parent's counts: zeroed where it starts on its own
        "--zero-before=PyOS_AfterFork_Child",
        f"--callgrind-out-file={work}/callgrind.%p",
        sys.executable, "-m", "adapter", "sync", "--config", str(config), "--json",
        "--processes", "2",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree)}  # `-m adapter` imports the tree's code
    done = subprocess.Popen(
        command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = done.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        done.kill()
        done.communicate()
        raise RuntimeError(f"the sync under callgrind took over {TIMEOUT} s") from None
    if done.returncode != 0 or run_summary(out)["new_objects"] != 3 * pages:
        raise RuntimeError(f"the sync under callgrind failed ({done.returncode}):\n{err[-3000:]}")
    counts = {int(pid): int(n) for pid, n in COLLECTED.findall(err)}
    if done.pid not in counts or len(counts) < 3:  # the parent and its two checking children
        raise RuntimeError(f"callgrind counted {len(counts)} processes:\n{err[-3000:]}")
    parent = counts.pop(done.pid)
    return Count(parent, sum(counts.values()))


def table(runs: dict[str, list[Count]], pages: int, base: str | None) -> list[str]:
    """A row per run and the median per tree, in millions of instructions a page."""

    def per_page(n: float) -> str:
        return f"{n / pages / 1e6:.2f}"

    rows = ["| tree | run | parent | other processes | in all |", "| --- | --- | --- | --- | --- |"]
    medians: dict[str, float] = {}
    for label, counts in runs.items():
        for i, c in enumerate(counts, 1):
            rows.append(
                f"| {label} | {i} | {per_page(c.parent)} | {per_page(c.others)} "
                f"| {per_page(c.total)} |"
            )
        medians[label] = statistics.median(c.total for c in counts)
    lines = [*rows, ""]
    for label, median in medians.items():
        lines.append(f"- {label}: {per_page(median)} million instructions a page (median).")
    if base is not None and len(medians) == 2:
        ratio = medians[THIS] / medians[base]
        lines.append(f"- {THIS} / {base}: {ratio:.4f} ({(ratio - 1) * 100:+.2f} %).")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=1, help="runs per tree, taking turns")
    ap.add_argument("--baseline", type=Path, help="a checkout to compare with")
    ap.add_argument("--no-write", action="store_true", help="print, do not edit BENCHMARKS.md")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    trees = {THIS: ROOT}
    base = None
    if args.baseline is not None:
        base = f"baseline ({args.baseline.name})"
        trees[base] = args.baseline.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="adapter-instructions-"))
    tmp.chmod(0o755)  # nginx's workers read the tree as nobody
    port = synthrepo.free_port()
    origin = f"http://127.0.0.1:{port}"
    synthrepo.generate(tmp / "site", args.pages, origin)
    server = synthrepo.serve(tmp / "site", port)
    runs: dict[str, list[Count]] = {label: [] for label in trees}
    try:
        for r in range(args.rounds):
            for i, (label, tree) in enumerate(trees.items()):
                work = tmp / f"run-{r}-{i}"
                work.mkdir()
                store = f"sqlite:///{work}/store.db"
                config = write_config(work / "node.yaml", store, origin, 5000, 8, iso=True)
                runs[label].append(counted_sync(tree, config, work, args.pages))
                print(label, r + 1, runs[label][-1], flush=True)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join(
        [
            TITLE,
            "",
            f"`benchmarks/instructions.py`: the first sync of {args.pages} synthetic pages with "
            "ISO copies (nginx on 127.0.0.1, 2 checking processes) under "
            "`valgrind --tool=callgrind --trace-children=yes`, every process's instructions "
            "counted; millions a page. "
            f"Command: `.venv/bin/python benchmarks/instructions.py {' '.join(sys.argv[1:])}`; "
            f"measured {when} on {os.cpu_count()} CPUs, Python {sys.version.split()[0]}.",
            "",
            *table(runs, args.pages, base),
        ]
    )
    print(text)
    if not args.no_write:
        write_section(TITLE, text + "\n")


if __name__ == "__main__":
    main()
