"""What the adapter says and stores, written to a folder, so two revisions can be diffed.

A speed-up must not change a byte of output. This writes, for the tree it runs
(`--tree`, default this checkout):
- `check/`: `adapter check-dataset URL` as text and as `--json` for every path of
  every fixture site (`fixtures/sites/*`: each file and each `_headers.json` rule)
  and every fixture page (`fixtures/pages/*`), run in this process;
- `sync/`: the store after a first sync of every fixture site with a sitemap and of
  a 40-page synthetic bench site (`benchmarks/synthrepo.py`, ISO copies on), under
  the default and the mnlite profile: records (object bytes and system metadata),
  series, identifiers, outbox, sysmeta log, frontier rows (the stored page report).

Servers listen on fixed ports (from `--port`), so URLs are alike in both runs;
times (ISO 8601 and SQL timestamps) are masked, nothing else. Rules that test
time or size (a hang, a trickle, a Retry-After to wait out, a generated body)
are left out.

    .venv/bin/python benchmarks/sameout.py /tmp/out-new
    .venv/bin/python benchmarks/sameout.py /tmp/out-old --tree /tmp/old-checkout
    diff -r /tmp/out-old /tmp/out-new
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TIMES = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?")
SLOW = {"mode", "answer_after"}
PAGES_TYPES = {".html": "text/html; charset=utf-8", ".jsonld": "application/ld+json"}


def mask(text: str) -> str:
    return TIMES.sub("<time>", text)


@contextmanager
def fixed_ports(first: int) -> Iterator[None]:
    """Servers started meanwhile take ports first, first + 1, ... in start order."""
    from tests.support import fixture_server

    ports = itertools.count(first)
    base = fixture_server._Server

    class Fixed(base):  # type: ignore[misc, valid-type]
        def __init__(self, address: tuple[str, int], handler: Any) -> None:
            super().__init__((address[0], address[1] or next(ports)), handler)

    setattr(fixture_server, "_Server", Fixed)  # noqa: B010 (a class, as the module names it)
    try:
        yield
    finally:
        setattr(fixture_server, "_Server", base)  # noqa: B010


def site_paths(root: Path) -> list[str]:
    """Every path a site answers: its rules (but slow ones) and its files."""
    rules: dict[str, Any] = {}
    headers = root / "_headers.json"
    if headers.exists():
        rules = json.loads(headers.read_text())
    slow = {p for p, r in rules.items() if _slow(r)}
    paths = set(rules) - slow
    for f in root.rglob("*"):
        rel = f.relative_to(root).as_posix()
        if f.is_file() and not rel.startswith("_"):
            paths.add("/" + rel)
    return sorted(paths - slow)


def _slow(rule: dict[str, Any]) -> bool:
    """A rule that tests time (a hang, a trickle, a Retry-After to wait out) or size."""
    waits = any(str(h[0]).lower() == "retry-after" for h in rule.get("headers", []))
    return bool(SLOW & set(rule)) or "generate" in rule or waits


def check_all(out: Path, port: int) -> int:
    from tests.support.cli import run_in_process
    from tests.support.fixture_server import FIXTURES, SITES, start_site, stop

    runs = 0
    work = Path(tempfile.mkdtemp(prefix="sameout-"))
    # fixture pages as one site of their own, each served with its type
    pages = work / "pages"
    (pages / "p").mkdir(parents=True)
    rules = {}
    for page in sorted((FIXTURES / "pages").iterdir()):
        if page.suffix in PAGES_TYPES:
            shutil.copy(page, pages / "p" / page.name)
            rules[f"/p/{page.name}"] = {
                "file": f"p/{page.name}",
                "content_type": PAGES_TYPES[page.suffix],
            }
    (pages / "_headers.json").write_text(json.dumps(rules))
    sites = [(s.name, SITES) for s in sorted(SITES.iterdir()) if s.is_dir()]
    with fixed_ports(port):
        for name, where in [*sites, ("pages", work)]:
            servers = start_site(name, where)
            try:
                for path in site_paths(where / name):
                    url = servers[0].url(path)
                    for flag in ("", "--json"):
                        began = time.monotonic()
                        ran = run_in_process(
                            ["check-dataset", *([flag] if flag else []), url], work
                        )
                        if time.monotonic() - began > 2:
                            print(f"slow: {time.monotonic() - began:.1f} s {url}", file=sys.stderr)
                        slug = re.sub(r"[^A-Za-z0-9.-]+", "_", path.strip("/")) or "root"
                        target = out / "check" / name / (slug + (".json" if flag else ".txt"))
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_text(
                            f"exit {ran.returncode}\n{mask(ran.stdout)}\n--stderr--\n"
                            f"{mask(ran.stderr)}"
                        )
                        runs += 1
            finally:
                stop(servers)
    shutil.rmtree(work, ignore_errors=True)
    return runs


TABLES = ("records", "series", "identifiers", "outbox", "sysmeta_log", "frontier", "page_codes")
SKIP_COLUMNS = {"lease_until", "claimed_by", "claimed_at", "id", "frontier_id", "seq"}


def dump_store(url: str, target: Path) -> None:
    from sqlalchemy import select

    from adapter.store import schema as t
    from adapter.store.db import Store

    store = Store.open(url, create=False)
    try:
        with store.engine.connect() as conn:
            for name in TABLES:
                table = getattr(t, name)
                cols = [c for c in table.c if c.name not in SKIP_COLUMNS]
                rows = [
                    {c.name: _plain(v) for c, v in zip(cols, row, strict=True)}
                    for row in conn.execute(select(*cols))
                ]
                rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
                text = json.dumps(rows, indent=1, sort_keys=True, ensure_ascii=False)
                (target / f"{name}.json").write_text(mask(text))
    finally:
        store.close()


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | memoryview):
        data = bytes(value)
        try:
            return data.decode()
        except UnicodeDecodeError:
            return data.hex()
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


BENCH_PAGES = 40


def _bench_rule(i: int, origin: str) -> dict[str, Any]:
    """A bench page as nginx serves it in `benchmarks/synthrepo.py`: with signposts."""
    link = (
        f'<https://doi.org/10.5072/bench.{i}>; rel="cite-as", <{origin}/metadata/{i}.xml>; '
        'rel="describedby"; type="application/xml"; profile="http://www.isotc211.org/2005/gmd", '
        f'<{origin}/files/{i}/data.csv>; rel="item"; type="text/csv", '
        '<https://schema.org/Dataset>; rel="type"'
    )
    return {"file": f"dataset/{i}.html", "content_type": "text/html", "headers": [["Link", link]]}


def sync_all(out: Path, port: int) -> int:
    from adapter.config.load import quick_node
    from adapter.config.settings import AdapterConfig
    from adapter.sync.run import run_node
    from benchmarks import synthrepo
    from tests.support.fixture_server import SITES, start_site, stop

    work = Path(tempfile.mkdtemp(prefix="sameout-sync-"))
    synced = 0
    bench = work / "bench"
    origin = f"http://127.0.0.1:{port + 900}"
    synthrepo.generate(bench / "bench", BENCH_PAGES, origin)
    rules = {f"/dataset/{i}": _bench_rule(i, origin) for i in range(BENCH_PAGES)}
    (bench / "bench" / "_headers.json").write_text(json.dumps(rules))
    sites = [
        (s.name, SITES)
        for s in sorted(SITES.iterdir())
        if (s / "sitemap.xml").exists() and s.name != "sync-slow"  # pages answer in 20 s
    ]
    with fixed_ports(port + 500):
        for name, where in [*sites, ("bench", bench)]:
            for profile in ("dataone", "mnlite"):
                if name == "bench":
                    with fixed_ports(port + 900):
                        servers = start_site(name, where)
                else:
                    servers = start_site(name, where)
                try:
                    db = work / f"{name}-{profile}.db"
                    node = quick_node(
                        servers[0].url("/sitemap.xml"),
                        "urn:node:SAME",
                        dataone={"sync_metadata_copy": True},
                        politeness={"requests_per_second": 1000, "concurrency": 1},
                        checks={"profile": profile},
                    )
                    config = AdapterConfig(store_url=f"sqlite:///{db}", nodes=(node,))
                    began = time.monotonic()
                    summary = run_node(config, node).as_dict()
                    spent = time.monotonic() - began
                    if spent > 2:
                        print(f"slow: {spent:.1f} s sync {name} {profile}", file=sys.stderr)
                    target = out / "sync" / f"{name}-{profile}"
                    target.mkdir(parents=True, exist_ok=True)
                    for key in ("run_id", "started_at", "finished_at", "duration_s"):
                        summary.pop(key, None)
                    (target / "summary.json").write_text(
                        mask(json.dumps(summary, indent=1, sort_keys=True))
                    )
                    dump_store(f"sqlite:///{db}", target)
                    synced += 1
                finally:
                    stop(servers)
    shutil.rmtree(work, ignore_errors=True)
    return synced


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--port", type=int, default=21000, help="the first of ~1,000 ports used")
    ap.add_argument("--only", choices=("check", "sync"))
    args = ap.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    import adapter

    assert Path(adapter.__file__).resolve().is_relative_to(args.tree.resolve()), adapter.__file__
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    if args.only != "sync":
        print(f"check-dataset runs: {check_all(args.out, args.port)}")
    if args.only != "check":
        print(f"stores: {sync_all(args.out, args.port)}")


if __name__ == "__main__":
    main()
