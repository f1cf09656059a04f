"""A sync process killed mid-run (SIGKILL) loses nothing and duplicates nothing.

The site has enough pages, paced slowly enough, that the kill lands while pages
are being processed; the test checks it did (some records, not all). A rerun
then ends with exactly the records of an uninterrupted run of the same site.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from adapter.config.load import load_config
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.frontier import frontier_rows
from adapter.sync.run import run_node
from tests.support.fixture_server import SITES, SiteServer, start_site, stop
from tests.support.zygote import adapter_popen

PAGES = 30  # at 25 requests a second, over a second of pages after the fifth record
NODE_ID = "urn:node:MANY"
ROOT = Path(__file__).resolve().parents[2]


def build_site(tmp: Path) -> Path:
    root = tmp / "sites" / "sync-many"
    shutil.copytree(SITES / "sync-many", root)
    template = (root / "_template.html").read_text("utf-8")
    (root / "station").mkdir()
    urls = []
    for n in range(1, PAGES + 1):
        page = template.replace("{n}", str(n)).replace("{d}", str(1 + n % 9))
        (root / "station" / f"{n}.html").write_text(page, "utf-8")
        urls.append(
            f"  <url><loc>https://repo.example/station/{n}</loc>"
            f"<lastmod>2024-03-0{1 + n % 9}</lastmod></url>"
        )
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        + "\n".join(urls)
        + "\n</urlset>\n"
    )
    (root / "sitemap.xml").write_text(sitemap, "utf-8")
    rules = ",\n".join(
        f'"/station/{n}": {{"file": "station/{n}.html"}}' for n in range(1, PAGES + 1)
    )
    (root / "_headers.json").write_text("{" + rules + "}", "utf-8")
    return root


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SiteServer]:
    build_site(tmp_path)
    servers = start_site("sync-many", tmp_path / "sites")
    yield servers[0]
    stop(servers)


def write_config(path: Path, store: Path, server: SiteServer) -> Path:
    path.write_text(
        f"""
store_url: "sqlite:///{store}"
nodes:
  - id: {NODE_ID}
    name: Many Stations Archive
    start:
      robots_urls: ["{server.url("/robots.txt")}"]
    politeness:
      requests_per_second: 25
      concurrency: 2
    checks:
      profile: mnlite  # the pages have no ISO metadata copy (the dataone profile's requirement)
    dataone:
      submitter: "http://orcid.org/0000-0002-1825-0097"
      rights_holder: "CN=many,DC=dataone,DC=org"
      contact_subject: "http://orcid.org/0000-0002-1825-0097"
""",
        "utf-8",
    )
    return path


def count(store_path: Path) -> int:
    if not store_path.exists():
        return 0
    try:
        store = Store.open(f"sqlite:///{store_path}", create=False)
    except Exception:
        return 0  # the schema is not there yet
    try:
        return store.count_records(NODE_ID)
    finally:
        store.close()


def snapshot(store_path: Path) -> list[tuple[object, ...]]:
    """Everything about the records that must not depend on timing."""
    store = Store.open(f"sqlite:///{store_path}", create=False)
    recs = store.list_objects(NODE_ID, count=10_000)[1]
    store.close()
    return sorted(
        (
            r.pid,
            r.series_id,
            r.checksum,
            r.size,
            r.source_url,
            r.obsoletes,
            r.obsoleted_by,
            r.archived,
            r.format_id,
        )
        for r in recs
    )


@pytest.mark.slow
def test_sigkill_mid_run_then_rerun_matches_an_uninterrupted_run(
    tmp_path: Path, server: SiteServer
) -> None:
    reference_db, killed_db = tmp_path / "reference.db", tmp_path / "killed.db"
    reference_cfg = load_config(write_config(tmp_path / "ref.yaml", reference_db, server))
    summary = run_node(reference_cfg, reference_cfg.nodes[0])
    assert summary.status == "ok" and summary.new_objects == 2 * PAGES  # Datasets and maps

    cfg = write_config(tmp_path / "killed.yaml", killed_db, server)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # a real process (the kill is the point), forked warm: its imports are not what is tested
    proc = adapter_popen(
        "sync",
        "--config",
        str(cfg),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while count(killed_db) < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    at_kill = count(killed_db)
    assert 5 <= at_kill < 2 * PAGES, "the kill must land mid-run"

    rerun = load_config(cfg)
    summary = run_node(rerun, rerun.nodes[0])
    assert summary.status == "ok"
    assert summary.new_objects == 2 * PAGES - at_kill  # only what was missing
    assert snapshot(killed_db) == snapshot(reference_db)

    store = Store.open(f"sqlite:///{killed_db}", create=False)
    pids = [r.pid for r in store.list_objects(NODE_ID, count=10_000)[1]]
    assert len(pids) == len(set(pids)) == 2 * PAGES
    events = store.outbox(NODE_ID)
    assert [e.event for e in events] == ["create"] * 2 * PAGES
    assert sorted(e.pid for e in events) == sorted(pids)
    rows = frontier_rows(store, NODE_ID)
    assert len(rows) == PAGES and {r.last_status for r in rows} == {"harvested"}
    with store.read() as conn:
        assert conn.execute(select(t.frontier.c.id).where(t.frontier.c.due.is_(True))).all() == []
        claimed = select(t.frontier.c.id).where(t.frontier.c.claimed_by.is_not(None))
        assert conn.execute(claimed).all() == []
    statuses = [r.status for r in store.runs(NODE_ID)]
    assert statuses == ["ok", "interrupted"]  # the killed run, closed by the rerun
    killed = store.runs(NODE_ID)[1].summary  # its counts were committed with its pages
    assert (killed["pages_seen"], killed["new_objects"]) == (PAGES, at_kill)
    store.close()
