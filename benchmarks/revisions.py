"""This tree against an earlier revision, side by side in one run: did a change slow the adapter?

A refactor (issue 16 moved every module) must not cost start-up or per-page
time. Both trees run the same commands as subprocesses (`python -m adapter`,
their own code on PYTHONPATH), interleaved round by round so that the machine's
load falls on both alike; the figures are medians and the ratio this/base.

- `--help`: start-up of the command line;
- `check-dataset URL --json`: one landing page of the bundled demo site, end to end;
- `sync URL --store sqlite:///...`: the whole demo site into a fresh SQLite store.

Wall time and the child's CPU time (user + system) are both reported; CPU is
the steadier of the two on a busy machine. Writes the "## Revisions" section of
BENCHMARKS.md (only that section).

    .venv/bin/python benchmarks/revisions.py [--pair BASE..HEAD ...] [--rounds N] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapter.demo.server import DemoServer  # noqa: E402
from benchmarks.sections import write_section  # noqa: E402

SECTION = "## Revisions"
DEFAULT_BASE = "611b083"  # the last commit before the package layout (issue 16)


@dataclass
class Sample:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(tree: Path, args: list[str], sample: Sample) -> None:
    """One timed `python -m adapter ARGS` with `tree`'s code; exit 0 or 1 (a verdict) only."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cpu0, wall0 = child_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "adapter", *args],
        cwd=tree,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    sample.wall.append(time.perf_counter() - wall0)
    sample.cpu.append(child_cpu() - cpu0)
    if done.returncode not in (0, 1):
        tail = done.stderr.decode()[-2000:]
        raise SystemExit(f"{tree}: adapter {' '.join(args)} exited {done.returncode}:\n{tail}")


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(where), rev],
        check=True,
        capture_output=True,
    )
    return where


def measure(
    base: Path, rounds: int, site: DemoServer, scratch: Path, head: Path = ROOT
) -> dict[str, dict[str, Sample]]:
    page = site.url("/dataset/ocean-temperature-2019")
    commands = {
        "--help": lambda _tree, _i: ["--help"],
        "check-dataset (one page)": lambda _tree, _i: ["check-dataset", page, "--json"],
        "sync (demo site, fresh store)": lambda tree, i: [
            "sync",
            site.url("/"),
            "--store",
            f"sqlite:///{scratch / f'{tree.name}-{id(tree)}-{i}.db'}",
        ],
    }
    trees = {"base": base, "this": head}
    results = {name: {label: Sample() for label in trees} for name in commands}
    for i in range(rounds):
        order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
        for name, make in commands.items():
            for label, tree in order:
                run(tree, make(tree, i), results[name][label])
    return results


def table(results: dict[str, dict[str, Sample]], base_rev: str, head_rev: str) -> list[str]:
    lines = [
        f"| command | base {base_rev} wall / CPU (ms) | this {head_rev} wall / CPU (ms) "
        "| ratio this/base (CPU) |",
        "|---|---|---|---|",
    ]
    for name, by_tree in results.items():
        b, t = by_tree["base"], by_tree["this"]
        bw, bc = statistics.median(b.wall) * 1000, statistics.median(b.cpu) * 1000
        tw, tc = statistics.median(t.wall) * 1000, statistics.median(t.cpu) * 1000
        lines.append(f"| `{name}` | {bw:.0f} / {bc:.0f} | {tw:.0f} / {tc:.0f} | {tc / bc:.2f} |")
    return lines


def rev_name(rev: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True
    )
    return out.stdout.strip() or rev


def compare(pair: str, rounds: int, site: DemoServer, scratch: Path) -> list[str]:
    """One `BASE..HEAD` comparison as table lines (HEAD alone: this working tree)."""
    base_rev, _, head_rev = pair.partition("..")
    base = worktree(base_rev, scratch / f"base-{rev_name(base_rev)}")
    head = ROOT if head_rev in ("", "HEAD") else worktree(head_rev, scratch / f"head-{head_rev}")
    try:
        results = measure(base, rounds, site, scratch, head)
    finally:
        for tree in {base, head} - {ROOT}:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )
    label = rev_name("HEAD") + ("+" if _dirty() else "") if head is ROOT else rev_name(head_rev)
    return table(results, rev_name(base_rev), label)


def _dirty() -> bool:
    done = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD"], check=False)
    return done.returncode != 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pair",
        action="append",
        help=f"BASE..HEAD to compare (repeatable; HEAD empty: this tree); "
        f"default {DEFAULT_BASE}..HEAD",
    )
    ap.add_argument("--rounds", type=int, default=7, help="runs of each command per tree")
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md")
    args = ap.parse_args()
    tables: list[str] = []
    with tempfile.TemporaryDirectory(prefix="adapter-revisions-") as tmp, DemoServer() as site:
        for pair in args.pair or [f"{DEFAULT_BASE}..HEAD"]:
            tables += [f"`{pair}`:", "", *compare(pair, args.rounds, site, Path(tmp)), ""]
    lines = [
        SECTION,
        "",
        "Written by `benchmarks/revisions.py`: two trees run the same commands as subprocesses, "
        f"interleaved round by round, medians of {args.rounds} runs each. Measured "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.1f} at the end.",
        "",
        *tables,
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section(SECTION, "\n".join(lines))
        print("wrote", ROOT / "BENCHMARKS.md")


if __name__ == "__main__":
    main()
