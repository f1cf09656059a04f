"""The check page under waitress, trusting the fixture sites it is asked about."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapter.commands.web import operator_view
from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.store.db import Store
from adapter.sync.outcome import RunSummary
from adapter.sync.run import run_node
from adapter.web.app import WebApp
from adapter.web.checking import Checker
from adapter.web.ratelimit import RateLimit
from tests.support import stores
from tests.support.browser import launch, playwright_driver
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.web import ServedWeb, serve_wsgi

MakeWeb = Callable[..., ServedWeb]


@pytest.fixture
def sites() -> Iterator[Callable[..., list[SiteServer]]]:
    """`sites("name", rules=None)`: every server of one fixture site (its main host first),
    `rules` added to its `_headers.json`."""
    started: list[list[SiteServer]] = []

    def _start(name: str, rules: dict[str, Any] | None = None) -> list[SiteServer]:
        servers = start_site(name, rules=rules)
        started.append(servers)
        return servers

    yield _start
    for servers in started:
        stop(servers)


@pytest.fixture
def make_web(tmp_path: Path) -> Iterator[MakeWeb]:
    """`make_web(trusted=[...], per_minute=30)`: the check page on an ephemeral port."""
    stack: list[tuple[object, RateLimit]] = []

    def _make(
        trusted: list[str] | tuple[str, ...] = (), per_minute: int = 30, deadline: float = 30.0
    ) -> ServedWeb:
        rate = RateLimit(tmp_path / f"rate-{len(stack)}.db", per_minute)
        app = WebApp(Checker(tuple(trusted), deadline=deadline), rate)
        context = serve_wsgi(app)
        served = context.__enter__()
        stack.append((context, rate))
        return served

    yield _make
    for context, rate in reversed(stack):
        context.__exit__(None, None, None)  # type: ignore[attr-defined]
        rate.close()


@pytest.fixture(scope="package")
def playwright() -> Iterator[Any]:
    """One Playwright driver for the browser tests of tests/web a worker runs (its sync API
    cannot nest). Package scope, not session: while it runs `asyncio.run` refuses in this
    thread, so it ends when the worker leaves tests/web (no test here uses asyncio)."""
    with playwright_driver() as pw:
        yield pw


@pytest.fixture(scope="package")
def chromium(playwright: Any) -> Iterator[Any]:
    """One chromium for test_browser.py and test_accessibility.py; each test opens contexts
    of its own in it (tests/support/browser.py's `fresh_context`): no state passes on."""
    launched = launch(playwright)
    try:
        yield launched
    finally:
        launched.close()


def origins(servers: list[SiteServer]) -> list[str]:
    return [s.origin for s in servers]


# -- the operator view: a store two real sync runs wrote -------------------------

NODE_ID = "urn:node:OPSTEST"
FAILURE = (
    '<error name="SynchronizationFailed" detailCode="6001">'
    '<description>bad <b>"x"</b></description></error>'
)


@dataclass
class World:
    web: ServedWeb
    store: Store
    node: NodeSettings
    runs: list[RunSummary]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The sync-change site synced twice, a failure report, the view served over it."""
    servers = start_site("sync-change")
    url = stores.sqlite_url(tmp_path_factory.mktemp("ops"))
    node = quick_node(
        servers[0].url("/sitemap.xml"),
        NODE_ID,
        name="Ops test repository",
        politeness={"requests_per_second": 200, "concurrency": 1},
        schedule={"interval_minutes": 60},
        checks={"profile": "mnlite"},  # most pages have no ISO copy (dataone's requirement)
    )
    config = AdapterConfig(store_url=url, nodes=(node,))
    runs = [run_node(config, node, processes=1) for _ in range(2)]
    store = Store.open(url, create=False)
    store.log_sync_failure(NODE_ID, "sha256:abc", FAILURE)
    app = WebApp(Checker(), None, operator_view(store, [node]))
    with serve_wsgi(app) as web:
        yield World(web, store, node, runs)
    store.close()
    stop(servers)
