"""The hostile corpus in parts, one per test module, so that the suite's workers share it.

The corpus is about 190 `adapter` processes, judged on their wall time: in one
module (`--dist loadfile`) they all ran on one worker, and that worker was the
suite's last. Each part (`tests/hostile/test_hostile_corpus_*.py`) runs every
`SHARDS`-th case, a few at once; the locked-SQLite scenario has a module of its own.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.fixture_server import SiteServer
from tests.support.hostile import (
    Run,
    argv_for,
    cases,
    node_config,
    run_case,
    seed_store,
    start_corpus,
    stop,
    store_state,
)
from tests.support.zygote import WarmProcess, adapter_popen, shared

# cases run at once by one part: each is judged on its wall time, so at 12 on a slow machine's
# two cores (beside the suite's other workers) the sync cases took 20-25 s of their 20 s cap for
# their neighbours' CPU when each process paid its imports (1-2 s of CPU); forked from the
# zygote a case's three processes take about 0.2 s of CPU (medians: check-dataset and discover
# 0.03 s, sync 0.14 s; a few large-input cases 1-2 s) and spend the rest waiting on the case's
# small time caps, so a part runs 6 at once.
PARALLEL = int(os.environ.get("ADAPTER_HOSTILE_PARALLEL", "6"))
SHARDS = 3
SLOW_PAGE = "/store/slow"  # trickles: holds a sync for total_timeout while we strike
SLOW_PAGES = "/store/pages.xml"  # the slow page, then /good/1
STORE_LIMITS = {"total_timeout": 1, "read_timeout": 1, "max_retries": 0}


@dataclass
class Results:
    servers: list[SiteServer]
    runs: dict[tuple[str, str], Run]
    seeded: set[str]


def sync_available() -> bool:
    try:
        import adapter.commands.sync  # noqa: F401
    except ImportError:
        return False
    return True


def start_sync(site: SiteServer, store: str, workdir: Path, path: str) -> WarmProcess:
    """`adapter sync` of `path` into `store`, its output (stderr too) on `.stdout`: a real
    process (another holds or ends its store's connections), forked warm by the shared
    zygote (tests/support/zygote.py), not a new interpreter's 1.5 s of imports."""
    config = node_config(
        workdir / f"{uuid.uuid4().hex}.yaml", site.url(path), Path("x"), STORE_LIMITS
    )
    argv = [*argv_for("sync", site.url(path), config), "--store", store]
    return adapter_popen(*argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wait_for_request(site: SiteServer, path: str, since: int, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(r.path == path for r in site.log[since:]):
            return
        time.sleep(0.02)
    raise AssertionError(f"the sync never asked for {path}")


def locked_sqlite_scenario(site: SiteServer, workdir: Path) -> dict[str, Any]:
    """Seed a store; lock the file from another connection while a sync works on it;
    release it once the sync has said the store is locked; then sync again."""
    db = workdir / "locked.db"
    # a write waits 0.5 s for the lock, not the default 30 s: the same "database is locked"
    store = f"sqlite:///{db}?timeout=0.5"
    out: dict[str, Any] = {"db": str(db)}
    seed = start_sync(site, store, workdir, "/good/sitemap.xml")
    out["seed"] = (seed.wait(120), seed.communicate()[0])
    out["seeded"] = store_state(db)[1]
    since = len(site.log)
    proc = start_sync(site, store, workdir, SLOW_PAGES)
    wait_for_request(site, SLOW_PAGE, since)
    locker = sqlite3.connect(db, timeout=0, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")  # another program holds the file while the sync works
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:  # the sync keeps the lock's holder waiting no longer than needed
        lines.append(line)
        if "locked" in line:
            break
    locker.execute("ROLLBACK")
    locker.close()
    rest, _ = proc.communicate(timeout=300)
    out["locked_run"] = (proc.returncode, "".join(lines) + rest)
    out["after_lock"] = store_state(db)
    again = start_sync(site, store, workdir, SLOW_PAGES)
    out["rerun"] = (again.wait(120), again.communicate()[0])
    out["after_rerun"] = store_state(db)
    return out


def shard(index: int) -> list[dict[str, Any]]:
    """The cases of part `index` (0-based): every SHARDS-th, so each part has long and short."""
    return cases()[index::SHARDS]


def run_corpus(tmp_path_factory: pytest.TempPathFactory, chosen: list[dict[str, Any]]) -> Results:
    """Run `chosen` cases against a corpus server of their own (stopped by `stop_results`)."""
    servers = start_corpus()
    zygote = shared()  # the ~60 processes of a part forked with their imports done
    try:
        work = tmp_path_factory.mktemp("hostile")
        template: Path | None = work / "template.db"
        seeded: set[str] = set()
        assert template is not None
        if sync_available() and seed_store(template, servers[0].origin, work, zygote):
            seeded = store_state(template)[1]
        else:
            template = None
        results = Results(servers, {}, seeded)
        with ThreadPoolExecutor(PARALLEL) as pool:
            batches = pool.map(lambda c: run_case(c, servers[0], work, template, zygote), chosen)
            results.runs = {(r.case, r.command): r for batch in batches for r in batch}
    except BaseException:
        stop(servers)
        raise
    return results


def corpus_part(index: int) -> Any:
    """The module-scoped fixture `hostile_results` of part `index`."""

    @pytest.fixture(scope="module", name="hostile_results")
    def _results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Results]:
        results = run_corpus(tmp_path_factory, shard(index))
        try:
            yield results
        finally:
            stop(results.servers)

    return _results


@pytest.fixture(scope="module")
def locked_results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The locked-SQLite scenario against a corpus server of its own."""
    if not sync_available():
        pytest.skip("adapter sync is not available")
    servers = start_corpus()
    try:
        yield locked_sqlite_scenario(servers[0], tmp_path_factory.mktemp("lock"))
    finally:
        stop(servers)
