"""Many repositories, one process: N polite hosts synced by one `adapter` process tree.

N generated repositories (`benchmarks/manyhosts.py`: one process, one selector
listener per loopback address 127.0.0.2..127.0.0.(N+1)), P pages each, each
allowing `--rate` requests per second: half by robots.txt `Crawl-delay`, half
by the node's `requests_per_second`. A few hosts are slow (answers take
seconds), failing (5xx) or paused (503 with Retry-After). One `adapter sync
--config` (all nodes) or `adapter schedule --now` process syncs them all.

From the servers' own request logs: aggregate pages per second against the
ideal (the sum of the allowed rates), the share of time each host was kept at
its allowed rate, each node's completion against its ideal, and violations:
two requests to one host closer than its interval less `TOLERANCE` (arrival
times are the kernel's receive timestamps, so the server's own scheduling does
not count; what is left is the adapter's own jitter between its pacer letting
a request go and the request's bytes leaving). From /proc: the peak RSS of
the adapter's whole process tree.

    python benchmarks/federation.py --nodes 20 --pages 30          # a minute
    python benchmarks/federation.py                                # 200 x 500, ~9 minutes
    python benchmarks/federation.py --memory 50,200 --memory-pages 60   # memory 50 -> 200 too
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.sections import write_section  # noqa: E402
from benchmarks.throughput import tree_rss_kb  # noqa: E402

TOLERANCE = 0.025  # seconds: server-side arrival jitter forgiven before a gap is a violation
SLOW_SECONDS = 3.0  # a slow host's answer time
SLOW_CONCURRENCY = 4  # its node setting: enough requests in flight to keep its rate
PAUSE_SECONDS = 10  # a paused host's Retry-After window
BIN = 5.0  # seconds per point of the plot
TITLE = "## Many repositories, one process"
SVG = ROOT / "docs" / "federation.svg"
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable
DATAONE = (
    "    dataone: {submitter: 'http://orcid.org/0000-0002-1825-0097', "
    "rights_holder: 'CN=bench,DC=dataone,DC=org', "
    "contact_subject: 'http://orcid.org/0000-0002-1825-0097'}\n"
)


def kinds(n: int, odd_hosts: bool = True) -> list[str]:
    """A few odd hosts (2 % of each kind, at least one), spread over the list; the rest ok."""
    out = ["ok"] * n
    if not odd_hosts:
        return out
    odd = max(1, n // 50)
    step = n // (3 * odd) or 1
    for j, kind in enumerate(k for k in ("slow", "failing", "paused") for _ in range(odd)):
        out[min(n - 1, j * step + 1)] = kind
    return out


def spec(
    n: int, pages: int, rate: float, port: int, odd_hosts: bool = True
) -> list[dict[str, Any]]:
    """The hosts: even ones paced by robots.txt Crawl-delay, odd ones by the node setting."""
    return [
        {
            "index": i,
            "address": f"127.0.0.{i + 2}" if i < 253 else f"127.0.{(i + 2) // 256}.{(i + 2) % 256}",
            "port": port,
            "kind": kind,
            "pages": pages,
            "crawl_delay": 1 / rate if i % 2 == 0 else None,
            "slow_seconds": SLOW_SECONDS,
            "pause_seconds": PAUSE_SECONDS,
        }
        for i, kind in enumerate(kinds(n, odd_hosts))
    ]


def config_text(hosts: list[dict[str, Any]], store: str, rate: float) -> str:
    lines = [f'store_url: "{store}"\nlog_level: WARNING\nnodes:\n']
    for h in hosts:
        origin = f"http://{h['address']}:{h['port']}"
        # robots.txt paces the even hosts: their node allows twice the rate, Crawl-delay binds
        rps = rate * 2 if h["crawl_delay"] else rate
        conc = SLOW_CONCURRENCY if h["kind"] == "slow" else 2
        lines.append(
            f"  - id: urn:node:FED{h['index']:03d}\n"
            f"    name: Federation {h['index']} ({h['kind']})\n"
            f"    start: {{robots_urls: ['{origin}/robots.txt']}}\n"
            f"    politeness: {{requests_per_second: {rps:g}, concurrency: {conc}}}\n"
            "    schedule: {interval_minutes: 1440}\n" + DATAONE
        )
    return "".join(lines)


def free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its descendants (those still alive)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / os.sysconf(
        "SC_CLK_TCK"
    )


@dataclass
class Run:
    via: str
    nodes: int
    pages: int
    rate: float
    odd_hosts: bool = True  # False: every host ok, so the sum of the allowed rates can be met
    seconds: float = 0.0  # the command's start to its end (schedule: to the last run's end)
    began: float = 0.0  # epoch seconds
    peak_rss_mb: float = 0.0
    peak_process_mb: float = 0.0
    peak_pss_mb: float = 0.0  # the tree's proportional set: shared pages counted once
    processes: int = 0  # most processes in the tree at once
    threads: int = 0  # most threads of the syncing process (the largest tree's root) at once
    adapter_cpu: float = 0.0
    server_cpu: float = 0.0
    load: float = 0.0
    log: list[tuple[int, float, str, int, int]] = field(default_factory=list)
    hosts: list[dict[str, Any]] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)


def measure(
    via: str,
    n: int,
    pages: int,
    rate: float,
    tmp: Path,
    store: str | None,
    workers: int = 2,
    odd_hosts: bool = True,
) -> Run:
    """Serve the hosts, sync them with one adapter process, collect both sides' figures."""
    port = free_port("127.0.0.2")
    hosts = spec(n, pages, rate, port, odd_hosts)
    work = Path(tempfile.mkdtemp(prefix=f"fed-{via}-{n}-", dir=tmp))
    (work / "spec.json").write_text(json.dumps({"hosts": hosts}))
    store_url = store or f"sqlite:///{work / 'store.db'}"
    cfg = work / "federation.yaml"
    cfg.write_text(config_text(hosts, store_url, rate))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [PYTHON, str(ROOT / "benchmarks" / "manyhosts.py"), str(work / "spec.json"),
         str(work / "requests.jsonl")],
        stdout=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert server.stdout is not None and server.stdout.readline().strip() == b"ready"
    run = Run(via, n, pages, rate, odd_hosts, hosts=hosts)
    run.began = time.time()
    began = time.monotonic()
    live: list[subprocess.Popen[bytes]] = []
    peak = [0, 0, 0, 0, 0]
    cpu: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:  # every adapter process at once, each with its children
        while not done.is_set():
            trees = [(p.pid, tree_rss_kb(p.pid)) for p in list(live) if p.poll() is None]
            peak[0] = max(peak[0], sum(t[1][0] for t in trees))
            peak[1] = max([peak[1], *(t[1][1] for t in trees)])
            pids = [q for pid, _ in trees for q in _tree(pid)]
            peak[2] = max(peak[2], len(pids))
            peak[3] = max(peak[3], sum(tree_pss_kb(pid) for pid, _ in trees))
            peak[4] = max([peak[4], *(_threads(pid) for pid, _ in trees)])
            for pid, _ in trees:
                cpu[pid] = max(cpu.get(pid, 0.0), sum(_safe_cpu(q) for q in _tree(pid)))
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    codes = []
    with (work / "adapter.err").open("w") as err:
        for phase in phases(via, cfg, workers):
            procs = [
                subprocess.Popen(
                    [PYTHON, "-m", "adapter", *args],
                    cwd=work,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                )
                for args in phase
            ]
            live[:] = procs
            if via == "schedule":
                _wait_for_runs(store_url, n, procs[0])
                run.seconds = time.monotonic() - began
                procs[0].send_signal(signal.SIGTERM)
            codes += [p.wait() for p in procs]
    if via != "schedule":
        run.seconds = time.monotonic() - began
    done.set()
    sampler.join()
    run.peak_rss_mb, run.peak_process_mb, run.processes = peak[0] / 1024, peak[1] / 1024, peak[2]
    run.peak_pss_mb, run.threads = peak[3] / 1024, peak[4]
    run.adapter_cpu = sum(cpu.values())
    run.server_cpu = cpu_seconds(server.pid)
    run.load = os.getloadavg()[0]
    server.send_signal(signal.SIGTERM)
    server.wait(60)
    run.log = [tuple(json.loads(line)) for line in (work / "requests.jsonl").open()]
    run.statuses = _statuses(store_url)
    if any(code not in (0, 1) for code in codes):
        raise RuntimeError(f"adapter {via} exited {codes}: see {work / 'adapter.err'}")
    return run


