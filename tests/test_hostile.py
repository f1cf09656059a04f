"""The hostile corpus through the real commands: check-dataset, discover and sync.

Each case of `fixtures/hostile/cases.json` runs as real `adapter` processes
against the misbehaving fixture server, all cases in parallel (most of the
time is spent waiting on the small time caps). Every run must end with the
case's expected finding codes, within its time cap, under its peak-memory
bound, without a traceback; each sync runs into a copy of a SQLite store that
already holds the good site's records, which must still be there afterwards,
with `PRAGMA integrity_check` ok.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from adapter.findings import catalogue
from tests.fixture_server import SiteServer
from tests.hostile import (
    COMMANDS,
    Run,
    cases,
    load_corpus,
    problems,
    run_case,
    seed_store,
    start_corpus,
    stop,
)

pytestmark = pytest.mark.slow
PARALLEL = int(os.environ.get("ADAPTER_HOSTILE_PARALLEL", "12"))
CASES = cases()


class Results:
    def __init__(self, servers: list[SiteServer], runs: list[Run], seeded: set[str]) -> None:
        self.servers = servers
        self.runs = {(r.case, r.command): r for r in runs}
        self.seeded = seeded


def _sync_available() -> bool:
    try:
        import adapter.commands.sync  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Results]:
    servers = start_corpus()
    work = tmp_path_factory.mktemp("hostile")
    template: Path | None = work / "template.db"
    seeded: set[str] = set()
    assert template is not None
    if _sync_available() and seed_store(template, servers[0].origin, work):
        from tests.hostile import store_state

        seeded = store_state(template)[1]
    else:
        template = None
    try:
        with ThreadPoolExecutor(PARALLEL) as pool:
            batches = pool.map(lambda c: run_case(c, servers[0], work, template), CASES)
            runs = [run for batch in batches for run in batch]
        yield Results(servers, runs, seeded)
    finally:
        stop(servers)


def test_the_corpus_is_large_and_consistent() -> None:
    known = {t.code for t in catalogue()}
    assert len(CASES) >= 40
    assert len({c["id"] for c in CASES}) == len(CASES)
    for case in CASES:
        assert case["limit"] and case["what"]
        for command in COMMANDS:
            assert case[command], (case["id"], command)
            for code in case["expect"][command]:
                assert code in known, (case["id"], code)


def _params() -> list[Any]:
    """(case, command) pairs; a case may mark a command xfail, naming the owner module's bug."""
    out = []
    for case in CASES:
        for command in COMMANDS:
            reason = case.get("xfail", {}).get(command)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(case, command, marks=marks, id=f"{case['id']}-{command}"))
    return out


@pytest.mark.parametrize(("case", "command"), _params())
def test_case(results: Results, case: dict[str, Any], command: str) -> None:
    run = results.runs.get((case["id"], command))
    if run is None:
        pytest.skip("adapter sync is not available (adapter/commands/sync.py)")
    found = problems(case, run, load_corpus()["defaults"])
    if command == "sync":
        assert run.store is not None, "the sync left no store"
        integrity, urls = run.store
        if integrity != "ok":
            found.append(f"integrity_check: {integrity}")
        if not results.seeded <= urls:
            found.append(f"records from before lost: {sorted(results.seeded - urls)}")
    detail = (
        f"{' '.join(run.argv)}\n--- stdout\n{run.stdout[-2000:]}\n--- stderr\n{run.stderr[-2000:]}"
    )
    assert not found, f"{case['id']} / {command}: {found}\n{detail}"


def test_the_seed_store_held_records(results: Results) -> None:
    if not _sync_available():
        pytest.skip("adapter sync is not available")
    assert len(results.seeded) == 2


def test_no_request_ever_reached_another_origin(results: Results) -> None:
    """other.example and slow.example are 127.0.0.1 origins the operator never named."""
    _, other, slow = results.servers
    assert [r.path for r in other.log] == []
    assert [r.path for r in slow.log] == []


def test_no_secret_file_content_in_any_output(results: Results) -> None:
    for run in results.runs.values():
        assert "root:x:0:0" not in run.stdout + run.stderr, (run.case, run.command)
