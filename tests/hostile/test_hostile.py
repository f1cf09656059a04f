"""The hostile corpus's consistency, and a SQLite store locked under a running sync.

The corpus itself runs in parts, tests/hostile/test_hostile_corpus_*.py, so
that the suite's workers share it (tests/hostile/corpus.py says what each
case must show).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapter.findings import catalogue
from tests.support.hostile import COMMANDS, cases
from tests.support.hostile_fixtures import SHARDS, locked_results, shard

__all__ = ["locked_results"]  # the module fixture, imported for pytest to find
CASES = cases()


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


def test_the_parts_cover_the_corpus_once() -> None:
    ids = [case["id"] for index in range(SHARDS) for case in shard(index)]
    assert sorted(ids) == sorted(c["id"] for c in CASES)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sqlite_store_locked_mid_run(locked_results: dict[str, Any]) -> None:
    """Another connection holds the SQLite file while a sync works."""
    seen = locked_results
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


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_store_failure_is_a_documented_code(locked_results: dict[str, Any]) -> None:
    """adapter/sync/page.py counts a failed page write as `store/write-failed`, a code no
    FindingType declares, so `adapter findings` and the README cannot explain it."""
    code, out = locked_results["locked_run"]
    summary = json.loads(out.strip().splitlines()[-1]) if code == 0 else {}
    known = {t.code for t in catalogue()}
    assert not sorted(set(summary.get("error_codes", {})) - known)
