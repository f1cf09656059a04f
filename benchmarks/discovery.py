"""Discovery at the protocol's limits: an index of 20 gzip sitemaps x 50,000 URLs.

Run: .venv/bin/python benchmarks/discovery.py [--sitemaps 20] [--per-sitemap 50000]

Generates the sitemaps (every 10th URL with two Signmap `<rs:ln>` links and an
`<rs:md>`) into a temporary directory, serves them from a threaded stdlib HTTP
server on 127.0.0.1, and runs `discover()` over them in a child process, so
the child's peak RSS (getrusage RUSAGE_CHILDREN) is discovery's alone. Also
times the parser alone on one file, in-process, on one core. Writes the
figures to the "## Discovery" section of BENCHMARKS.md (only that section).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.sections import write_section  # noqa: E402

SECTION = "## Discovery"
TARGET_RSS_MB = 150
TARGET_RATE = 100_000


def generate(root: Path, origin: str, sitemaps: int, per_sitemap: int) -> None:
    """robots.txt -> sitemap_index.xml -> sitemaps/part-N.xml.gz."""
    (root / "sitemaps").mkdir(parents=True, exist_ok=True)
    index = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    ]
    for n in range(sitemaps):
        rows = [
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
            ' xmlns:rs="http://www.openarchives.org/rs/terms/">\n'
        ]
        for i in range(n * per_sitemap, (n + 1) * per_sitemap):
            loc = f"{origin}/dataset/{i:07d}"
            day = i % 28 + 1
            extra = ""
            if i % 10 == 0:
                extra = (
                    f'<rs:md hash="md5:{i:032x}" length="{4000 + i % 997}" type="text/html"/>'
                    f'<rs:ln rel="describedby" href="{loc}/metadata.jsonld"'
                    ' type="application/ld+json"/>'
                    f'<rs:ln rel="cite-as" href="https://doi.org/10.5072/bench.{i}"/>'
                )
            rows.append(
                f"<url><loc>{loc}</loc><lastmod>2024-{i % 12 + 1:02d}-{day:02d}T10:{i % 60:02d}:00Z"
                f"</lastmod>{extra}</url>\n"
            )
        rows.append("</urlset>\n")
        data = gzip.compress("".join(rows).encode(), compresslevel=6, mtime=0)
        (root / "sitemaps" / f"part-{n:02d}.xml.gz").write_bytes(data)
        index.append(f"<sitemap><loc>{origin}/sitemaps/part-{n:02d}.xml.gz</loc></sitemap>\n")
    index.append("</sitemapindex>\n")
    (root / "sitemap_index.xml").write_text("".join(index))
    (root / "robots.txt").write_text(
        f"User-agent: *\nAllow: /\nSitemap: {origin}/sitemap_index.xml\n"
    )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


def serve(root: Path) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def child(url: str) -> None:
    """Run discovery over `url`; print counts and timings as JSON."""
    from adapter.discovery.walk import discover
    from adapter.http.addresses import AddressPolicy
    from adapter.http.fetcher import Fetcher
    from adapter.models import SitemapEntry

    entries = links = findings = 0
    start = time.perf_counter()
    cpu = time.process_time()
    with Fetcher(policy=AddressPolicy([url])) as fetcher:
        for item in discover([url], fetcher):
            if isinstance(item, SitemapEntry):
                entries += 1
                links += len(item.links)
            else:
                findings += 1
    wall = time.perf_counter() - start
    print(
        json.dumps(
            {
                "entries": entries,
                "links": links,
                "findings": findings,
                "seconds": wall,
                "cpu_seconds": time.process_time() - cpu,
                "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def parse_only(path: Path, url: str) -> tuple[int, float]:
    """Parser alone on one gzip sitemap, in-process: (entries, CPU seconds), best of 3.

    CPU time, not wall time: on a shared machine the wall clock measures the
    neighbours too; one process on one core is what the target is about.
    """
    from adapter.discovery.sitemap import parse_sitemap
    from adapter.models import SitemapEntry

    body = path.read_bytes()
    best = float("inf")
    count = 0
    for _ in range(3):
        start = time.process_time()
        count = sum(1 for i in parse_sitemap(body, url) if isinstance(i, SitemapEntry))
        best = min(best, time.process_time() - start)
    return count, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sitemaps", type=int, default=20)
    ap.add_argument("--per-sitemap", type=int, default=50_000)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md")
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    total = args.sitemaps * args.per_sitemap
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = serve(root)
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        t0 = time.perf_counter()
        generate(root, origin, args.sitemaps, args.per_sitemap)
        gen_s = time.perf_counter() - t0
        gz_bytes = sum(p.stat().st_size for p in (root / "sitemaps").iterdir())
        print(f"generated {total:,} URLs in {gen_s:.1f} s ({gz_bytes / 1e6:.1f} MB gzip)")
        proc = subprocess.run(
            [sys.executable, __file__, "--child", origin + "/"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        result = json.loads(proc.stdout)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        first = root / "sitemaps" / "part-00.xml.gz"
        parsed, parse_s = parse_only(first, origin + "/sitemaps/part-00.xml.gz")
        server.shutdown()
    rate = result["entries"] / result["seconds"]
    cpu_rate = result["entries"] / result["cpu_seconds"]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    parse_rate = parsed / parse_s
    print(json.dumps(result), f"peak RSS {peak_mb:.1f} MB, parser {parse_rate:,.0f} URLs/s")
    ok_rss = "meets" if peak_mb < TARGET_RSS_MB else "MISSES"
    ok_rate = "meets" if parse_rate >= TARGET_RATE else "MISSES"
    rows = [
        ("measure", "value", "target"),
        ("---", "---", "---"),
        (
            "landing pages discovered",
            f"{result['entries']:,} (+ {result['links']:,} Signmap links)",
            f"{total:,}",
        ),
        (
            "wall time, end to end",
            f"{result['seconds']:.1f} s ({result['cpu_seconds']:.1f} s CPU)",
            "",
        ),
        ("URLs/s end to end (fetch + parse + dedup), wall clock", f"{rate:,.0f}", ""),
        ("URLs per CPU-second end to end (one process, one core)", f"{cpu_rate:,.0f}", ""),
        (
            "URLs per CPU-second, parser alone, one 50,000-URL gzip file",
            f"{parse_rate:,.0f}",
            f">= {TARGET_RATE:,} ({ok_rate})",
        ),
        (
            "peak RSS of the discovering process",
            f"{peak_mb:.0f} MB",
            f"< {TARGET_RSS_MB} MB ({ok_rss})",
        ),
    ]
    table = "".join(f"| {a} | {b} | {c} |\n" for a, b, c in rows)
    section = f"""{SECTION}

`benchmarks/discovery.py`: robots.txt -> sitemap index -> {args.sitemaps} gzip sitemaps x
{args.per_sitemap:,} URLs = {total:,} URLs (every 10th with an `<rs:md>` and two Signmap
`<rs:ln>`), {gz_bytes / 1e6:.1f} MB compressed, served by a threaded stdlib HTTP server on
127.0.0.1; `discover()` runs in a child process (fetch, gunzip, parse, lenient lastmod,
scope check, dedup across sitemaps).

{table}
Machine: {os.cpu_count()} CPUs (nproc), {platform.processor() or platform.machine()},
Python {platform.python_version()}, {platform.system()} {platform.release()};
load average {load} while measuring (other jobs share the machine, so wall time is
pessimistic; CPU time is the process's own); measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.
"""
    if not args.no_write:
        write_section(SECTION, section)
        print("wrote", ROOT / "BENCHMARKS.md")


if __name__ == "__main__":
    main()