def phases(via: str, cfg: Path, workers: int) -> list[list[list[str]]]:
    """The adapter commands of each phase, those of one phase side by side."""
    if via == "sync":
        return [[["sync", "--config", str(cfg)]]]
    if via == "schedule":
        return [[["schedule", "--config", str(cfg), "--now"]]]
    work = ["worker", "--config", str(cfg), "--until-idle", "--poll-seconds", "1"]
    return [[["sync", "--config", str(cfg), "--enqueue-only"]], [work] * workers]


def _tree(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _threads(pid: int) -> int:
    try:
        return len(list(Path(f"/proc/{pid}/task").iterdir()))
    except OSError:
        return 0


def tree_pss_kb(pid: int) -> int:
    """Proportional set of a process tree: pages shared by forked processes counted once
    (the checking processes share what their fork server loaded)."""
    total = 0
    for p in _tree(pid):
        try:
            found = re.search(r"^Pss:\s+(\d+)", Path(f"/proc/{p}/smaps_rollup").read_text(), re.M)
        except OSError:
            continue
        total += int(found.group(1)) if found else 0
    return total


def _safe_cpu(pid: int) -> float:
    try:
        return cpu_seconds(pid)
    except (OSError, IndexError):
        return 0.0


def _engine(store_url: str) -> Any:
    from sqlalchemy import create_engine

    return create_engine(store_url)


def _wait_for_runs(store_url: str, n: int, proc: subprocess.Popen[bytes]) -> None:
    """Until every node has a finished run (the scheduler keeps running after them)."""
    from sqlalchemy import text

    engine = _engine(store_url)
    query = text("SELECT count(DISTINCT node_id) FROM runs WHERE status != 'running'")
    while proc.poll() is None:
        time.sleep(1.0)
        try:
            with engine.connect() as conn:
                if conn.execute(query).scalar_one() >= n:
                    break
        except Exception:  # the store not created yet
            continue
    engine.dispose()


def _statuses(store_url: str) -> dict[str, int]:
    from sqlalchemy import text

    engine = _engine(store_url)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT status, count(*) FROM runs GROUP BY status")).all()
    engine.dispose()
    return {str(s): int(c) for s, c in rows}


# -- figures from the servers' logs -------------------------------------------------------


def group_of(host: dict[str, Any]) -> str:
    if host["kind"] != "ok":
        return str(host["kind"])
    return "ok, Crawl-delay" if host["crawl_delay"] else "ok, node setting"


def ideal_seconds(host: dict[str, Any], rate: float) -> float:
    """The least time the host's run can take at its allowed rate: every request one interval."""
    requests = 2 + int(host["pages"])  # robots.txt, the sitemap, the pages
    extra = 0.0
    if host["kind"] == "failing":
        requests += len([i for i in range(host["pages"]) if i % 4 == 1])  # the 502s retried
    if host["kind"] == "slow":
        extra = float(host["slow_seconds"])  # the last answer's wait
    if host["kind"] == "paused":
        extra = float(host["pause_seconds"])
    return (requests - 1) / rate + extra


def analyse(run: Run) -> dict[str, Any]:
    """Everything the report says, from the servers' logs."""
    per_host: dict[int, list[tuple[float, str, int, int]]] = defaultdict(list)
    for index, t, what, status, early in run.log:
        per_host[index].append((t, what, status, early))
    interval = 1 / run.rate
    violations, gaps, kept, ratio, rates10 = 0, [], defaultdict(list), {}, []
    busy_rate = 0.0  # the hosts' achieved rates while each was busy, summed
    ok_done = 0.0  # seconds from the command's start to the last ok host's last request
    where: Counter[str] = Counter()  # violations by host group and the two requests' kinds
    for host in run.hosts:
        rows = sorted(per_host.get(host["index"], []))
        times = [r[0] for r in rows]
        gaps += [b - a for a, b in itertools.pairwise(times)]
        for a, b in itertools.pairwise(rows):
            if b[0] - a[0] < interval - TOLERANCE:
                violations += 1
                where[f"{group_of(host)}: {a[1]} {a[2]} -> {b[1]} {b[2]}"] += 1
        if len(times) > 1:
            span = times[-1] - times[0]
            if host["kind"] == "paused":
                span -= host["pause_seconds"]
            kept[group_of(host)].append(min(1.0, (len(times) - 1) * interval / max(span, 1e-9)))
            busy_rate += min(run.rate, (len(times) - 1) / max(span, 1e-9))
            rates10.append(_busiest(times, 10.0))
        done = (times[-1] - run.began) if times else float("inf")
        ratio[host["index"]] = done / ideal_seconds(host, run.rate)
        if host["kind"] == "ok":
            ok_done = max(ok_done, done)
    pages = [r for r in run.log if r[2] == "page"]
    ok_hosts = {h["index"] for h in run.hosts if h["kind"] == "ok"}
    ok_pages = sum(1 for r in pages if r[3] == 200)
    first = min(r[1] for r in run.log)
    last = max(r[1] for r in run.log)
    ideal_rate = len(run.hosts) * run.rate
    slowest = max(ratio, key=lambda i: ratio[i])
    return {
        "requests": len(run.log),
        "page_requests": len(pages),
        "pages_ok": ok_pages,
        "rate_end_to_end": len(pages) / run.seconds,
        # the ok hosts alone, from the command's start to the last one's last request: what
        # the adapter keeps while the odd hosts retry, wait and pause beside them
        "ok_rate": sum(1 for r in pages if r[0] in ok_hosts) / max(ok_done, 1e-9),
        "ok_ideal_rate": len(ok_hosts) * run.rate,
        "rate_window": len(run.log) / (last - first),
        "ideal_rate": ideal_rate,
        "busy_rate": busy_rate,
        # the least wall time: the slowest host's ideal (failing hosts' retried 502s, the
        # paused hosts' pause), every host kept at its rate from the first instant
        "ideal_wall": max(ideal_seconds(h, run.rate) for h in run.hosts),
        "violations": violations,
        "where": dict(where.most_common()),
        "min_gap": min(gaps) if gaps else None,
        "busiest_10s": max(rates10) if rates10 else 0.0,
        "early": sum(r[4] for r in run.log),
        "kept": {g: (min(v), statistics.median(v)) for g, v in sorted(kept.items())},
        "slowest": (slowest, run.hosts[slowest]["kind"], ratio[slowest]),
        "slowest_ok": max((ratio[h["index"]] for h in run.hosts if h["kind"] == "ok"), default=0.0),
        "series": _series(run),
    }


def _busiest(times: list[float], window: float) -> float:
    """The most requests in any `window` seconds, per second."""
    best, j = 0, 0
    for i, t in enumerate(times):
        while times[j] < t - window:
            j += 1
        best = max(best, i - j + 1)
    return best / window


def _series(run: Run) -> dict[str, list[float]]:
    """Landing pages answered 200 per second, per host group, in BIN-second bins."""
    groups = {h["index"]: group_of(h) for h in run.hosts}
    bins = int(run.seconds // BIN) + 1
    out: dict[str, list[float]] = {g: [0.0] * bins for g in sorted(set(groups.values()))}
    for index, t, what, status, _ in run.log:
        b = int((t - run.began) // BIN)
        if what == "page" and status == 200 and 0 <= b < bins:
            out[groups[index]][b] += 1 / BIN
    return out


def svg(series: dict[str, list[float]], title: str) -> str:
    """A small line chart: pages per second over time, one line per host group."""
    w, h, left, bottom, top, right = 720, 300, 50, 40, 30, 170
    points = max(len(v) for v in series.values())
    peak = max(max(v) for v in series.values()) or 1.0
    xs = (w - left - right) / max(1, points - 1)
    colours = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#8c564b"]

    def y(v: float) -> float:
        return top + (h - top - bottom) * (1 - v / peak)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{left}" y="18" font-size="14">{title}</text>',
        f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>',
        f'<text x="{left - 5}" y="{y(peak) + 4}" text-anchor="end">{peak:.0f}</text>',
        f'<text x="{left - 5}" y="{y(0) + 4}" text-anchor="end">0</text>',
        f'<text x="{(w - right + left) / 2}" y="{h - 8}" text-anchor="middle">'
        f"seconds since the start ({BIN:g}-s bins); pages/s answered 200</text>",
        f'<text x="{w - right}" y="{h - bottom + 15}" text-anchor="middle">'
        f"{(points - 1) * BIN:.0f}</text>",
    ]
    for k, (name, values) in enumerate(series.items()):
        colour = colours[k % len(colours)]
        line = " ".join(f"{left + i * xs:.1f},{y(v):.1f}" for i, v in enumerate(values))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>')
        parts.append(f'<text x="{w - right + 10}" y="{top + 16 * k + 10}" fill="{colour}">'
                     f"{name}</text>")  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# -- the report ---------------------------------------------------------------------------


def label(run: Run) -> str:
    ok = "" if run.odd_hosts else ", every host ok"
    if run.via == "workers":
        return f"`adapter sync --enqueue-only`, then `adapter worker` processes{ok}"
    return f"`adapter {run.via} --config`" + (" `--now`" if run.via == "schedule" else "") + ok


def verdict(ok: bool) -> str:
    return "meets" if ok else "misses"


def verdicts(runs: list[tuple[Run, dict[str, Any]]], test: Any) -> str:
    """Each run's verdict, in the columns' order."""
    return ", ".join(verdict(test(r, a)) for r, a in runs)


def report(runs: list[tuple[Run, dict[str, Any]]], command: str, memory: list[Run]) -> str:
    main_run = runs[0][0]
    healthy = [r for r, _ in runs if not r.odd_hosts]
    lines = [
        TITLE,
        "",
        f"`benchmarks/federation.py`: {main_run.nodes} generated repositories served on loopback "
        f"as distinct hosts (127.0.0.2 to 127.0.0.{main_run.nodes + 1}, one selector-loop process "
        f"for all of them, pages generated per request), {main_run.pages} landing pages each, "
        f"each allowing {main_run.rate:g} request/s: robots.txt `Crawl-delay` on half, the "
        f"node's `requests_per_second` on the others. 2 % of the hosts (at least one each) are "
        f"slow (answers take {SLOW_SECONDS:g} s; their nodes allow {SLOW_CONCURRENCY} in "
        "flight), failing (every 4th page 500, every 4th+1 a 502 once) or paused (after a "
        f"third of their pages, 503 with Retry-After for {PAUSE_SECONDS} s)"
        + (
            '; in the column marked "every host ok" there are none, so the sum of the '
            "allowed rates can be reached end to end (a failing host needs a quarter more "
            "requests, retried 502s, at the same rate, so with them the least wall time is theirs)"
            if healthy
            else ""
        )
        + ". One adapter process "
        "syncs them all into SQLite. Figures from the servers' own request logs; a violation is "
        f"two requests to one host closer than its interval less {TOLERANCE * 1000:.0f} ms "
        "(arrival times are the kernel receive timestamps of each request's first segment).",
        "",
        "| measure | " + " | ".join(label(r) for r, _ in runs) + " | target |",
        "| --- | " + " | ".join("---" for _ in runs) + " | --- |",
    ]

    def row(name: str, cells: list[str], target: str = "") -> None:
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {target} |")

    row("wall time (command start to the last node's end)",
        [f"{r.seconds:.1f} s" for r, _ in runs])  # fmt: skip
    row(
        "aggregate page requests/s, end to end, vs ideal (the sum of the allowed rates)",
        [
            f"{a['rate_end_to_end']:.1f} of {a['ideal_rate']:g} "
            f"({a['rate_end_to_end'] / a['ideal_rate']:.0%})"
            for _, a in runs
        ],
        f">= 90 % ({verdicts(runs, lambda r, a: a['rate_end_to_end'] >= 0.9 * a['ideal_rate'])})",
    )
    row(
        "the ok hosts' aggregate, end to end (command start to the last ok host's last "
        "request), vs the sum of their allowed rates",
        [
            f"{a['ok_rate']:.1f} of {a['ok_ideal_rate']:g} "
            f"({a['ok_rate'] / a['ok_ideal_rate']:.0%})"
            for _, a in runs
        ],
        f">= 90 % ({verdicts(runs, lambda r, a: a['ok_rate'] >= 0.9 * a['ok_ideal_rate'])})",
    )
    row(
        "wall time vs the least it can be (the slowest host's ideal, every host at its rate)",
        [
            f"{a['ideal_wall']:.0f} s of {r.seconds:.1f} s ({a['ideal_wall'] / r.seconds:.0%})"
            for r, a in runs
        ],
        f">= 90 % ({verdicts(runs, lambda r, a: a['ideal_wall'] >= 0.9 * r.seconds)})",
    )
    row(
        "the hosts' rates while each was busy, summed, vs ideal",
        [
            f"{a['busy_rate']:.1f} of {a['ideal_rate']:g} ({a['busy_rate'] / a['ideal_rate']:.0%})"
            for _, a in runs
        ],
        f">= 90 % ({verdicts(runs, lambda r, a: a['busy_rate'] >= 0.9 * a['ideal_rate'])})",
    )
    row(
        "all requests/s, first to last request",
        [f"{a['rate_window']:.1f} ({a['rate_window'] / a['ideal_rate']:.0%})" for _, a in runs],
    )
    row("requests / landing pages answered 200",
        [f"{a['requests']:,} / {a['pages_ok']:,}" for _, a in runs])  # fmt: skip
    row(
        "violations (server side)",
        [f"{a['violations']} (closest gap {a['min_gap']:.3f} s)" for _, a in runs],
        f"0 ({verdicts(runs, lambda r, a: a['violations'] == 0)})",
    )
    row("busiest host, most requests in any 10 s",
        [f"{a['busiest_10s']:.1f}/s" for _, a in runs], f"<= {main_run.rate:g}/s")  # fmt: skip
    row("requests inside a Retry-After the host announced", [str(a["early"]) for _, a in runs])
    for group in sorted({g for _, a in runs for g in a["kept"]}):
        row(f"time kept at the allowed rate, {group}: least / median host",
            [f"{a['kept'][group][0]:.0%} / {a['kept'][group][1]:.0%}" if group in a["kept"]
             else "" for _, a in runs])  # fmt: skip
    row(
        "slowest ok node: completion / its ideal",
        [f"{a['slowest_ok']:.2f}x" for _, a in runs],
        f"<= 1.5x ({verdicts(runs, lambda r, a: a['slowest_ok'] <= 1.5)})",
    )
    row("slowest node of any kind",
        [f"{a['slowest'][1]} {a['slowest'][2]:.2f}x" for _, a in runs])  # fmt: skip
    row(
        "peak RSS, whole process tree / largest process; the tree's PSS",
        [
            f"{r.peak_rss_mb:.0f} / {r.peak_process_mb:.0f} MB ({r.processes} processes); "
            f"{r.peak_pss_mb:.0f} MB"
            for r, _ in runs
        ],
        f"< 1 GB ({verdicts(runs, lambda r, a: r.peak_rss_mb < 1024)})",
    )
    row("CPU seconds: adapter tree / the servers",
        [f"{r.adapter_cpu:.0f} / {r.server_cpu:.0f}" for r, _ in runs])  # fmt: skip
    row("runs by status", [", ".join(f"{k} {v}" for k, v in r.statuses.items()) for r, _ in runs])
    row("load average (1 min) at the end", [f"{r.load:.1f}" for r, _ in runs])
    lines += memory_report(memory)
    lines += [
        "",
        f"![pages per second by host group](docs/{SVG.name})",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python "
        f"{platform.python_version()}; measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. "
        f"Command: `{command}`.",
        "",
    ]
    return "\n".join(lines)


def memory_report(memory: list[Run]) -> list[str]:
    """The memory runs as a table, and the two ratios that say whether memory is flat."""
    if len(memory) < 2:
        return []
    same_rate = [r for r in memory if r.rate == memory[0].rate]
    small, big = same_rate[0], same_rate[-1]
    lines = [
        "",
        f"Memory from {small.nodes} to {big.nodes} repositories (`adapter {small.via}`, the same "
        "hosts' mix; peaks sampled every 0.5 s). The checking processes start when the "
        "nodes' summed rates need them, so the tree's size follows that sum, not the number of "
        "repositories: the last rows keep the sum and change the number.",
        "",
        "| repositories | each allows | pages each | tree peak RSS (processes) | tree PSS "
        "| the syncing process (threads) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in memory:
        lines.append(
            f"| {r.nodes} | {r.rate:g}/s | {r.pages} | {r.peak_rss_mb:.0f} MB ({r.processes}) "
            f"| {r.peak_pss_mb:.0f} MB | {r.peak_process_mb:.0f} MB ({r.threads}) |"
        )
    per_repo = (big.peak_process_mb - small.peak_process_mb) / (big.nodes - small.nodes)
    grew = big.peak_process_mb / small.peak_process_mb
    lines += [
        "",
        f"At the same rate per host the syncing process is {grew:.2f}x "
        f"for {big.nodes / small.nodes:g}x the repositories ({per_repo * 1024:.0f} KB per extra "
        "repository).",
    ]
    same_sum = [r for r in memory if r.rate * r.nodes == big.rate * big.nodes and r is not big]
    if same_sum:
        other = same_sum[0]
        lines[-1] += (
            f" At the same summed rate ({big.rate * big.nodes:g} requests/s), {other.nodes} and "
            f"{big.nodes} repositories: the tree {big.peak_rss_mb / other.peak_rss_mb:.2f}x "
            f"(PSS {big.peak_pss_mb / other.peak_pss_mb:.2f}x)."
        )
    return lines


def memory_runs(counts: str | None, rate: float, pages: int) -> list[tuple[int, float, int]]:
    """(nodes, rate each, pages each): every count at `rate`, then every smaller count at
    the largest count's summed rate, its pages scaled so the run lasts as long."""
    sizes = sorted(int(c) for c in counts.split(",")) if counts else []
    out = [(n, rate, pages) for n in sizes]
    for n in sizes[:-1]:
        scale = sizes[-1] / n
        out.append((n, rate * scale, round(pages * scale)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--rate", type=float, default=1.0, help="requests/s each host allows")
    ap.add_argument(
        "--via",
        default="sync",
        help="comma-separated: sync (one `adapter sync --config`), schedule (one `adapter "
        "schedule --now`), workers (`sync --enqueue-only`, then --workers `adapter worker`s)",
    )
    ap.add_argument("--workers", type=int, default=2, help="adapter worker processes (workers)")
    ap.add_argument("--memory", help="comma-separated node counts to compare peak RSS (50,200)")
    ap.add_argument("--memory-pages", type=int, default=60, help="pages per node for --memory")
    ap.add_argument(
        "--healthy",
        action="store_true",
        help="also run the first --via with every host ok (the sum of the rates reachable)",
    )
    ap.add_argument("--store", help="a PostgreSQL URL (default: a fresh SQLite file)")
    ap.add_argument("--no-write", action="store_true", help="print, do not touch BENCHMARKS.md")
    ap.add_argument("--keep", type=Path, help="keep the stores, configs and logs under this folder")
    args = ap.parse_args()
    if args.nodes > 250:
        ap.error("at most 250 nodes (127.0.0.2 to 127.0.0.251)")
    vias = args.via.split(",")
    if not set(vias) <= {"sync", "schedule", "workers"}:
        ap.error("--via takes sync, schedule and workers")
    command = "python benchmarks/federation.py " + " ".join(sys.argv[1:])
    runs: list[tuple[Run, dict[str, Any]]] = []
    memory: list[Run] = []
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="federation-", dir=args.keep) as scratch:
        tmp = tempfile.mkdtemp(dir=args.keep) if args.keep else scratch
        for via in vias:
            run = measure(
                via, args.nodes, args.pages, args.rate, Path(tmp), args.store, args.workers
            )
            runs.append((run, analyse(run)))
            print(f"{via}: {run.seconds:.1f} s, {runs[-1][1]['rate_end_to_end']:.1f} pages/s, "
                  f"{runs[-1][1]['violations']} violations {runs[-1][1]['where']}, "
                  f"{run.peak_rss_mb:.0f} MB", flush=True)  # fmt: skip
        if args.healthy:
            run = measure(vias[0], args.nodes, args.pages, args.rate, Path(tmp), args.store,
                          args.workers, odd_hosts=False)  # fmt: skip
            runs.append((run, analyse(run)))
            print(f"every host ok: {run.seconds:.1f} s, "
                  f"{runs[-1][1]['rate_end_to_end']:.1f} pages/s", flush=True)  # fmt: skip
        for count, rate, pages in memory_runs(args.memory, args.rate, args.memory_pages):
            size = measure(vias[0], count, pages, rate, Path(tmp), args.store, args.workers)
            memory.append(size)
            print(f"{count} nodes x {pages} pages at {rate:g}/s: {size.peak_rss_mb:.0f} MB "
                  f"(syncing process {size.peak_process_mb:.0f} MB)", flush=True)  # fmt: skip
    text = report(runs, command, memory)
    print(text)
    if not args.no_write:
        write_section(TITLE, text)
        first = runs[0]
        title = f"{first[0].nodes} repositories, adapter {first[0].via}: pages/s by host group"
        SVG.write_text(svg(first[1]["series"], title))


if __name__ == "__main__":
    main()
