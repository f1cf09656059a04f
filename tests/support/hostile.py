"""The hostile corpus and its runner, shared by tests/test_hostile*.py and benchmarks/hostile.py.

`fixtures/hostile/cases.json` lists each case: the server rules that make the
fixture server misbehave, the paths given to `adapter check-dataset`,
`adapter discover` and `adapter sync`, the limit that protects against it,
and the finding codes each command must report. Every command runs as a real
subprocess with the case's small limits in ADAPTER_LIMITS: the installed `adapter`
console script (benchmarks/hostile.py), or in the tests a child forked from a zygote
that has done the imports (tests/support/zygote.py); its wall time, CPU and peak RSS
(from wait4) are measured, and its output is checked for a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.fixture_server import FIXTURES, SiteServer, start_site, stop
from tests.support.zygote import Zygote

CORPUS = FIXTURES / "hostile"
ADAPTER = Path(sys.executable).with_name("adapter")
COMMANDS = ("check", "discover", "sync")
NODE_ID = "urn:node:HOSTILE"
RATE = 200  # requests per second per host, discover's and sync's: no case tests pacing
SUMMARY_KEYS = ("findings", "error_codes", "not_harvestable", "discovery_findings")


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
    store: tuple[str, set[str]] | None = None  # sync: integrity_check, record source URLs
    cpu_seconds: float = 0.0  # user + system of the command and the children it waited for

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stdout + self.stderr


def limits_for(case: dict[str, Any], command: str) -> dict[str, Any]:
    """The case's small limits, with any the command needs on top (e.g. fewer pages to sync)."""
    return {**case.get("limits", {}), **case.get("limits_by_command", {}).get(command, {})}


def limits_env(limits: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(limits.items()))


def node_config(path: Path, sitemap_url: str, store: Path, limits: dict[str, Any]) -> Path:
    """A one-node YAML configuration: how an operator runs a sync, limits and all."""
    lines = [
        f"store_url: sqlite:///{store}",
        "nodes:",
        f"  - id: {NODE_ID}",
        "    name: Hostile corpus",
        "    start:",
        f"      sitemap_urls: [{json.dumps(sitemap_url)}]",
        "    politeness:",
        f"      requests_per_second: {RATE}",
        "      concurrency: 4",
        "    dataone:",
        '      submitter: "http://orcid.org/0000-0002-1825-0097"',
        '      rights_holder: "CN=hostile,DC=dataone,DC=org"',
        '      contact_subject: "http://orcid.org/0000-0002-1825-0097"',
    ]
    if limits:
        lines.append("    limits:")
        lines += [f"      {k}: {v}" for k, v in sorted(limits.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def argv_for(command: str, url: str, config: Path | None = None) -> list[str]:
    if command == "check":
        return [str(ADAPTER), "check-dataset", url, "--json"]
    if command == "discover":
        return [str(ADAPTER), "discover", url, "--json", "--rate", str(RATE)]
    assert config is not None
    return [str(ADAPTER), "sync", "--config", str(config), "--json"]


# Runs the command as a grandchild and reports its own peak RSS. A direct child of the
# test process would inherit the test process's RSS high-water mark at fork (Linux keeps
# it across exec), so the launcher, a small interpreter, stands in between.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    cpu = usage.ru_utime + usage.ru_stime
    f.write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)} {cpu}")
"""


def run_command(
    case: dict[str, Any],
    command: str,
    origin: str,
    workdir: Path,
    hard_cap: float,
    zygote: Zygote | None = None,
) -> Run:
    """Run one command of one case as a subprocess; kill it at `hard_cap` seconds. With a
    `zygote`, the process is forked from it with the imports done (tests/support/zygote.py);
    without, it is the console script exec'd by a launcher (benchmarks/hostile.py)."""
    path = case[command]
    url = path if "://" in path else origin + path
    limits = limits_for(case, command)
    stem = workdir / f"{case['id']}.{command}"
    config = None
    if command == "sync":
        config = node_config(Path(f"{stem}.yaml"), url, workdir / f"{case['id']}.db", limits)
    argv = argv_for(command, url, config)
    env = {**os.environ, "ADAPTER_LIMITS": limits_env(limits), "PYTHONUNBUFFERED": "1"}
    report = Path(f"{stem}.rusage")
    start = time.monotonic()
    if zygote is not None:
        exited, killed = zygote.run(
            argv,
            env=env,
            cwd=workdir,
            stdout=Path(f"{stem}.out"),
            stderr=Path(f"{stem}.err"),
            timeout=hard_cap,
        )
        report.write_text(f"{exited.maxrss_kib} {exited.exit_code} {exited.cpu_seconds}")
    else:
        killed = _launched(argv, env, workdir, stem, report, hard_cap)
    seconds = time.monotonic() - start
    rss_kib, exit_code, cpu = report.read_text().split() if report.exists() else ("0", "-9", "0")
    run = Run(
        case=case["id"],
        command=command,
        argv=argv,
        exit_code=int(exit_code),
        seconds=seconds,
        rss_mb=int(rss_kib) / 1024,
        stdout=Path(f"{stem}.out").read_text(errors="replace"),
        stderr=Path(f"{stem}.err").read_text(errors="replace"),
        killed=killed,
        cpu_seconds=float(cpu),
    )
    run.codes = finding_codes(command, run.stdout)
    return run


