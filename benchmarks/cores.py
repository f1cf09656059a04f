"""Where the first sync leaves cores idle: a timeline of one `adapter sync`.

Serves the bench site (`benchmarks/synthrepo.py`) with nginx, its access log on with
millisecond times, and runs the first sync (SQLite, the node of `throughput.py`), sampling
every `--every` seconds the sync's process tree CPU (the parent's reaped children
included), nginx's and the machine's (/proc/stat). The phases come from what the sync did:
start-up until nginx's first request (robots.txt), discovery until the first landing page
was asked for, the checking children's start (their first CPU), the pages, the tail (from
the last page's request to the children's end) and the finish (to the process's exit).
Idle core-seconds of a phase: cores x its wall time - the CPU the sync and nginx used in it.

    .venv/bin/python benchmarks/cores.py [--pages 1500] [--runs 3] [--iso-copies]
        [--tree OTHER_CHECKOUT ...]   (alternating, run by run)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import synthrepo  # noqa: E402
from benchmarks.throughput import run_summary, write_config  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
CPUS = os.cpu_count() or 1
LOG_FORMAT = "log_format t '$msec $request_uri';\n  access_log {tmp}/access.log t;"


@dataclass
class Sample:
    t: float  # seconds since the sync started
    tree: float  # CPU seconds of the sync's processes so far
    nginx: float  # of nginx's
    machine: float  # busy CPU seconds of the whole machine so far
    processes: int  # live processes of the sync's tree
    runnable: int = 0  # threads of the sync's tree and nginx ready to run (state R)
    parent: float = 0.0  # CPU seconds of the sync's own process (its children apart)


@dataclass
class Timeline:
    samples: list[Sample] = field(default_factory=list)
    requests: list[tuple[float, str]] = field(default_factory=list)  # (seconds, path)
    wall: float = 0.0


def proc_cpu(pid: int, reaped: bool = False) -> tuple[float, list[int]]:
    """A process's CPU seconds (with its reaped children's) and its children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(c) for c in (task / "children").read_text().split()]
    return ticks / TICK, kids


def runnable(pids: list[int]) -> int:
    """Threads of these processes' trees that are running or waiting for a core: what the
    sync would keep busy on an idle machine, whatever else the machine runs."""
    found, stack = 0, list(pids)
    while stack:
        p = stack.pop()
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                found += (task / "stat").read_text().rsplit(")", 1)[1].split()[0] == "R"
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError):
            continue
    return found


def tree_cpu(pid: int) -> tuple[float, int]:
    total, count, stack, first = 0.0, 0, [pid], True
    while stack:
        p = stack.pop()
        try:
            cpu, kids = proc_cpu(p, reaped=True)
        except (OSError, IndexError, ValueError):
            continue
        if first or cpu > 0 or kids:
            total, count = total + cpu, count + 1
        first = False
        stack += kids
    return total, count


def machine_busy() -> float:
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / TICK


def nginx_cpu(pids: list[int]) -> float:
    return sum(tree_cpu(p)[0] for p in pids)


