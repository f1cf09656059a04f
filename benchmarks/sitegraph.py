"""A sitegraph against the same Datasets as landing pages, side by side in one run.

    .venv/bin/python -m benchmarks.sitegraph [--datasets 2000] [--graph 20000]

Generates N Datasets (each with a DOI, a description, a distribution) published two ways
on one loopback server: one JSON-LD sitegraph (`@graph`), and N HTML landing pages in a
sitemap. Each node's first sync runs into a SQLite store of its own at the same politeness
(500 requests/s, concurrency 4, one process), the two taking turns for `--rounds`;
printed: requests to the server, records written (Datasets and their resource maps), wall
seconds, CPU seconds of this process, Datasets checked per second. Then the reading of one
graph of `--graph` Datasets alone: its size, CPU seconds and the peak of Python's
allocations (tracemalloc) while it is cut into documents.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig
from adapter.discovery.sitegraph import read_sitegraph
from adapter.limits import Limits
from adapter.models import Fetched
from adapter.sync.run import run_node
from tests.support.fixture_server import start_site, stop


def dataset(i: int) -> dict[str, object]:
    return {
        "@type": "Dataset",
        "@id": f"https://repo.example/ds/{i}",
        "url": f"https://repo.example/ds/{i}",
        "name": f"Ocean observation series {i}",
        "description": f"Hourly observations of station {i}, quality controlled. " * 3,
        "identifier": f"https://doi.org/10.5072/bench.{i}",
        "license": "https://creativecommons.org/licenses/by/4.0/",
        "keywords": ["oceanography", f"station {i}"],
        "distribution": {
            "@type": "DataDownload",
            "contentUrl": f"https://repo.example/files/{i}.csv",
            "encodingFormat": "text/csv",
        },
    }


def graph_bytes(n: int) -> bytes:
    doc = {"@context": {"@vocab": "https://schema.org/"}, "@graph": [dataset(i) for i in range(n)]}
    return json.dumps(doc).encode()


def write_site(root: Path, n: int) -> None:
    site = root / "bench"
    (site / "ds").mkdir(parents=True)
    (site / "graph.jsonld").write_bytes(graph_bytes(n))
    locs = []
    for i in range(n):
        block = json.dumps({"@context": "https://schema.org/", **dataset(i)})
        page = f'<html><head><script type="application/ld+json">{block}</script></head></html>'
        (site / "ds" / str(i)).write_text(page)
        locs.append(f"<url><loc>https://repo.example/ds/{i}</loc></url>")
    urlset = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    (site / "sitemap.xml").write_text(f"{urlset}{''.join(locs)}</urlset>")
    (site / "robots.txt").write_text("User-agent: *\nAllow: /\n")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def sync(root: Path, url: str, name: str, server_log: list[object]) -> dict[str, float]:
    node = quick_node(
        url,
        f"urn:node:{name}",
        politeness={"requests_per_second": 500, "concurrency": 4},
        checks={"profile": "mnlite"},
    )
    config = AdapterConfig(store_url=f"sqlite:///{root / name}.db", nodes=(node,))
    before, wall, cpu0 = len(server_log), time.monotonic(), cpu()
    summary = run_node(config, node, processes=1)
    wall, used = time.monotonic() - wall, cpu() - cpu0
    assert summary.status == "ok", summary.as_dict()
    return {
        "requests": len(server_log) - before,
        "datasets": summary.new_objects,
        "wall_s": round(wall, 2),
        "cpu_s": round(used, 2),
        "per_s": round(summary.fetched / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--graph", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_site(root, args.datasets)
        servers = start_site("bench", root)
        results: list[tuple[str, dict[str, float]]] = []
        try:
            log: list[object] = servers[0].log  # type: ignore[assignment]
            for turn in range(args.rounds):  # taking turns: a loaded machine hits both alike
                for name, path in (("sitegraph", "/graph.jsonld"), ("pages", "/sitemap.xml")):
                    store = f"{name.upper()}{turn}"
                    results.append((name, sync(root, servers[0].url(path), store, log)))
        finally:
            stop(servers)
    print(f"{args.datasets} Datasets, first sync, SQLite, 500 req/s, concurrency 4, 1 process")
    for name, got in results:
        print(f"  {name:<10} {json.dumps(got)}")
    for key in ("per_s", "cpu_s"):
        graph = sum(got[key] for name, got in results if name == "sitegraph")
        pages = sum(got[key] for name, got in results if name == "pages")
        print(f"  {key} graph/pages, summed over the rounds: {graph / pages:.2f}")
    body = graph_bytes(args.graph)
    url = "https://repo.example/graph.jsonld"
    fetched = Fetched(url, url, 200, {"content-type": "application/ld+json"}, body)
    tracemalloc.start()
    cpu0 = cpu()
    read = read_sitegraph(fetched, Limits())
    used = cpu() - cpu0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"read_sitegraph: {len(read.datasets)} Datasets, {len(body) / 1e6:.1f} MB: "
        f"{used:.2f} s CPU, peak Python allocations {peak / 1e6:.0f} MB (tracemalloc)"
    )


if __name__ == "__main__":
    main()
