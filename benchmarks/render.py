"""Rendered pages per second: the pool of browser contexts against one page at a time.

Run: .venv/bin/python benchmarks/render.py [--pages 60] [--serial 12] [--at-once 8]

Serves a generated site of JavaScript-built landing pages on 127.0.0.1, in three
kinds as real portals build them: the JSON-LD written at once from inlined state,
written after a fetch() of the record's API, and written after a deferred load of 1
to 2 s. Each page is fetched by the adapter's Fetcher and rendered by
`adapter.render` (Debian's chromium headless shell, or `--browser`), first one page
at a time, then by the pool (`--at-once` contexts, fed by as many threads as a
sync's page threads would be), in one run, each with a browser of its own. Reports
pages per second, the ratio, the CPU seconds the browser tree spent per page (a
figure the machine's other load does not change much), the CPU per page split by
process (chromium's browser process, renderers, GPU and utility processes,
Playwright's driver, and this Python: the adapter's routing and fetching, the
fixture server; and the memory sampler's own thread), and the memory of the browser
tree while the pool ran (RSS summed over the chromium processes, and PSS, which
counts shared pages once). Prints a Markdown table for BENCHMARKS.md, with how many
pages were read with their Dataset. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapter.http.addresses import AddressPolicy  # noqa: E402
from adapter.http.fetcher import Fetcher  # noqa: E402
from adapter.limits import Limits  # noqa: E402
from adapter.models import Fetched  # noqa: E402
from adapter.pipeline import get_page  # noqa: E402
from adapter.render.browser import BrowserService  # noqa: E402
from adapter.render.rendered import CHROMIUM, as_fetched  # noqa: E402
from tests.support.fixture_server import start_site, stop  # noqa: E402

KINDS = ("at-once", "after-fetch", "after-delay")
TICK = os.sysconf("SC_CLK_TCK")
SAMPLER = "the memory sampler"

SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Portal</title>
<link rel="stylesheet" href="/static/app.css"></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root" data-id="{id}" data-kind="{kind}" data-defer="{defer}"></div>{inline}
<script src="/static/app.js"></script></body></html>
"""
APP = """(function () {
  var root = document.getElementById("root");
  function write(record) {
    var s = document.createElement("script");
    s.type = "application/ld+json";
    s.text = JSON.stringify(record);
    document.head.appendChild(s);
    root.textContent = record.name;
  }
  function load() {
    if (window.__STATE__) { write(window.__STATE__); return; }
    fetch("/api/dataset/" + root.getAttribute("data-id") + ".json")
      .then(function (r) { return r.json(); }).then(write);
  }
  var defer = Number(root.getAttribute("data-defer"));
  if (defer > 0) setTimeout(load, defer); else load();
})();
"""


def dataset(ident: str) -> dict[str, object]:
    return {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "@id": f"https://repo.example/dataset/{ident}",
        "name": f"Benchmark dataset {ident}",
        "identifier": f"https://doi.org/10.5072/bench.{ident}",
        "description": "A generated record of the rendering benchmark.",
    }


def build_site(folder: Path, count: int) -> list[str]:
    """`count` pages per kind, and their API records; the paths, kinds interleaved."""
    site = folder / "render-bench"
    (site / "static").mkdir(parents=True)
    (site / "api" / "dataset").mkdir(parents=True)
    (site / "dataset").mkdir()
    (site / "static" / "app.js").write_text(APP)
    rules = {"/static/app.js": {"file": "static/app.js", "content_type": "application/javascript"}}
    paths = []
    for i in range(count):
        for kind in KINDS:
            ident = f"{kind}-{i}"
            record = dataset(ident)
            defer = 1000 + (i % 6) * 200 if kind == "after-delay" else 0
            inline = (
                f"\n<script>window.__STATE__ = {json.dumps(record)};</script>"
                if kind == "at-once"
                else ""
            )
            body = SHELL.format(id=ident, kind=kind, defer=defer, inline=inline)
            (site / "dataset" / f"{ident}.html").write_text(body)
            (site / "api" / "dataset" / f"{ident}.json").write_text(json.dumps(record))
            rules[f"/dataset/{ident}"] = {
                "file": f"dataset/{ident}.html",
                "content_type": "text/html; charset=utf-8",
            }
            paths.append(f"/dataset/{ident}")
    (site / "_headers.json").write_text(json.dumps(rules))
    return paths


