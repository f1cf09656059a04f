"""The checks of one part of the hostile corpus, shared by tests/hostile/test_hostile_corpus_*.py.

Each case of `fixtures/hostile/cases.json` runs as real `adapter` processes
(check-dataset, discover and sync; forked from a zygote that did their imports once,
tests/support/zygote.py) against the misbehaving fixture server, a few cases at once
(most of the time is spent waiting on the small time caps).
Every run must end with the case's expected finding codes, within its time
cap, under its peak-memory bound, without a traceback; each sync runs into a
copy of a SQLite store that already holds the good site's records, which must
still be there afterwards, with `PRAGMA integrity_check` ok.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.hostile import COMMANDS, load_corpus, problems
from tests.support.hostile_fixtures import Results, shard, sync_available


def params(index: int) -> list[Any]:
    """(case, command) pairs of part `index`; a case may mark a command xfail, naming the
    owner module's bug."""
    out = []
    for case in shard(index):
        for command in COMMANDS:
            reason = case.get("xfail", {}).get(command)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(case, command, marks=marks, id=f"{case['id']}-{command}"))
    return out


def check_case(results: Results, case: dict[str, Any], command: str) -> None:
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


def check_seeded(results: Results) -> None:
    if not sync_available():
        pytest.skip("adapter sync is not available")
    assert len(results.seeded) == 2


def check_no_other_origin(results: Results) -> None:
    """other.example and slow.example are 127.0.0.1 origins the operator never named."""
    _, other, slow = results.servers
    assert [r.path for r in other.log] == []
    assert [r.path for r in slow.log] == []


def check_no_secret(results: Results) -> None:
    for run in results.runs.values():
        assert "root:x:0:0" not in run.stdout + run.stderr, (run.case, run.command)
