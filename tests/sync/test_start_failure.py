"""A run that cannot reach its start is failed and says why; page counts live in the run row.

Over real HTTP: a robots.txt nobody answers, a sitemap that is not there, a
node whose sitemaps empty out after a run that listed pages, and the pages an
`adapter worker` processes for an enqueue-only run counted in that run.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapter.commands.worker import worker
from adapter.config.load import load_config, quick_node
from adapter.config.settings import AdapterConfig
from adapter.discovery.walk import start_failure
from adapter.store.db import Store
from adapter.sync.run import START_FAILED, run_node
from tests.support import stores
from tests.support.clock import FakeClock
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.workersite import NODE_ID, fixture_site, write_config

PAGES = 6


@pytest.fixture
def site(tmp_path: Path) -> Iterator[SiteServer]:
    fixture_site(tmp_path / "sites", "workers", PAGES)
    servers = start_site("workers", tmp_path / "sites")
    yield servers[0]
    stop(servers)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def quick(tmp_path: Path, url: str) -> AdapterConfig:
    node = quick_node(url, NODE_ID, politeness={"requests_per_second": 500})
    return AdapterConfig(store_url=stores.sqlite_url(tmp_path), nodes=(node,))


@pytest.mark.parametrize(
    ("seen", "codes", "previous", "failed"),
    [
        (0, {"robots/unreachable": 1}, 0, True),
        (0, {"discover/sitemap-unavailable": 1}, 0, True),
        (0, {"fetch/connection-failed": 2}, 0, True),
        (0, {"discover/no-sitemap": 1}, 0, True),
        (0, {"discover/sitemap-read": 1}, 5, True),  # read, but the pages are gone
        (0, {"discover/sitemap-read": 1}, 0, False),  # empty then, empty now
        (0, {"discover/sitemap-read": 1, "discover/sitemap-unavailable": 1}, 0, False),
        (3, {"robots/unreachable": 1}, 0, False),  # another host answered
        (3, {}, 9, False),
    ],
)
def test_start_failure_rule(seen: int, codes: dict[str, int], previous: int, failed: bool) -> None:
    assert (start_failure(seen, codes, "why", previous) is not None) is failed


def test_unreachable_robots_txt_fails_the_run_and_the_history_says_why(
    tmp_path: Path, virtual_clock: FakeClock
) -> None:
    cfg = quick(tmp_path, f"http://127.0.0.1:{closed_port()}/")
    summary = run_node(cfg, cfg.nodes[0])
    assert summary.status == "failed"
    assert summary.message is not None and "robots.txt" in summary.message
    assert START_FAILED.code in summary.discovery_findings
    store = Store.open(cfg.store_url, create=False)
    [run] = store.runs(NODE_ID)
    store.close()
    assert (run.status, run.error) == ("failed", summary.message)
    assert virtual_clock.sleeps  # the refused connection was retried, on virtual time


def test_a_missing_sitemap_fails_the_run(tmp_path: Path, site: SiteServer) -> None:
    cfg = quick(tmp_path, site.url("/no-such-sitemap.xml"))
    summary = run_node(cfg, cfg.nodes[0])
    assert summary.status == "failed"
    assert summary.message is not None and "no sitemap could be read" in summary.message


def test_zero_pages_after_a_run_that_saw_some_fails(tmp_path: Path, site: SiteServer) -> None:
    cfg = quick(tmp_path, site.url("/sitemap-0.xml"))
    first = run_node(cfg, cfg.nodes[0], enqueue_only=True)
    assert (first.status, first.pages_seen) == ("ok", PAGES)
    sitemap = tmp_path / "sites" / "workers" / "sitemap-0.xml"
    sitemap.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n</urlset>\n', "utf-8"
    )
    second = run_node(cfg, cfg.nodes[0], enqueue_only=True)
    assert second.status == "failed"
    assert second.message is not None and f"previous run listed {PAGES}" in second.message


def test_worker_pages_count_in_the_run_that_enqueued_them(tmp_path: Path, site: SiteServer) -> None:
    path = write_config(
        tmp_path / "node.yaml",
        stores.sqlite_url(tmp_path),
        site.url("/robots.txt"),
        rate=500,
        concurrency=2,
    )
    cfg = load_config(path)
    run_node(cfg, cfg.nodes[0], enqueue_only=True)
    result = CliRunner().invoke(worker, ["--config", str(path), "--until-idle"])
    assert result.exit_code == 0, result.output
    store = Store.open(cfg.store_url, create=False)
    [run] = store.runs(NODE_ID)
    store.close()
    assert run.status == "ok"
    counts = {k: run.summary[k] for k in ("pages_seen", "due", "fetched", "new_objects")}
    # one Dataset per page: its object and its resource map
    assert counts == {"pages_seen": PAGES, "due": PAGES, "fetched": PAGES, "new_objects": 2 * PAGES}
