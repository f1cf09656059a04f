"""Shared test fixtures: fixture sites over real HTTP on 127.0.0.1, store URLs."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Generator, Iterator

import pytest
from hypothesis import settings

from adapter.startup import collector_paused
from tests.support import runcache, zygote
from tests.support.clock import FakeClock
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.hypothesis_caches import warm_unicode_tables
from tests.support.timing import register as register_timings

# Bytecode is cached even where the environment sets PYTHONDONTWRITEBYTECODE (this machine's
# image does): without it every xdist worker assertion-rewrites every test module again (about
# 6 CPU-s each) and every `adapter` subprocess compiles the package anew. Popped before xdist
# starts its workers, so they and every process a test starts inherit it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# No per-example deadline: speed is measured in benchmarks/, never asserted; Hypothesis's default
# 200 ms failed property tests whenever a loaded machine paused one example (test_d1xml's
# identifiers at load ~21). A test's own @settings still sets its examples.
settings.register_profile("adapter", deadline=None)
settings.load_profile("adapter")


def pytest_configure(config: pytest.Config) -> None:
    register_timings(config)  # ADAPTER_TEST_TIMINGS=FILE: each test's wall and CPU (timing.py)
    warm_unicode_tables(config)  # once in the controller, not in every worker
    workers = getattr(config.option, "numprocesses", None)
    if isinstance(workers, int) and workers > 0 and not hasattr(config, "workerinput"):
        # xdist's controller: one zygote for every worker's `adapter` processes, not one
        # each (1.8 CPU-s of imports apiece; tests/support/zygote.py)
        config.add_cleanup(zygote.serve_workers())
        # and one folder for what the workers compute while collecting (runcache.py)
        config.add_cleanup(runcache.start())


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """The collector paused while the test modules are imported and their items built, then
    what they built frozen out of its later passes, as `adapter` does with its imports
    (adapter/startup.py): everything collection makes lives until the session ends, so
    the passes over it, during collection and each full one while the tests run (the two
    at the session's end included), free nothing."""
    with collector_paused():
        result = yield
    gc.freeze()
    return result


def pytest_sessionfinish(session: pytest.Session) -> None:
    # the PostgreSQL schemas `store_url` lent and took back (stores.py), if any test module
    # here imported it: not imported at the top, where the xdist controller, which runs no
    # test, paid SQLAlchemy's and psycopg's imports for nothing
    stores = sys.modules.get("tests.support.stores")
    if stores is not None:
        stores.drop_pooled_schemas()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules with the most `slow` tests first, so that xdist (`--dist loadfile
    --no-loadscope-reorder` hands out modules in this order) starts the long ones while the
    quick ones fill the gaps, instead of one worker starting the hostile corpus when the
    others are done. Stable, and the same in every worker (xdist requires one order).

    Without `--no-loadscope-reorder` (pyproject.toml) xdist sorts the modules by their number
    of tests instead: `tests/sync/test_outage.py`, one test of 7-8 s, then started last, at
    95 s of a 107 s suite, and held one worker ~6 s past the others."""
    slow: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        slow[module] = slow.get(module, 0) + (item.get_closest_marker("slow") is not None)
    items.sort(key=lambda item: -slow[item.nodeid.split("::")[0]])


@pytest.fixture
def serve_site() -> Iterator[Callable[[str], SiteServer]]:
    """`serve_site("name")` starts fixtures/sites/name on 127.0.0.1 and returns its server."""
    started: list[list[SiteServer]] = []

    def _start(name: str) -> SiteServer:
        servers = start_site(name)
        started.append(servers)
        return servers[0]

    yield _start
    for servers in started:
        stop(servers)


@pytest.fixture
def virtual_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Every fetcher and HostPacer made during the test, a command's own included, times its
    deadlines, retries and pace on a virtual clock (the process watchdog's, which both read):
    a backoff, a Retry-After or a host's turn costs nothing, and `clock.sleeps` says what was
    waited for."""
    from adapter.http import connections

    clock = FakeClock()
    monkeypatch.setattr(connections, "WATCHDOG", connections.Watchdog(clock))
    return clock


@pytest.fixture
def postgres_url() -> str:
    url = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("ADAPTER_TEST_POSTGRES_URL is not set (CI sets it; see .ci/run)")
    return url
