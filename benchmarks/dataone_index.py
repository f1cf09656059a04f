"""CPU time of DataONE search's view of a Dataset (`adapter.dataone.index`), beside normalize.

Reads every fixture landing page of ours (as benchmarks/soso_checks.py does),
extracts and normalizes each once, then times, in one run and interleaved
round by round, (a) normalize over the pages' blocks, (b) the indexer's
preparation (pyld expand/compact/expand and the RDF graph) and (c) the whole
index (preparation, SPARQL queries, findings) per Dataset. CPU time, so the
machine's load does not count. Writes its section of BENCHMARKS.md and prints
one JSON object.

    .venv/bin/python benchmarks/dataone_index.py [ROUNDS]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TITLE = "## DataONE search's view of a Dataset (dataone_index)"


def corpus() -> list[tuple[str, Any, Any]]:
    """(url, the page's JSON-LD blocks, one normalized Dataset) for each Dataset."""
    from adapter.jsonld.normalize import normalize
    from adapter.page.extract import extract

    pages = sorted((ROOT / "fixtures" / "pages").glob("*.html"))
    for site in sorted((ROOT / "fixtures" / "sites").glob("page-*")):
        pages += sorted(p for p in (site / "dataset").glob("**/*.html") if p.is_file())
    out: list[tuple[str, Any, Any]] = []
    for path in pages:
        url = f"https://repo.example/{path.name}"
        found = extract(path.read_bytes(), url=url, content_type="text/html", charset=None)
        if found.blocks:
            datasets, _ = normalize(found.blocks, base_url=url)
            out += [(url, found.blocks, d) for d in datasets]
    return out


def main(rounds: int) -> dict[str, Any]:
    from adapter.dataone.index.prepare import prepared, to_graph
    from adapter.dataone.index.rules import index_dataset
    from adapter.jsonld.normalize import normalize

    datasets = corpus()
    for url, _, d in datasets:  # warm: the queries are parsed once per process
        index_dataset(d.original, d.framed, url)
    spent = {"normalize": 0.0, "prepare": 0.0, "index": 0.0}
    for _ in range(rounds):
        began = time.process_time()
        for url, blocks, _ in datasets:
            normalize(blocks, base_url=url)
        spent["normalize"] += time.process_time() - began
        began = time.process_time()
        for _, _, d in datasets:
            to_graph(prepared(d.original))
        spent["prepare"] += time.process_time() - began
        began = time.process_time()
        for url, _, d in datasets:
            index_dataset(d.original, d.framed, url)
        spent["index"] += time.process_time() - began
    calls = rounds * len(datasets)
    ms = {k: round(v / calls * 1000, 2) for k, v in spent.items()}
    return {
        "datasets": len(datasets),
        "rounds": rounds,
        "ms_per_dataset": ms,
        "index_over_normalize": round(ms["index"] / ms["normalize"], 1),
    }


def section(result: dict[str, Any]) -> str:
    ms = result["ms_per_dataset"]
    return (
        f"{TITLE}\n\n"
        f"CPU per Dataset (`benchmarks/dataone_index.py`: {result['datasets']} Datasets of our "
        f"fixture pages, {result['rounds']} rounds, the three measured side by side in each "
        "round; CPU time, so the machine's load does not count):\n\n"
        "| what | ms of CPU per Dataset |\n| --- | --- |\n"
        f"| normalize (the page's blocks to framed Datasets) | {ms['normalize']} |\n"
        f"| the indexer's preparation (pyld expand, compact, expand; RDF graph) | "
        f"{ms['prepare']} |\n"
        f"| the whole index: preparation, SPARQL queries, findings | {ms['index']} |\n\n"
        f"The index costs {result['index_over_normalize']}x normalize, which is why the sync "
        "computes it only when a node asks (`checks.dataone_index`, the soso profile, or a "
        "`required` entry under dataone/index-); check-dataset and the check page always do.\n"
    )


if __name__ == "__main__":
    from benchmarks.sections import write_section

    result = main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
    write_section(TITLE, section(result))
    print(json.dumps(result))
