"""CPU of the parent's writes: checked pages written by `commit_group` in groups of 8.

`capture DIR [PAGES]`: the synthetic repository (`benchmarks/synthrepo.py`, ISO copies on)
discovered into a SQLite store, its pages claimed and checked in this process; the checked
pages pickled to DIR/pages.pickle beside the store (DIR/store.db), nothing written yet.
`replay DIR [--profile OUT]`: a copy of that store, every page written as the sync's loop
writes them (`commit_group`, 8 a transaction); prints CPU ms a page (process time), so two
trees can be compared on the same pages (run one tree's venv on the other's pickles).

    .venv/bin/python benchmarks/write_path.py capture /tmp/wp 1000
    .venv/bin/python benchmarks/write_path.py replay /tmp/wp
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pickle
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OWNER = "bench:1"
GROUP = 8


def capture(out: Path, pages: int) -> None:
    from adapter.config.load import load_config
    from adapter.store import claims
    from adapter.store.db import Store
    from adapter.sync.fetchers import node_fetcher
    from adapter.sync.page import check_and_plan
    from adapter.sync.run import run_node
    from benchmarks import synthrepo
    from benchmarks.throughput import write_config

    out.mkdir(parents=True, exist_ok=True)
    site = Path(tempfile.mkdtemp(prefix="write-path-"))
    site.chmod(0o755)
    port = synthrepo.free_port()
    origin = f"http://127.0.0.1:{port}"
    synthrepo.generate(site / "site", pages, origin)
    server = synthrepo.serve(site / "site", port)
    try:
        cfg_path = write_config(
            out / "node.yaml", f"sqlite:///{out}/store.db", origin, 5000, 8, True
        )
        cfg = load_config(cfg_path)
        node = cfg.nodes[0]
        run_node(cfg, node, enqueue_only=True)
        store = Store.open(cfg.store_url)
        rows = claims.claim_due(store, node.id, OWNER, batch=pages, lease=timedelta(days=30))
        fetcher, _ = node_fetcher(store, node, OWNER)
        with fetcher:
            checked = [check_and_plan(node, fetcher, row) for row in rows]
        store.close()
    finally:
        server.stop()
        shutil.rmtree(site, ignore_errors=True)
    (out / "pages.pickle").write_bytes(pickle.dumps(checked, protocol=pickle.HIGHEST_PROTOCOL))
    print(f"{len(checked)} pages checked into {out}")


def replay(src: Path, profile: Path | None, keep: Path | None = None) -> dict[str, float]:
    from adapter.config.load import load_config
    from adapter.store.db import Store
    from adapter.sync.write import commit_group

    work = Path(tempfile.mkdtemp(prefix="write-path-run-"))
    try:
        shutil.copy(src / "store.db", work / "store.db")
        cfg = load_config(src / "node.yaml")
        node = cfg.nodes[0]
        store = Store.open(f"sqlite:///{work}/store.db")
        checked = pickle.loads((src / "pages.pickle").read_bytes())
        groups = [checked[i : i + GROUP] for i in range(0, len(checked), GROUP)]
        for group in groups[:4]:  # warm: statements compiled, caches filled
            commit_group(store, node, OWNER, group)
        timed = groups[4:]
        prof = cProfile.Profile(time.process_time) if profile else None
        began, wall = time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        for group in timed:
            outs = commit_group(store, node, OWNER, group)
            assert all(o.status == "harvested" for o in outs), [o.status for o in outs]
        if prof:
            prof.disable()
            prof.dump_stats(str(profile))
        cpu, wall = time.process_time() - began, time.perf_counter() - wall
        store.close()
        if keep:
            shutil.copy(work / "store.db", keep)
        n = sum(len(g) for g in timed)
        return {"pages": n, "cpu_ms_a_page": 1000 * cpu / n, "wall_ms_a_page": 1000 * wall / n}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("dir", type=Path)
    c.add_argument("pages", type=int, nargs="?", default=1000)
    r = sub.add_parser("replay")
    r.add_argument("dir", type=Path)
    r.add_argument("--profile", type=Path)
    r.add_argument("--keep", type=Path, help="copy the store written here (to compare)")
    args = ap.parse_args()
    if args.cmd == "capture":
        capture(args.dir, args.pages)
    else:
        print(json.dumps(replay(args.dir, args.profile, args.keep)))


if __name__ == "__main__":
    main()
