"""CPU time of the science-on-schema.org recommendations (`check_soso`) per Dataset.

Reads every fixture landing page of ours (fixtures/pages/*.html and the
fixtures/sites/page-*/dataset/ pages), extracts and normalizes each once, then
times `check_soso` alone over all the framed Datasets, many rounds. CPU time,
so the machine's load does not count. Prints one JSON object.

    .venv/bin/python benchmarks/soso_checks.py [ROUNDS]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def corpus() -> list[tuple[str, Any]]:
    from adapter.jsonld.normalize import normalize
    from adapter.page.extract import extract

    pages = sorted((ROOT / "fixtures" / "pages").glob("*.html"))
    for site in sorted((ROOT / "fixtures" / "sites").glob("page-*")):
        pages += sorted(p for p in (site / "dataset").glob("**/*") if p.is_file())
    out: list[tuple[str, Any]] = []
    for path in pages:
        url = f"https://repo.example/{path.name}"
        kind = "application/ld+json" if path.suffix in (".jsonld", ".json") else "text/html"
        found = extract(path.read_bytes(), url=url, content_type=kind, charset=None)
        if found.blocks:
            datasets, _ = normalize(found.blocks, base_url=url)
            out += [(url, d.framed) for d in datasets]
    return out


def main(rounds: int) -> dict[str, Any]:
    from adapter.dataone.soso.rules import check_soso

    datasets = corpus()
    findings = sum(len(check_soso(framed, url)) for url, framed in datasets)  # warm
    began = time.process_time()
    for _ in range(rounds):
        for url, framed in datasets:
            check_soso(framed, url)
    spent = time.process_time() - began
    calls = rounds * len(datasets)
    return {
        "datasets": len(datasets),
        "findings_per_dataset": round(findings / max(len(datasets), 1), 1),
        "rounds": rounds,
        "us_per_dataset": round(spent / calls * 1e6, 1),
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)))