# -- the browser tree, from /proc ------------------------------------------------------


def _stat(pid: int) -> tuple[int, str, float] | None:
    """(parent pid, name, CPU seconds: own and waited-for children) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    rest = text[text.rindex(")") + 2 :].split()
    ppid = int(rest[1])
    cpu = sum(int(x) for x in rest[11:15]) / TICK  # utime stime cutime cstime
    return ppid, name, cpu


def tree() -> dict[int, tuple[str, float]]:
    """Every live descendant of this process: pid -> (name, CPU seconds)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(int(entry))
            if got is not None:
                stats[int(entry)] = got
    mine = {os.getpid()}
    out: dict[int, tuple[str, float]] = {}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, name, cpu) in stats.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                out[pid] = (name, cpu)
                grew = True
    return out


def memory() -> tuple[int, int]:
    """(RSS, PSS) in bytes, summed over the chromium processes of this process's tree."""
    rss = pss = 0
    for pid, (name, _cpu) in tree().items():
        if "chrom" not in name:
            continue
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
        except OSError:
            continue
    return rss, pss


def browser_cpu() -> float:
    return sum(cpu for _name, cpu in tree().values())


def role(pid: int, name: str) -> str:
    """What a process of the tree is: Playwright's driver, chromium's browser process, or
    the kind its --type= says (renderer, gpu-process, utility:NetworkService, zygote...)."""
    try:  # chromium rewrites its command line as one string: split on spaces too
        words = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().split()
    except (OSError, UnicodeDecodeError):
        return name
    if "chrom" not in name:
        return "Playwright's driver" if name.startswith("node") else name
    flags = dict(w[2:].split("=", 1) for w in words if w.startswith("--") and "=" in w)
    kind = flags.get("type")
    if kind is None:
        return "chromium browser"
    if kind == "utility":
        return "utility:" + flags.get("utility-sub-type", "?").rsplit(".", 1)[-1]
    return kind


def cpu_by_role() -> dict[str, float]:
    """CPU seconds per role (`role`) of the tree's live processes (a reaped one's is in its
    parent's: a renderer's under zygote), and this process's own: the adapter's routing and
    fetching, the fixture server and the memory sampler (`run` tells the last apart)."""
    out: dict[str, float] = {}
    for pid, (name, cpu) in tree().items():
        key = role(pid, name)
        out[key] = out.get(key, 0.0) + cpu
    times = os.times()
    out["this Python"] = times.user + times.system
    return out


class Sampler:
    """The browser tree's memory every 0.25 s while a run lasts: peak and mean."""

    def __init__(self) -> None:
        self.samples: list[tuple[int, int]] = []
        self.cpu = 0.0  # CPU seconds of its own thread (smaps_rollup is costly to read)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.samples.append(memory())
        self.cpu = time.thread_time()


# -- the runs --------------------------------------------------------------------------