def sync_once(tree: Path, cfg: Path, tmp: Path, nginx: list[int], every: float) -> Timeline:
    log = tmp / "nginx" / "access.log"
    log.write_text("")
    line = Timeline()
    began_wall = time.time()
    began = time.perf_counter()
    proc = subprocess.Popen(
        [str(tree / ".venv/bin/python"), "-m", "adapter", "sync", "--config", str(cfg), "--json"],
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    last = 0.0
    while proc.poll() is None:
        t = time.perf_counter() - began
        cpu, count = tree_cpu(proc.pid)
        last = max(last, cpu)
        ready = runnable([proc.pid, *nginx])
        try:
            own = proc_cpu(proc.pid)[0]
        except (OSError, IndexError, ValueError):
            own = line.samples[-1].parent if line.samples else 0.0
        line.samples.append(Sample(t, last, nginx_cpu(nginx), machine_busy(), count, ready, own))
        time.sleep(every)
    out, err = proc.communicate()
    line.wall = time.perf_counter() - began
    if proc.returncode not in (0, 1):
        raise RuntimeError(err.decode()[-2000:])
    usage = _reaped()
    end = Sample(line.wall, max(last, usage), nginx_cpu(nginx), machine_busy(), 0)
    end.parent = line.samples[-1].parent if line.samples else 0.0
    line.samples.append(end)
    summary = run_summary(out.decode())
    assert summary["fetched"] > 0, summary
    for row in log.read_text().splitlines():
        stamp, path = row.split(" ", 1)
        line.requests.append((float(stamp) - began_wall, path))
    return line


_SEEN = [0.0]


def _reaped() -> float:
    """CPU of the sync processes this script waited for, since the last call."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    new, _SEEN[0] = total - _SEEN[0], total
    return new


def at(line: Timeline, t: float) -> Sample:
    """The sample nearest `t`."""
    return min(line.samples, key=lambda s: abs(s.t - t))


def phases(line: Timeline) -> list[tuple[str, float, float]]:
    """(name, start, end) of each phase, from the requests and the process count."""
    reqs = sorted(line.requests)
    first_req = reqs[0][0] if reqs else 0.0
    pages = [t for t, p in reqs if p.startswith("/dataset/")]
    first_page, last_page = (pages[0], pages[-1]) if pages else (first_req, first_req)
    many = [s.t for s in line.samples if s.processes > 1]
    kids_end = many[-1] if many else last_page
    return [
        ("start-up", 0.0, first_req),
        ("discovery", first_req, first_page),
        ("pages", first_page, last_page),
        ("tail", last_page, max(last_page, kids_end)),
        ("finish", max(last_page, kids_end), line.wall),
    ]


def cost(line: Timeline, start: float, end: float) -> tuple[float, float, float]:
    """(wall, sync+nginx CPU, machine busy) between two times."""
    a, b = at(line, start), at(line, end)
    if start == 0.0:
        a = Sample(0.0, 0.0, line.samples[0].nginx, line.samples[0].machine, 1)
    return end - start, (b.tree - a.tree) + (b.nginx - a.nginx), b.machine - a.machine


def wanted(line: Timeline, start: float, end: float) -> float:
    """Core-seconds the sync left unasked for between two times: cores minus its runnable
    threads (at most the cores), summed over the samples (what would sit idle on a quiet
    machine, measured under load)."""
    gap = 0.0
    for a, b in zip(line.samples, line.samples[1:], strict=False):
        lo, hi = max(a.t, start), min(b.t, end)
        if hi > lo:
            gap += (CPUS - min(CPUS, a.runnable)) * (hi - lo)
    return gap


def report(label: str, line: Timeline) -> dict[str, float]:
    print(f"-- {label}: wall {line.wall:.2f} s, load {os.getloadavg()[0]:.2f}")
    total_idle = 0.0
    out: dict[str, float] = {"wall": line.wall}
    for name, start, end in phases(line):
        wall, used, busy = cost(line, start, end)
        idle = CPUS * wall - used
        total_idle += idle
        out[name] = idle
        unasked = wanted(line, start, end)
        own = at(line, end).parent - (at(line, start).parent if start else 0.0)
        out[name + " unasked"] = unasked
        print(
            f"   {name:<10} {start:6.2f}-{end:6.2f} s  wall {wall:5.2f}  sync+nginx "
            f"{used:5.2f} cpu-s ({used / max(wall, 1e-9):.2f} cores, parent "
            f"{own / max(wall, 1e-9):.2f})  idle {idle:5.2f} "
            f"core-s  unasked {unasked:5.2f} core-s  machine {busy / max(wall, 1e-9):.2f} cores"
        )
    cpu = line.samples[-1].tree + line.samples[-1].nginx - line.samples[0].nginx
    out["idle"] = total_idle
    out["unasked"] = wanted(line, 0.0, line.wall)
    out["cpu"] = cpu
    print(
        f"   total idle {total_idle:.2f} core-s of {CPUS * line.wall:.2f}; unasked "
        f"{out['unasked']:.2f}; cpu {cpu:.2f} s"
    )
    return out


def bins(line: Timeline, width: float = 0.25) -> None:
    """Cores the sync (and nginx) used, per `width` seconds."""
    t = 0.0
    row, ready = [], []
    while t < line.wall:
        _, used, _ = cost(line, t, min(t + width, line.wall))
        row.append(f"{used / width:.1f}")
        ready.append(f"{CPUS - wanted(line, t, min(t + width, line.wall)) / width:.1f}")
        t += width
    print("   cores used per", width, "s:", " ".join(row))
    print("   cores asked per", width, "s:", " ".join(ready))


def tail(line: Timeline, width: float = 0.05) -> None:
    """The last second and a half: requests, cores used and asked, processes, per `width`."""
    reqs = sorted(line.requests)
    t = max(0.0, line.wall - 2.0)
    while t < line.wall:
        end = min(t + width, line.wall)
        _, used, _ = cost(line, t, end)
        got = [p for s, p in reqs if t <= s < end]
        pages = sum(p.startswith("/dataset/") for p in got)
        asked = CPUS - wanted(line, t, end) / max(end - t, 1e-9)
        print(
            f"   {t:6.2f} used {used / (end - t):.1f} asked {asked:.1f} procs "
            f"{at(line, t).processes} pages {pages} others {len(got) - pages}"
        )
        t = end


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=1500)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--every", type=float, default=0.025)
    ap.add_argument("--iso-copies", action="store_true")
    ap.add_argument("--bins", action="store_true", help="print the cores used per 0.25 s")
    ap.add_argument("--tail", action="store_true", help="print the last 2 s per 0.05 s")
    ap.add_argument("--tree", type=Path, action="append", default=[])
    args = ap.parse_args()
    trees = [*(t.resolve() for t in args.tree), ROOT]
    tmp = Path(tempfile.mkdtemp(prefix="adapter-cores-"))
    tmp.chmod(0o755)
    port = synthrepo.free_port()
    origin = f"http://127.0.0.1:{port}"
    synthrepo.generate(tmp / "site", args.pages, origin)
    conf = synthrepo.NGINX_CONF.replace("access_log off;", LOG_FORMAT)
    (tmp / "nginx").mkdir()
    (tmp / "nginx" / "nginx.conf").write_text(
        conf.format(tmp=tmp / "nginx", port=port, root=tmp / "site", origin=origin)
    )
    synthrepo._readable_by_workers(tmp / "site")
    (tmp / "nginx").chmod(0o777)
    nginx = subprocess.Popen(
        ["/usr/sbin/nginx", "-c", str(tmp / "nginx" / "nginx.conf"), "-p", str(tmp / "nginx")]
    )
    time.sleep(0.5)
    results: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    try:
        _reaped()
        for i in range(args.runs):
            for tree in trees:
                cfg = write_config(
                    tmp / f"c{i}.yaml", f"sqlite:///{tmp}/s-{i}-{len(results[tree])}-{tree.name}.db",
                    origin, 5000, 8, args.iso_copies,
                )  # fmt: skip
                line = sync_once(tree, cfg, tmp, [nginx.pid], args.every)
                results[tree].append(report(f"{tree} run {i}", line))
                if args.bins:
                    bins(line)
                if args.tail:
                    tail(line)
    finally:
        nginx.terminate()
        nginx.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    for tree, runs in results.items():
        keys = runs[0].keys()
        med = {k: statistics.median(r[k] for r in runs) for k in keys}
        print(f"== {tree}: medians " + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))


if __name__ == "__main__":
    main()