def _launched(
    argv: list[str], env: dict[str, str], workdir: Path, stem: Path, report: Path, hard_cap: float
) -> bool:
    """The console script under the launcher; whether it was killed at the hard cap."""
    with open(f"{stem}.out", "wb") as out, open(f"{stem}.err", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-S", "-c", LAUNCHER, str(report), *argv],
            stdout=out,
            stderr=err,
            env=env,
            cwd=workdir,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=hard_cap)
            killed = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher's own group: it and the command
            proc.wait()
            killed = True
    return killed


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
            if "code" in item:
                codes.append(str(item["code"]))
            for key in SUMMARY_KEYS:  # sync's and discover's summaries count codes
                if isinstance(item.get(key), dict):
                    codes += [str(code) for code in item[key]]
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
    wanted_exit = case.get("exit", {}).get(run.command)
    if wanted_exit is not None and run.exit_code != wanted_exit:
        out.append(f"exit code {run.exit_code}, expected {wanted_exit}")
    if run.seconds > case.get("seconds", defaults["seconds"]):
        out.append(f"took {run.seconds:.1f} s")
    # a quadratic parser shows in CPU time, whatever else shares the machine's cores
    if run.cpu_seconds > case.get("cpu_seconds", float("inf")):
        out.append(f"used {run.cpu_seconds:.1f} s of CPU")
    if run.rss_mb > case.get("max_rss_mb", defaults["max_rss_mb"]):
        out.append(f"peak RSS {run.rss_mb:.0f} MB")
    return out


def seed_store(template: Path, origin: str, workdir: Path, zygote: Zygote | None = None) -> bool:
    """A SQLite store with the good site synced into it: the records every hostile sync keeps."""
    url = origin + "/good/sitemap.xml"
    config = node_config(workdir / "seed.yaml", url, template, {})
    argv = argv_for("sync", url, config)
    if zygote is not None:
        exited, _ = zygote.run(
            argv,
            env=dict(os.environ),
            cwd=workdir,
            stdout=workdir / "seed.out",
            stderr=workdir / "seed.err",
            timeout=120,
        )
        returncode = exited.exit_code
    else:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, timeout=120)
        returncode = done.returncode
    return returncode in (0, 1) and template.exists()


def copy_store(template: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(template) + suffix)
        if src.exists():
            shutil.copyfile(src, Path(str(target) + suffix))


def store_state(path: Path) -> tuple[str, set[str], list[str]]:
    """A SQLite store's integrity_check, its records' source URLs, and its pages' finding codes."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        integrity = str(con.execute("PRAGMA integrity_check").fetchone()[0])
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        urls: set[str] = set()
        codes: list[str] = []
        if "records" in tables:
            urls = {str(r[0]) for r in con.execute("SELECT source_url FROM records")}
        if "frontier" in tables:
            for (report,) in con.execute("SELECT last_report FROM frontier"):
                codes += _report_codes(report)
        return integrity, urls, codes
    finally:
        con.close()


def _report_codes(report: str | None) -> list[str]:
    try:
        data = json.loads(report or "{}")
    except ValueError:
        return []
    found = [str(f.get("code")) for f in data.get("findings", []) if isinstance(f, dict)]
    for dataset in data.get("datasets", []):
        found += [str(f.get("code")) for f in dataset.get("findings", []) if isinstance(f, dict)]
    return found


def run_case(
    case: dict[str, Any],
    server: SiteServer,
    workdir: Path,
    template: Path | None,
    zygote: Zygote | None = None,
) -> list[Run]:
    """Every command of one case, in turn (they share the server's per-path counters)."""
    runs: list[Run] = []
    cap = float(case.get("seconds", load_corpus()["defaults"]["seconds"])) * 1.5 + 5
    for command in COMMANDS:
        if command == "sync" and template is None:
            continue
        reset_counters(server, case["serve"])
        db = workdir / f"{case['id']}.db"
        if command == "sync" and template is not None:
            copy_store(template, db)
        run = run_command(case, command, server.origin, workdir, cap, zygote)
        if command == "sync" and db.exists():
            integrity, urls, codes = store_state(db)
            run.store = (integrity, urls)
            run.codes += codes
        runs.append(run)
    return runs


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
    "run_case",
    "run_command",
    "seed_store",
    "start_corpus",
    "stop",
    "store_state",
]
