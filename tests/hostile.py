"""The hostile corpus and its runner, shared by tests/test_hostile*.py and benchmarks/hostile.py.

`fixtures/hostile/cases.json` lists each case: the server rules that make the
fixture server misbehave, the paths given to `adapter check-dataset`,
`adapter discover` and `adapter sync`, the limit that protects against it,
and the finding codes each command must report. Every command runs as a real
subprocess (the installed `adapter` console script) with the case's small
limits in ADAPTER_LIMITS; its wall time and peak RSS (from wait4) are
measured, and its output is checked for a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fixture_server import FIXTURES, SiteServer, start_site, stop

CORPUS = FIXTURES / "hostile"
ADAPTER = Path(sys.executable).with_name("adapter")
COMMANDS = ("check", "discover", "sync")
NODE_ID = "urn:node:HOSTILE"


def load_corpus() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CORPUS / "cases.json").read_text())
    return data


def cases() -> list[dict[str, Any]]:
    return list(load_corpus()["cases"])


def start_corpus() -> list[SiteServer]:
    """The hostile site with every case's rules; [main, other.example, slow.example]."""
    corpus = load_corpus()
    rules: dict[str, Any] = dict(corpus["base"])
    for case in corpus["cases"]:
        rules.update(case["serve"])
    return start_site("site", CORPUS, rules)


@dataclass
class Run:
    """One command of one case, as it ran."""

    case: str
    command: str
    argv: list[str]
    exit_code: int
    seconds: float
    rss_mb: float
    stdout: str
    stderr: str
    codes: list[str] = field(default_factory=list)
    killed: bool = False

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stdout + self.stderr


def limits_env(case: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(case.get("limits", {}).items()))


def argv_for(command: str, url: str, store: Path | None) -> list[str]:
    if command == "check":
        return [str(ADAPTER), "check-dataset", url, "--json"]
    if command == "discover":
        return [str(ADAPTER), "discover", url, "--json"]
    assert store is not None
    return [str(ADAPTER), "sync", url, "--store", f"sqlite:///{store}", "--node-id", NODE_ID]


def run_command(
    case: dict[str, Any], command: str, origin: str, workdir: Path, hard_cap: float
) -> Run:
    """Run one command of one case as a subprocess; kill it at `hard_cap` seconds."""
    path = case[command]
    url = path if "://" in path else origin + path
    store = workdir / f"{case['id']}.db" if command == "sync" else None
    argv = argv_for(command, url, store)
    env = {**os.environ, "ADAPTER_LIMITS": limits_env(case), "PYTHONUNBUFFERED": "1"}
    out_path = workdir / f"{case['id']}.{command}.out"
    err_path = workdir / f"{case['id']}.{command}.err"
    start = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=workdir)
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            proc.kill()

        timer = threading.Timer(hard_cap, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - start
    run = Run(
        case=case["id"],
        command=command,
        argv=argv,
        exit_code=proc.returncode,
        seconds=seconds,
        rss_mb=usage.ru_maxrss / 1024,  # KiB on Linux
        stdout=out_path.read_text(errors="replace"),
        stderr=err_path.read_text(errors="replace"),
        killed=killed.is_set(),
    )
    run.codes = finding_codes(command, run.stdout)
    return run


def finding_codes(command: str, stdout: str) -> list[str]:
    """Every finding code a command printed (its --json output; sync's lines as printed)."""
    codes: list[str] = []
    if command == "check":
        try:
            report = json.loads(stdout)
        except ValueError:
            return codes
        codes += [f["code"] for f in report.get("findings", [])]
        for dataset in report.get("datasets", []):
            codes += [f["code"] for f in dataset.get("findings", [])]
        return codes
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if item.get("type") == "finding" or "code" in item:
                codes.append(str(item.get("code")))
            for code in item.get("findings", {}) if isinstance(item.get("findings"), dict) else ():
                codes.append(str(code))
        else:
            codes += [w for w in line.replace(":", " ").split() if _looks_like_code(w)]
    return codes


def _looks_like_code(word: str) -> bool:
    area, _, rest = word.partition("/")
    return bool(rest) and area.isalpha() and area.islower() and "/" not in rest and "." not in rest


def problems(case: dict[str, Any], run: Run, defaults: dict[str, Any]) -> list[str]:
    """What is wrong with one run, in words; empty when the case holds."""
    out: list[str] = []
    expected = case["expect"].get(run.command, [])
    missing = [c for c in expected if c not in run.codes]
    if missing:
        out.append(f"expected {missing}, got {sorted(set(run.codes))}")
    for bad in case.get("absent", []):
        if any(code.startswith(bad) for code in run.codes) or bad in run.stdout + run.stderr:
            out.append(f"{bad!r} must not appear")
    if run.traceback:
        out.append("traceback in the output")
    if run.killed:
        out.append("killed at the hard time cap")
    if run.exit_code not in (0, 1, 2):
        out.append(f"exit code {run.exit_code}")
    if run.seconds > case.get("seconds", defaults["seconds"]):
        out.append(f"took {run.seconds:.1f} s")
    if run.rss_mb > case.get("max_rss_mb", defaults["max_rss_mb"]):
        out.append(f"peak RSS {run.rss_mb:.0f} MB")
    return out


def seed_store(template: Path, origin: str, workdir: Path) -> Path | None:
    """A SQLite store with the good site synced into it: the records every hostile sync keeps."""
    argv = argv_for("sync", origin + "/good/sitemap.xml", template)
    done = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, timeout=120)
    if done.returncode not in (0, 1) or not template.exists():
        return None
    return template


def copy_store(template: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(template) + suffix)
        if src.exists():
            shutil.copyfile(src, Path(str(target) + suffix))


def store_state(path: Path) -> tuple[str, set[str]]:
    """(integrity_check result, source URLs of the records) of a SQLite store."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        integrity = str(con.execute("PRAGMA integrity_check").fetchone()[0])
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        urls: set[str] = set()
        if "records" in tables:
            urls = {str(r[0]) for r in con.execute("SELECT source_url FROM records")}
        return integrity, urls
    finally:
        con.close()


def reset_counters(server: SiteServer, paths: Iterable[str]) -> None:
    with server.lock:
        for p in paths:
            for key in [k for k in server.counters if k.split("?")[0] == p]:
                del server.counters[key]


__all__ = [
    "COMMANDS",
    "Run",
    "cases",
    "copy_store",
    "load_corpus",
    "problems",
    "reset_counters",
    "run_command",
    "seed_store",
    "start_corpus",
    "stop",
    "store_state",
]
