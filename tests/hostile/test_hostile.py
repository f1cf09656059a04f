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

import json
from typing import Any

import pytest

from adapter.findings import catalogue
from tests.support.hostile import COMMANDS, cases, load_corpus, problems
from tests.support.hostile_fixtures import Results, hostile_results, sync_available

# the session fixture runs the whole corpus (about 1.5 minutes on 2 cores)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
CASES = cases()
__all__ = ["hostile_results"]  # the session fixture, imported for pytest to find


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
def test_case(hostile_results: Results, case: dict[str, Any], command: str) -> None:
    results = hostile_results
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


def test_the_seed_store_held_records(hostile_results: Results) -> None:
    if not sync_available():
        pytest.skip("adapter sync is not available")
    assert len(hostile_results.seeded) == 2


def test_no_request_ever_reached_another_origin(hostile_results: Results) -> None:
    """other.example and slow.example are 127.0.0.1 origins the operator never named."""
    _, other, slow = hostile_results.servers
    assert [r.path for r in other.log] == []
    assert [r.path for r in slow.log] == []


def test_sqlite_store_locked_mid_run(hostile_results: Results) -> None:
    """Another connection holds the SQLite file while a sync works (run beside the corpus)."""
    if not sync_available():
        pytest.skip("adapter sync is not available")
    seen = hostile_results.locked
    db = seen["db"]
    code, out = seen["seed"]
    assert code == 0, out
    seeded = seen["seeded"]
    assert len(seeded) == 2

    code, out = seen["locked_run"]
    assert "Traceback" not in out, out
    # a clear error naming the store; the run then ends (exit 2) or, once the lock is
    # gone, goes on and counts the page it could not write as an error
    assert "database is locked" in out and db in out, out
    summary = json.loads(out.strip().splitlines()[-1]) if code == 0 else {}
    assert code == 2 or summary.get("errors", 0) >= 1, out
    integrity, urls, _ = seen["after_lock"]
    assert integrity == "ok"
    assert seeded <= urls  # nothing from before lost

    code, out = seen["rerun"]  # the next run resumes
    assert code == 0 and "Traceback" not in out, out
    integrity, urls, codes = seen["after_rerun"]
    assert integrity == "ok" and seeded <= urls
    assert "fetch/timeout" in codes  # the slow page was processed this time


def test_a_store_failure_is_a_documented_code(hostile_results: Results) -> None:
    """adapter/sync/page.py counts a failed page write as `store/write-failed`, a code no
    FindingType declares, so `adapter findings` and the README cannot explain it."""
    if not sync_available():
        pytest.skip("adapter sync is not available")
    code, out = hostile_results.locked["locked_run"]
    summary = json.loads(out.strip().splitlines()[-1]) if code == 0 else {}
    known = {t.code for t in catalogue()}
    assert not sorted(set(summary.get("error_codes", {})) - known)


def test_no_secret_file_content_in_any_output(hostile_results: Results) -> None:
    for run in hostile_results.runs.values():
        assert "root:x:0:0" not in run.stdout + run.stderr, (run.case, run.command)
