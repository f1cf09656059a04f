"""CPU time per landing page, by stage: where a sync's time goes, whatever the machine's load.

Runs `adapter.sync.page.process_page` sequentially (one thread) over the due pages
of a node after an enqueue-only sync, with a CPU-time counter around each stage.
CPU time, not wall time: other jobs on a shared machine do not change it.
Prints one JSON object: total and per-stage milliseconds of CPU per page.

    .venv/bin/python benchmarks/cpu_stages.py CONFIG.yaml [PAGES]
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SPENT: dict[str, float] = defaultdict(float)
LABELS: list[str] = []


def timed(owner: Any, name: str, label: str, *, must_run: bool = True) -> None:
    """Count the CPU time of `owner.name` under `label` (nested stages count in both);
    `must_run`: a label that never ran means the hook is stale (the script stops)."""
    if must_run:
        LABELS.append(label)
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - began

    setattr(owner, name, wrapper)


def main(config: str, pages: int) -> dict[str, Any]:
    from pyld import jsonld

    import adapter.http.fetcher as fetch
    import adapter.jsonld.normalize as normalize
    import adapter.page.extract as extract_stage
    import adapter.pipeline.compose as pipeline
    import adapter.signposting.stage as signposting
    import adapter.sync.page as harvest
    import adapter.sync.write as write
    from adapter.config.load import load_config
    from adapter.store import claims
    from adapter.store.db import Store
    from adapter.sync.fetchers import node_fetcher
    from adapter.sync.run import run_node

    timed(fetch.Fetcher, "get", "fetch (HTTP, pacer)")
    timed(signposting, "collect", "signposting: collect links")
    timed(signposting, "crosscheck", "signposting: cross-check")
    timed(extract_stage, "extract", "extract (lxml, JSON-LD blocks)")
    timed(normalize, "_expand", "normalize: expand (fast path, else pyld)")
    timed(normalize, "_frame", "normalize: frame (fast path, else pyld)")
    # the bench site's Datasets all take the fast path: none may come here
    declined = "normalize: pyld frame (fast path declined)"
    timed(jsonld.JsonLdProcessor, "_frame", declined, must_run=False)
    timed(normalize, "normalize", "normalize (all)")
    timed(pipeline, "check_requirements", "DataONE checks")
    timed(pipeline, "check_soso", "science-on-schema.org recommendations")
    timed(harvest, "_plan", "records: canonical JSON, checksums")
    timed(write, "commit_checked", "store: one transaction per page")
    cfg = load_config(config)
    node = cfg.nodes[0]
    run_node(cfg, node, enqueue_only=True)
    store = Store.open(cfg.store_url)
    owner = claims.owner_id(0)
    fetcher, _robots = node_fetcher(store, node, owner)
    rows = claims.claim_due(store, node.id, owner, batch=pages + 20, lease=timedelta(hours=1))

    def process(row: Any) -> None:
        write.commit_checked(store, node, owner, harvest.check_and_plan(node, fetcher, row))

    for row in rows[:20]:  # warm caches (contexts, connections)
        process(row)
    SPENT.clear()
    began = time.process_time()
    done = rows[20 : 20 + pages]
    for row in done:
        process(row)
    total = time.process_time() - began
    missed = sorted(set(LABELS) - set(SPENT))
    if missed:  # a hook on a name the code no longer calls would report nothing, silently
        sys.exit(f"cpu_stages: these stages never ran, their hooks are stale: {missed}")
    fetcher.close()
    store.close()
    per_page = {k: round(v / len(done) * 1000, 2) for k, v in SPENT.items()}
    return {"pages": len(done), "total_ms": round(total / len(done) * 1000, 2), "stages": per_page}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300)))