def run(
    service: BrowserService, pages: list[Fetched], fetcher: Fetcher, at_once: int
) -> dict[str, float]:
    """Render every page through `service`, `at_once` at a time; wall and CPU seconds."""

    def one(page: Fetched) -> bool:
        result = service.render(page, fetcher, at_once)
        out = as_fetched(page, result, static_dataset=False)
        found = out.rendered and b"Benchmark dataset" in out.body
        if not found:
            print(f"not rendered: {page.final_url}: {result.ended} after {result.seconds:.1f} s")
        return found

    service.render(pages[0], fetcher, at_once)  # the browser started, outside the clock
    roles0, cpu0, began = cpu_by_role(), browser_cpu(), time.perf_counter()
    with Sampler() as sampler, ThreadPoolExecutor(at_once) as threads:
        found = sum(threads.map(one, pages))
    wall = time.perf_counter() - began
    cpu = browser_cpu() - cpu0
    roles = {k: v - roles0.get(k, 0.0) for k, v in cpu_by_role().items()}
    roles["this Python"] -= sampler.cpu  # reported on its own: the benchmark's, not the adapter's
    roles[SAMPLER] = sampler.cpu
    rss = [r for r, _p in sampler.samples] or [0]
    pss = [p for _r, p in sampler.samples] or [0]
    return {
        "pages": len(pages),
        "found": found,
        "seconds": wall,
        "per_second": len(pages) / wall,
        "cpu_per_page": cpu / len(pages),
        "rss_peak": max(rss),
        "rss_mean": sum(rss) / len(rss),
        "pss_peak": max(pss),
        "launches": service.launches,
        **{f"role:{k}": v / len(pages) for k, v in roles.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=60, help="pages the pool renders")
    parser.add_argument("--serial", type=int, default=12, help="pages rendered one at a time")
    parser.add_argument("--at-once", type=int, default=8, help="the pool's contexts at once")
    parser.add_argument("--browser", default=CHROMIUM, help="the chromium to drive")
    args = parser.parse_args()
    per_kind = max(args.pages, args.serial) // len(KINDS) + 1
    with tempfile.TemporaryDirectory() as tmp:
        paths = build_site(Path(tmp), per_kind)
        servers = start_site("render-bench", Path(tmp))
        site = servers[0]
        try:
            limits = Limits().with_overrides({"render_budget": 10})
            fetcher = Fetcher(limits, policy=AddressPolicy([site.origin]))
            fetched = [get_page(fetcher, site.url(p)) for p in paths]
            pages = [f for f in fetched if isinstance(f, Fetched)]
            results = {}
            for name, count, at_once in (
                ("one at a time", args.serial, 1),
                (f"pool of {args.at_once}", args.pages, args.at_once),
            ):
                service = BrowserService(args.browser)
                try:
                    results[name] = run(service, pages[:count], fetcher, at_once)
                finally:
                    service.close()
        finally:
            stop(servers)
    report(results, args)


def report(results: dict[str, dict[str, float]], args: argparse.Namespace) -> None:
    mib = 1024 * 1024
    print(
        "| how | pages with their Dataset | seconds | pages/s | browser CPU s/page "
        "| browser RSS peak (mean) | PSS peak |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, r in results.items():
        print(
            f"| {name} | {r['found']:.0f} of {r['pages']:.0f} | {r['seconds']:.1f} "
            f"| {r['per_second']:.2f} | "
            f"{r['cpu_per_page']:.2f} | {r['rss_peak'] / mib:.0f} MiB "
            f"({r['rss_mean'] / mib:.0f}) | {r['pss_peak'] / mib:.0f} MiB |"
        )
    one, pool = list(results.values())
    print()
    for name, r in results.items():
        roles = sorted(((k[5:], v) for k, v in r.items() if k.startswith("role:")),
                       key=lambda kv: -kv[1])  # fmt: skip
        print(
            f"CPU ms/page, {name}, by process: "
            + ", ".join(f"{k} {v * 1000:.0f}" for k, v in roles if v >= 0.0005)
            + f"; in all but the sampler {sum(v for k, v in roles if k != SAMPLER) * 1000:.0f}"
        )
    print(f"pool / one at a time: {pool['per_second'] / one['per_second']:.1f}x")
    cores = os.cpu_count() or 1
    print(
        f"CPU-bound ceiling of the pool on {cores} free cores (cores / browser CPU s per "
        f"page, derived, not measured): {cores / pool['cpu_per_page']:.1f} pages/s"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python "
        f"{platform.python_version()}; load average {load} at the end; "
        f"measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC."
    )


if __name__ == "__main__":
    main()
