"""The Member Node API under load: a 100,000-object store on SQLite and PostgreSQL.

Serves the store with `adapter serve` (the production server) and measures
`get`, `getSystemMetadata`, `getChecksum`, `describe` (HEAD) and paged
`listObjects` (count=1000, by start) with wrk cycling through many PIDs at
each connection count; nginx serves the same bytes and pre-built XML from files
at the same paths in the same run (the ratio says how far the API is from what
this machine can send). DataONE's own client (`MemberNodeClient_2_0`) makes a
smaller sequential pass; its overhead is client-side, so it is reported apart.
Last, a sync of a generated repository runs alone and while wrk loads the API
on the same store, to show what serving costs the sync. Writes the
"## Member Node API" section of BENCHMARKS.md and benchmarks/api-rps.svg.

    PYTHONPATH=. .venv/bin/python benchmarks/api.py [--objects 100000] [--seconds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapter.api.xml import checksum_xml, object_list_xml  # noqa: E402
from adapter.commands.serving_priority import DEFAULT_NICE  # noqa: E402
from adapter.commands.serving_settings import member_node  # noqa: E402
from adapter.config.load import quick_node  # noqa: E402
from adapter.store.db import Store  # noqa: E402
from benchmarks import apiload, apistore, synthrepo  # noqa: E402
from benchmarks.apiplot import bar_svg  # noqa: E402
from benchmarks.sections import write_section  # noqa: E402
from tests.support import stores  # noqa: E402

SECTION = "## Member Node API"
PYTHON = sys.executable
ADAPTER = [PYTHON, "-m", "adapter"]
SUBJECTS = {
    "submitter": apistore.SUBMITTER,
    "rights_holder": apistore.RIGHTS,
    "contact_subject": apistore.SUBMITTER,
}
PROBE_DELAY_MS = 100  # the CN-like client beside a sync: one connection, 10 requests/s
SAMPLE = 20_000  # PIDs the load cycles through (and nginx holds as files)
LIST_COUNT = 1000
METHODS = ("getSystemMetadata", "get", "getChecksum", "describe", "listObjects")
PLOT = ROOT / "benchmarks" / "api-rps.svg"
LOW_PRIORITY = "nice -n 19"  # the API below the sync's CPU priority (docs/operate.md)
AS_STARTED = ("--nice", "0", "--no-idle")  # `adapter serve` at the priority it was started with
# The API loads beside the sync alone. "paced", "full": `adapter serve` and wrk as started;
# "-nice": both under --low-priority. The rest put wrk under --low-priority (it stands for a
# client on another machine, which takes none of the sync's CPU) and run `adapter serve` at its
# defaults (niceness DEFAULT_NICE, SCHED_IDLE), with --no-idle, or "-as-started"; "rate-N":
# asked about N requests/s (20 clients, each pausing between requests), below full speed
SYNC_CONDITIONS = (
    "paced",
    "paced-nice",
    "paced-default",
    "rate-1000",
    "rate-2000",
    "full",
    "full-nice",
    "full-default",
    "full-no-idle",
    "full-as-started",
)


@dataclass(frozen=True, slots=True)
class Server:
    """How the API is served: a name for the report and the `adapter serve` options."""

    name: str
    options: tuple[str, ...]
    pythonpath: Path = ROOT  # another checkout: the code before a change, in the same run
    priority: bool = True  # it has `--nice` and `--idle` (a --baseline checkout may predate them)


SERVERS = {
    "waitress": Server("waitress, 8 threads", ("--server", "waitress", "--threads", "8")),
    "granian": Server(
        "granian, 2 workers x 4 threads",
        ("--server", "granian", "--workers", "2", "--threads", "4"),
    ),
    "granian1": Server(
        "granian, 1 worker x 8 threads", ("--server", "granian", "--workers", "1", "--threads", "8")
    ),
}


def paths_for(method: str, pids: list[str], objects: int) -> tuple[str, list[str]]:
    """(HTTP verb, request paths) of one method over the sampled PIDs."""
    base = f"/{apistore.SHORT}/v2"
    quoted = [apistore.path_of(pid) for pid in pids]
    if method == "getSystemMetadata":
        return "GET", [f"{base}/meta/{p}" for p in quoted]
    if method == "get":
        return "GET", [f"{base}/object/{p}" for p in quoted]
    if method == "describe":
        return "HEAD", [f"{base}/object/{p}" for p in quoted]
    if method == "getChecksum":
        return "GET", [f"{base}/checksum/{p}" for p in quoted]
    starts = list(range(0, max(1, objects - LIST_COUNT + 1), LIST_COUNT))
    random.Random(19).shuffle(starts)
    return "GET", [f"{base}/object?start={s}&count={LIST_COUNT}" for s in starts]


def _node() -> Any:
    settings = quick_node("https://repository.invalid/", apistore.NODE, dataone=SUBJECTS)
    return member_node(settings, "http://127.0.0.1:8080")


def nginx_tree(url: str, pids: list[str], objects: int, root: Path) -> None:
    """The API's answers as files at the API's paths, rendered by the adapter's own code."""
    node = _node()
    base = root / apistore.SHORT / "v2"
    for sub in ("object", "meta", "checksum"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    (root / "list").mkdir()
    store = Store.open(url, create=False)
    try:
        for pid in pids:
            record = store.get_record(apistore.NODE, pid, with_bytes=True)
            assert record is not None and record.object_bytes is not None
            (base / "object" / pid).write_bytes(record.object_bytes)
            (base / "meta" / pid).write_bytes(node.sysmeta(record))
            xml = checksum_xml(record.checksum_algorithm, record.checksum)
            (base / "checksum" / pid).write_bytes(xml)
        for start in range(0, max(1, objects - LIST_COUNT + 1), LIST_COUNT):
            total, page = store.list_objects(apistore.NODE, start=start, count=LIST_COUNT)
            (root / "list" / f"{start}.xml").write_bytes(object_list_xml(page, start, total))
    finally:
        store.close()


@contextmanager
def api_server(
    url: str,
    server: Server,
    log: Path,
    under: tuple[str, ...] = (),
    priority: tuple[str, ...] = AS_STARTED,
) -> Iterator[tuple[str, int]]:
    """`adapter serve` on the store at a free port (run by `under`, e.g. nice; with the
    `priority` options, () for its defaults): (origin, pid). Measured as started unless said:
    wrk, on the same cores, would otherwise take the CPU a server on its own machine has."""
    port = apiload.free_port()
    args = list(under)
    args += [*ADAPTER, "serve", "--store", url, "--node-id", apistore.NODE, "--port", str(port)]
    if server.priority:
        args += priority
    args += ["--submitter", SUBJECTS["submitter"], "--rights-holder", SUBJECTS["rights_holder"]]
    args += ["--contact-subject", SUBJECTS["contact_subject"], *server.options]
    with log.open("ab") as sink:
        proc = subprocess.Popen(  # `-m` imports from the working folder first
            args,
            stdout=sink,
            stderr=sink,
            cwd=server.pythonpath,
            env={**os.environ, "PYTHONPATH": str(server.pythonpath)},
        )
    origin = f"http://127.0.0.1:{port}"
    try:
        apiload.wait_ready(f"{origin}/{apistore.SHORT}/v2/monitor/ping")
        yield origin, proc.pid
    finally:
        proc.terminate()
        proc.wait(30)


def measure_methods(
    origin: str, pid: int | None, pids: list[str], objects: int, args: argparse.Namespace
) -> dict[str, dict[int, apiload.Load]]:
    out: dict[str, dict[int, apiload.Load]] = {}
    for method in METHODS:
        verb, paths = paths_for(method, pids, objects)
        out[method] = {}
        for conns in args.connections:
            load = apiload.wrk(
                origin, paths, verb=verb, connections=conns, seconds=args.seconds, server_pid=pid
            )
            out[method][conns] = load
            print(f"  {method:18} c={conns:<3} {json.dumps(load.row())}", flush=True)
    return out


def d1_client_pass(origin: str, pids: list[str], objects: int, calls: int) -> dict[str, float]:
    """Calls per second of DataONE's own client, one caller, sequential."""
    import d1_client.mnclient_2_0  # lazy: it loads pyxb's bindings

    client = d1_client.mnclient_2_0.MemberNodeClient_2_0(
        f"{origin}/{apistore.SHORT}", timeout_sec=30
    )
    chosen = pids[:: max(1, len(pids) // calls)][:calls]
    pages = max(1, min(calls // 10, objects // LIST_COUNT))
    runs: dict[str, Callable[[int], Any]] = {
        "getSystemMetadata": lambda i: client.getSystemMetadata(chosen[i]),
        "get": lambda i: client.get(chosen[i]).content,
        "getChecksum": lambda i: client.getChecksum(chosen[i]),
        "describe": lambda i: client.describe(chosen[i]),
        "listObjects": lambda i: client.listObjects(start=i * LIST_COUNT, count=LIST_COUNT),
    }
    rates = {}
    for method, call in runs.items():
        n = pages if method == "listObjects" else len(chosen)
        call(0)  # the first call loads the client's bindings: not timed
        began = time.perf_counter()
        for i in range(n):
            call(i)
        rates[method] = n / (time.perf_counter() - began)
        print(f"  d1_client {method:18} {rates[method]:,.0f} calls/s", flush=True)
    return rates


@dataclass(frozen=True, slots=True)
class SyncLoad:
    """One condition of the sync-cost run: the API load beside the sync, if any."""

    label: str
    connections: int = 0  # 0: the sync alone
    delay_ms: int | None = None  # wrk's pause between a connection's requests
    under: tuple[str, ...] = ()  # the command the API and wrk run under (nice)
    priority: tuple[str, ...] = AS_STARTED  # `adapter serve`'s priority options; (): defaults
    wrk_under: tuple[str, ...] | None = None  # wrk's own command, if not `under`


@dataclass(slots=True)
class SyncRuns:
    """Every run of one condition: the sync's wall seconds, each against the runs alone just
    before and after it, the API's req/s meanwhile, and the p99 ms a CN-like client saw."""

    load: SyncLoad
    seconds: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    rps: list[float] = field(default_factory=list)
    probe_p99: list[float] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SyncRun:
    """One sync: its wall seconds, the API's req/s meanwhile and the CN-like client's p99 ms."""

    seconds: float
    rps: float = 0.0
    probe_p99: float = 0.0


def sync_cost(
    sqlite: Path,
    tmp: Path,
    pages: int,
    pids: list[str],
    objects: int,
    server: Server,
    low_priority: str = LOW_PRIORITY,
    rounds: int = 2,
    conditions: tuple[str, ...] = SYNC_CONDITIONS,
) -> list[SyncRuns]:
    """A sync of a generated repository into a copy of the store: alone, and under API load.

    The conditions take turns, `rounds` times, each run between two runs alone: its cost is
    against their mean, so a machine whose other load drifts (these 2 shared cores move the
    sync alone by 10 % and more between runs) weighs on each pair alike. `conditions` picks
    which loads run.
    """
    port = synthrepo.free_port()
    origin = f"http://127.0.0.1:{port}"
    site = tmp / "site"
    synthrepo.generate(site, pages, origin)
    served = synthrepo.serve(site, port)
    meta = paths_for("getSystemMetadata", pids, objects)[1]
    mixed = [p for pair in zip(meta, paths_for("get", pids, objects)[1], strict=True) for p in pair]
    low = tuple(low_priority.split())
    under = f", `{low_priority} adapter serve` (and wrk)"
    client = f"wrk under {low_priority}"
    default = f", `adapter serve` at its defaults, niceness {DEFAULT_NICE}, SCHED_IDLE ({client})"
    no_idle = f", `adapter serve --no-idle`, niceness {DEFAULT_NICE} ({client})"
    as_started = f", `adapter serve --nice 0 --no-idle` ({client})"
    loads = {
        "alone": SyncLoad("alone"),
        "paced": SyncLoad("API paced, 10 clients at ~20 req/s each", 10, 50),
        "paced-nice": SyncLoad("API paced, 10 clients at ~20 req/s each" + under, 10, 50, low),
        "full": SyncLoad("API at full speed, 20 clients", 20),
        "full-nice": SyncLoad("API at full speed, 20 clients" + under, 20, None, low),
        "paced-default": SyncLoad(
            "API paced, 10 clients at ~20 req/s each" + default, 10, 50, (), (), low
        ),
        "full-default": SyncLoad("API at full speed, 20 clients" + default, 20, None, (), (), low),
        "full-no-idle": SyncLoad(
            "API at full speed, 20 clients" + no_idle, 20, None, (), ("--no-idle",), low
        ),
        "full-as-started": SyncLoad(
            "API at full speed, 20 clients" + as_started, 20, None, (), AS_STARTED, low
        ),
        "rate-1000": SyncLoad(
            "API paced, 20 clients at ~50 req/s each" + default, 20, 20, (), (), low
        ),
        "rate-2000": SyncLoad(
            "API paced, 20 clients at ~100 req/s each" + default, 20, 10, (), (), low
        ),
    }
    runs = [SyncRuns(load) for key, load in loads.items() if key == "alone" or key in conditions]
    order = [runs[0]] + [x for _ in range(rounds) for run in runs[1:] for x in (run, runs[0])]
    try:
        before = 0.0
        pending: SyncRuns | None = None  # the loaded run waiting for the run alone after it
        for n, run in enumerate(order):
            one = _one_sync(sqlite, tmp, n, pages, origin, server, run.load, mixed, meta)
            run.seconds.append(one.seconds)
            if run is runs[0]:
                if pending:
                    pending.ratios.append(pending.seconds[-1] / ((before + one.seconds) / 2))
                before, pending = one.seconds, None
            else:
                run.rps.append(one.rps)
                run.probe_p99.append(one.probe_p99)
                pending = run
            print(
                f"  sync {run.load.label}: {one.seconds:.1f} s, API {one.rps:,.0f} req/s, "
                f"CN-like p99 {one.probe_p99:.1f} ms",
                flush=True,
            )
    finally:
        served.stop()
    return runs


def _one_sync(
    sqlite: Path,
    tmp: Path,
    n: int,
    pages: int,
    origin: str,
    server: Server,
    load: SyncLoad,
    mixed: list[str],
    meta: list[str],
) -> SyncRun:
    """One sync into a fresh copy of the store, with `load` on the API beside it.

    Beside the load, one client at the sync's priority asks getSystemMetadata 10 times a
    second, as DataONE's coordinating node does from another machine: its p99 says how long
    the CN waits while the API yields the cores to the sync.
    """
    db = tmp / f"sync-{n}.db"
    shutil.copyfile(sqlite, db)
    url = f"sqlite:///{db}"
    cfg = tmp / f"sync-{n}.yaml"
    cfg.write_text(_sync_config(url, origin))
    with ExitStack() as stack:
        wrk = probe = None
        if load.connections:
            api, _ = stack.enter_context(
                api_server(url, server, tmp / "serve-sync.log", load.under, load.priority)
            )
            # wrk stands for a client on another machine: run like the API, or below it
            wrk_under = load.under if load.wrk_under is None else load.wrk_under
            wrk = apiload.Wrk(api, mixed, load.connections, load.delay_ms, wrk_under)
            probe = apiload.Wrk(api, meta, 1, PROBE_DELAY_MS)
            time.sleep(1)
        began = time.perf_counter()
        proc = subprocess.run(
            [*ADAPTER, "sync", "--config", str(cfg), "--json"],
            cwd=tmp,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        seconds = time.perf_counter() - began
        run = SyncRun(seconds)
        if wrk and probe:
            (rps, _), (_, p99) = wrk.stop(), probe.stop()
            run = SyncRun(seconds, rps, p99)
    summary = [json.loads(x) for x in proc.stdout.splitlines() if x[:1] == "{"]
    fetched = sum(s.get("fetched", 0) for s in summary)  # pages (each writes 2 objects)
    if proc.returncode not in (0, 1) or fetched != pages:
        raise RuntimeError(
            f"sync {load.label} wrote {fetched} of {pages} pages (exit {proc.returncode}): "
            f"{(proc.stdout + proc.stderr)[-600:]}"
        )
    db.unlink()
    return run


def _sync_config(url: str, origin: str) -> str:
    return f"""
store_url: "{url}"
log_level: WARNING
nodes:
  - id: urn:node:SYNCBENCH
    name: Sync under API load
    start:
      robots_urls: ["{origin}/robots.txt"]
    politeness:
      requests_per_second: 5000
      concurrency: 8
    dataone:
      submitter: "{apistore.SUBMITTER}"
      rights_holder: "{apistore.RIGHTS}"
      contact_subject: "{apistore.SUBMITTER}"
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--objects", type=int, default=100_000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", default="20,50")
    ap.add_argument("--engines", default="sqlite,postgres")
    ap.add_argument("--servers", default="waitress", help=f"of {', '.join(SERVERS)}")
    ap.add_argument("--d1-calls", type=int, default=300)
    ap.add_argument("--sync-pages", type=int, default=1500, help="0: skip the sync cost")
    ap.add_argument(
        "--low-priority",
        default=LOW_PRIORITY,
        help="the command the API (and wrk) run under in the last sync-cost row",
    )
    ap.add_argument("--sync-rounds", type=int, default=2, help="turns of the sync-cost conditions")
    ap.add_argument(
        "--sync-conditions",
        default=",".join(SYNC_CONDITIONS),
        help=f"which API loads run beside the sync (of {', '.join(SYNC_CONDITIONS)})",
    )
    ap.add_argument(
        "--only-sync",
        action="store_true",
        help="measure only the sync's cost; prints it, writes nothing (the API rows would be lost)",
    )
    ap.add_argument(
        "--depth",
        action="store_true",
        help="measure only listObjects at the first, middle and last offset of a "
        "--depth-objects store (and getSystemMetadata, get beside it); writes its own section",
    )
    ap.add_argument("--depth-objects", type=int, default=1_000_000)
    ap.add_argument("--depth-rounds", type=int, default=3, help="--depth: turns of every figure")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached SQLite store")
    ap.add_argument(
        "--baseline", type=Path, help="also serve with this checkout's code (e.g. the main branch)"
    )
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="take the API rows from benchmarks/out/api-results.json; measure nginx and the sync",
    )
    args = ap.parse_args()
    args.connections = [int(c) for c in args.connections.split(",")]
    args.sync_conditions = tuple(c for c in args.sync_conditions.split(",") if c)
    unknown = set(args.sync_conditions) - set(SYNC_CONDITIONS)
    if unknown:
        ap.error(f"--sync-conditions: unknown {', '.join(sorted(unknown))}")
    if args.only_sync and not args.sync_pages:
        ap.error("--only-sync needs --sync-pages")
    tmp = Path(tempfile.mkdtemp(prefix="bench-api-"))
    try:
        with ExitStack() as cleanup:
            report = (measure_depth if args.depth else measure)(args, tmp, cleanup)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(report)
    if not (args.no_write or args.only_sync):
        write_section(DEPTH_SECTION if args.depth else SECTION, report)


def measure(args: argparse.Namespace, tmp: Path, cleanup: ExitStack) -> str:
    started = datetime.now(UTC)
    loads_at_start = os.getloadavg()
    sqlite, built = apistore.sqlite_store(args.objects, rebuild=args.rebuild)
    print(f"SQLite store {sqlite}: " + (f"built in {built:.1f} s" if built else "cached"))
    engines: list[tuple[str, str, float | None]] = []
    if "sqlite" in args.engines:
        engines.append(("SQLite", f"sqlite:///{sqlite}", built))
    pg_base = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if "postgres" in args.engines and pg_base:
        pg_url = cleanup.enter_context(stores.postgres_schema(pg_base))
        seconds = apistore.build(pg_url, args.objects)
        print(f"PostgreSQL store built in {seconds:.1f} s")
        engines.append(("PostgreSQL", pg_url, seconds))
    pids = apistore.sample_pids(f"sqlite:///{sqlite}", max(1, args.objects // SAMPLE))
    random.Random(7).shuffle(pids)
    if args.only_sync:
        return only_sync(args, started, loads_at_start, sqlite, tmp, pids)
    results: dict[str, dict[str, dict[int, apiload.Load]]] = {}
    d1: dict[str, dict[str, float]] = {}
    servers = [SERVERS[key] for key in args.servers.split(",")]
    if args.baseline:
        before = Server(
            f"waitress, 8 threads, before ({args.baseline})",
            ("--server", "waitress", "--threads", "8"),
        )
        servers.insert(0, replace(before, pythonpath=args.baseline.resolve(), priority=False))
    saved = apistore.CACHE / "api-results.json"
    if args.reuse:
        kept = json.loads(saved.read_text())
        d1 = kept.pop("d1_client", {})
        for label, by_method in kept.items():
            if not label.startswith("nginx"):
                results[label] = {
                    m: {int(c): apiload.Load(**row) for c, row in v.items()}
                    for m, v in by_method.items()
                }
    for engine, url, _ in engines if not args.reuse else []:
        for server in servers:
            label = f"{engine}, {server.name}"
            print(label, flush=True)
            with api_server(url, server, tmp / "serve.log") as (origin, pid):
                results[label] = measure_methods(origin, pid, pids, args.objects, args)
                if server is servers[-1] and args.d1_calls:
                    d1[engine] = d1_client_pass(origin, pids, args.objects, args.d1_calls)
    root = tmp / "nginx"
    nginx_tree(f"sqlite:///{sqlite}", pids, args.objects, root)
    nginx = apiload.Nginx(root, apistore.SHORT)
    try:
        print("nginx, files", flush=True)
        results["nginx, 2 workers, the same bytes from files"] = measure_methods(
            nginx.origin, nginx.proc.pid, pids, args.objects, args
        )
        if nginx.proc.poll() is not None:  # reported beside its rows, never silently
            results["nginx, 2 workers, the same bytes from files (STOPPED during its runs)"] = (
                results.pop("nginx, 2 workers, the same bytes from files")
            )
    finally:
        nginx.stop()
    sync_rows: list[SyncRuns] | str = []
    if args.sync_pages:
        try:
            sync_rows = run_sync_cost(args, sqlite, tmp, pids, servers[-1])
        except RuntimeError as exc:  # reported, not fatal: the API figures stand
            sync_rows = "failed: " + str(exc)[:300].replace("\n", " ")
    rows: dict[str, Any] = {
        k: {m: {c: x.row() for c, x in v.items()} for m, v in r.items()} for k, r in results.items()
    }
    saved.write_text(json.dumps({**rows, "d1_client": d1}, indent=1))
    return render(
        args, started, loads_at_start, engines, results, d1, sync_rows, len(pids), servers[-1].name
    )


DEPTH_SECTION = "## listObjects at depth"
DEPTH_SERVER = Server(
    "granian, 2 workers x 4 threads", ("--server", "granian", "--workers", "2", "--threads", "4")
)


DEPTH_HEADER = (
    "| store | code | getSystemMetadata req/s | get req/s | first request at the last page, ms "
    "| pages/s at first | middle | last | last / first | last / first per server core |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)
DEPTH_MEASURES = ("getSystemMetadata", "get", "first", "middle", "last")


def depth_offsets(objects: int) -> dict[str, int]:
    """The first, middle and last page's `start` (pages of LIST_COUNT)."""
    last = max(0, objects - LIST_COUNT)
    return {"first": 0, "middle": last // 2 // LIST_COUNT * LIST_COUNT, "last": last}


def measure_depth(args: argparse.Namespace, tmp: Path, cleanup: ExitStack) -> str:
    """`--depth`: wrk asks one page again and again at each offset (after one request, so a
    page's one-off work is not in it), and getSystemMetadata and get beside it; with
    --baseline, that checkout's code too. Every server runs at once and the figures take
    turns, server by server and round by round (medians), so the machine's other load
    weighs on each alike."""
    started, loads_at_start = datetime.now(UTC), os.getloadavg()
    objects = args.depth_objects
    sqlite, built = apistore.sqlite_store(objects, rebuild=args.rebuild)
    print(f"SQLite store {sqlite}: " + (f"built in {built:.1f} s" if built else "cached"))
    engines = [("SQLite", f"sqlite:///{sqlite}")] if "sqlite" in args.engines else []
    pg_base = os.environ.get("ADAPTER_TEST_POSTGRES_URL")
    if "postgres" in args.engines and pg_base:
        pg_url = cleanup.enter_context(stores.postgres_schema(pg_base))
        print(f"PostgreSQL store built in {apistore.build(pg_url, objects):.1f} s", flush=True)
        engines.append(("PostgreSQL", pg_url))
    pids = apistore.sample_pids(f"sqlite:///{sqlite}", max(1, objects // SAMPLE))
    random.Random(7).shuffle(pids)
    codes = [("this checkout", DEPTH_SERVER)]
    if args.baseline:
        label = f"{_commit(args.baseline)} (--baseline)"
        codes.insert(0, (label, replace(DEPTH_SERVER, pythonpath=args.baseline)))
    offsets = depth_offsets(objects)
    lines, cpu_lines = [], []
    for engine, url in engines:
        for code, server in codes:
            cpu = page_cpu(url, server.pythonpath, offsets)
            print(f"  {code:14} CPU ms per page {json.dumps(cpu)}", flush=True)
            cpu_lines.append(
                f"| {engine} | {code} | "
                + " | ".join(f"{cpu[name]:.1f}" for name in offsets)
                + f" | {cpu['last'] / cpu['first']:.2f} |"
            )
        with ExitStack() as running:
            served = [
                (code, *running.enter_context(api_server(url, server, tmp / f"serve{i}.log")))
                for i, (code, server) in enumerate(codes)
            ]
            lines += _depth_rows(engine, served, pids, offsets, args)
    return f"""{DEPTH_SECTION}

`benchmarks/api.py --depth`: listObjects pages of {LIST_COUNT:,} on a store of {objects:,}
objects (benchmarks/apistore.py), served by `adapter serve` ({DEPTH_SERVER.name}); wrk
({args.seconds} s per figure, {args.connections[0]} connections) asks the page at one `start`
again and again: the first ({offsets["first"]:,}), the middle ({offsets["middle"]:,}) and the
last ({offsets["last"]:,}), each after 8 requests at once (so every worker has answered it).
"first request": how long the first request at the last page took on the freshly started
server (its one-off work: the window counted, and here the hops to the page's offset).
getSystemMetadata and get cycle through {len(pids):,} PIDs. Rows named after a checkout
are its code (`--baseline`). The servers run side by side and the figures take turns,
server by server, in {args.depth_rounds} rounds: medians; "per server core" divides each
page rate by the CPU the server's processes used meanwhile (the machine is shared with
other jobs, so this is the steadier ratio).

{DEPTH_HEADER}
{chr(10).join(lines)}

What a page costs, without a server and without the machine's other load in it: the CPU
time of one thread listing the page in the store's code (`Store.list_entries`), each page
after its one-off work, the median of 30 turns:

| store | code | CPU ms per page at first | middle | last | last / first |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(cpu_lines)}
{machine_line(args, started, loads_at_start)}"""


def _depth_rows(
    engine: str,
    served: list[tuple[str, str, int]],
    pids: list[str],
    offsets: dict[str, int],
    args: argparse.Namespace,
) -> list[str]:
    """One table row per server (code, origin, pid): the by-PID methods and each offset."""
    cold: dict[str, float] = {}
    for code, origin, _ in served:
        began = time.perf_counter()
        _fetch(f"{origin}/{apistore.SHORT}/v2/object?count={LIST_COUNT}&start={offsets['last']}")
        cold[code] = (time.perf_counter() - began) * 1000
    loads: dict[tuple[str, str], list[apiload.Load]] = {}
    for _round in range(args.depth_rounds):
        for measure in DEPTH_MEASURES:
            for code, origin, pid in served:
                if measure in offsets:
                    path = (
                        f"/{apistore.SHORT}/v2/object?count={LIST_COUNT}&start={offsets[measure]}"
                    )
                    _warm(origin + path)  # the page's one-off work, if any, before the figure
                    verb, paths = "GET", [path]
                else:
                    verb, paths = paths_for(measure, pids, 0)
                load = apiload.wrk(
                    origin,
                    paths,
                    verb=verb,
                    connections=args.connections[0],
                    seconds=args.seconds,
                    server_pid=pid,
                )
                loads.setdefault((code, measure), []).append(load)
                print(f"  {code:14} {measure:18} {json.dumps(load.row())}", flush=True)
                _settle(pid)  # the requests wrk left in flight, before the next server's turn
    rows = []
    for code, _, _ in served:
        rps = {m: statistics.median(x.rps for x in loads[(code, m)]) for m in DEPTH_MEASURES}
        per_core = {
            m: statistics.median(x.rps / max(x.server_cores, 0.01) for x in loads[(code, m)])
            for m in offsets
        }
        rows.append(
            f"| {engine} | {code} | {rps['getSystemMetadata']:,.0f} | {rps['get']:,.0f} "
            f"| {cold[code]:,.0f} | {rps['first']:,.1f} | {rps['middle']:,.1f} "
            f"| {rps['last']:,.1f} | {rps['last'] / max(rps['first'], 0.01):.2f} "
            f"| {per_core['last'] / max(per_core['first'], 0.01):.2f} |"
        )
    return rows


PAGE_CPU = """
import json, statistics, sys, time
from adapter.store.db import Store
from adapter.store.listing import Window
store = Store.open(sys.argv[1], create=False)
window, starts, count = Window(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
for start in starts:  # each page's one-off work first
    store.list_entries(window, start=start, count=count)
cpu = {start: [] for start in starts}
for _ in range(int(sys.argv[5])):
    for start in starts:
        began = time.thread_time()
        store.list_entries(window, start=start, count=count)
        cpu[start].append(time.thread_time() - began)
print(json.dumps([statistics.median(cpu[start]) * 1000 for start in starts]))
"""


def page_cpu(url: str, code: Path, offsets: dict[str, int], rounds: int = 30) -> dict[str, float]:
    """CPU ms of one page at each offset in the store's own code (`code`'s checkout), one
    thread, no server: the median of `rounds` turns, each page after its one-off work."""
    starts = json.dumps(list(offsets.values()))
    done = subprocess.run(
        [PYTHON, "-c", PAGE_CPU, url, apistore.NODE, starts, str(LIST_COUNT), str(rounds)],
        capture_output=True,
        text=True,
        check=True,
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    return dict(zip(offsets, json.loads(done.stdout), strict=True))


def _commit(checkout: Path) -> str:
    """The checkout's commit, short, or its path where it is no git checkout."""
    found = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return found.stdout.strip() or str(checkout)


def _settle(pid: int, limit: float = 60.0) -> None:
    """Wait until the server's processes are idle (a deep page asked by wrk's connections as
    its run ended went on taking CPU during the next server's run: measured, it halved it)."""
    deadline = time.monotonic() + limit
    before = apiload.tree_cpu(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = apiload.tree_cpu(pid)
        if now - before < 0.05:
            return
        before = now


def _fetch(url: str) -> None:
    with urllib.request.urlopen(url, timeout=600) as answer:
        answer.read()


def _warm(url: str, connections: int = 8) -> None:
    """`url` from several connections at once, so every granian worker has answered it."""
    with ThreadPoolExecutor(connections) as pool:
        list(pool.map(lambda _: _fetch(url), range(connections)))


def run_sync_cost(
    args: argparse.Namespace, sqlite: Path, tmp: Path, pids: list[str], server: Server
) -> list[SyncRuns]:
    return sync_cost(
        sqlite,
        tmp,
        args.sync_pages,
        pids,
        args.objects,
        server,
        args.low_priority,
        args.sync_rounds,
        args.sync_conditions,
    )


def only_sync(
    args: argparse.Namespace,
    started: datetime,
    loads_at_start: tuple[float, float, float],
    sqlite: Path,
    tmp: Path,
    pids: list[str],
) -> str:
    """`--only-sync`: the sync-cost table alone, served by the last of `--servers`."""
    server = SERVERS[args.servers.split(",")[-1]]
    table = sync_table(args, run_sync_cost(args, sqlite, tmp, pids, server), server.name)
    return table + machine_line(args, started, loads_at_start)


def sync_table(args: argparse.Namespace, sync_rows: list[SyncRuns] | str, sync_server: str) -> str:
    """The "Serving while a sync writes" paragraph and table (empty when not measured)."""
    if isinstance(sync_rows, str):
        return f"\nServing while a sync writes: not measured, the runs {sync_rows}\n"
    if not sync_rows:
        return ""
    sync_lines = [_sync_line(run) for run in sync_rows]
    return f"""
Serving while a sync writes (`adapter sync` of {args.sync_pages:,} generated landing pages,
benchmarks/synthrepo.py on nginx, into a copy of the SQLite store that `adapter serve`
answers from ({sync_server}); wrk asks for getSystemMetadata and get in turns. The
conditions take turns ({args.sync_rounds} rounds), each run between two runs of the sync alone;
cost: each run against the mean of those two, the median and the range of these ratios (the
runs alone show how much the machine's other load moved). Beside every load, one client at
the sync's priority asks getSystemMetadata 10 times a second, as the coordinating node would
from another machine: its p99 is what the CN waits (both columns: medians of the runs).

| sync | runs (s) | median s | cost, median (range) | API req/s meanwhile | CN-like p99 ms |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(sync_lines)}
"""


def _sync_line(run: SyncRuns) -> str:
    """One row of the sync-cost table."""
    cost = "+0 %"
    if run.ratios:
        low, mid, high = (min(run.ratios), statistics.median(run.ratios), max(run.ratios))
        cost = f"{(mid - 1) * 100:+.0f} % ({(low - 1) * 100:+.0f} to {(high - 1) * 100:+.0f})"
    rps = f"{statistics.median(run.rps):,.0f}" if run.rps else ""
    p99 = f"{statistics.median(run.probe_p99):.1f}" if run.probe_p99 else ""
    return (
        f"| {run.load.label} | {', '.join(f'{x:.1f}' for x in run.seconds)} "
        f"| {statistics.median(run.seconds):.1f} | {cost} | {rps} | {p99} |"
    )


def machine_line(
    args: argparse.Namespace, started: datetime, loads_at_start: tuple[float, float, float]
) -> str:
    ended = os.getloadavg()
    command = "PYTHONPATH=. .venv/bin/python benchmarks/api.py " + " ".join(sys.argv[1:])
    reused = (
        " (API rows from the previous run: benchmarks/out/api-results.json)" if args.reuse else ""
    )
    return f"""
Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()};
load average {loads_at_start[0]:.1f} at the start, {ended[0]:.1f} at the end (other jobs
share the machine). Measured {started:%Y-%m-%d %H:%M} UTC with `{command.strip()}`{reused}.
"""


def render(
    args: argparse.Namespace,
    started: datetime,
    loads_at_start: tuple[float, float, float],
    engines: list[tuple[str, str, float | None]],
    results: dict[str, dict[str, dict[int, apiload.Load]]],
    d1: dict[str, dict[str, float]],
    sync_rows: list[SyncRuns] | str,
    sampled: int,
    sync_server: str,
) -> str:
    nginx_key = next(k for k in results if k.startswith("nginx"))
    top = max(args.connections)
    lines = [
        "| server | method | clients | req/s | entries/s | mean ms | p99 ms | "
        "server cores | req per server core-second | wrk cores | vs nginx |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, by_method in results.items():
        for method, by_conns in by_method.items():
            for conns, load in by_conns.items():
                ratio = load.rps / max(results[nginx_key][method][conns].rps, 0.1)
                entries = f"{load.rps * LIST_COUNT:,.0f}" if method == "listObjects" else ""
                errors = f" ({load.errors} errors)" if load.errors else ""
                lines.append(
                    f"| {label} | {method} | {conns} | {load.rps:,.0f}{errors} | {entries} "
                    f"| {load.mean_ms:.1f} | {load.p99_ms:.1f} | {load.server_cores:.2f} "
                    f"| {load.rps / max(load.server_cores, 0.01):,.0f} "
                    f"| {load.wrk_cores:.2f} | {ratio:.2f} |"
                )
    builds = "; ".join(
        f"{name} {seconds:.0f} s" if seconds else f"{name} cached (built earlier)"
        for name, _, seconds in engines
    )
    d1_lines = [
        f"| {engine} | " + " | ".join(f"{rates[m]:,.0f}" for m in METHODS) + " |"
        for engine, rates in d1.items()
    ]
    sync_text = sync_table(args, sync_rows, sync_server)
    plot = {
        label: {m: by_method[m][top].rps for m in METHODS if m in by_method}
        for label, by_method in results.items()
    }
    PLOT.write_text(bar_svg(plot, f"API requests per second by method, {top} clients"))
    return f"""{SECTION}

`benchmarks/api.py`: the Member Node API on a store of {args.objects:,} objects written as
the sync writes them (the sync's candidate, record and statements, in batches: {builds}),
served by `adapter serve`; wrk ({args.seconds} s per row, 2 threads) cycles through
{sampled:,} of the PIDs (listObjects: every page of {LIST_COUNT:,} by `start`, shuffled).
nginx serves the same bytes and the same pre-built XML from files at the same paths in the
same run ("vs nginx": the API's req/s over nginx's). "server cores" and "wrk cores" are CPU
seconds per second of the server's process tree and of wrk: both share the machine's
{os.cpu_count()} cores, unpinned.

![API requests per second by method](benchmarks/api-rps.svg)

{chr(10).join(lines)}

DataONE's own client (`d1_client.mnclient_2_0.MemberNodeClient_2_0`) against
{sync_server}, one caller in sequence, calls per second (listObjects: pages of
{LIST_COUNT:,}); its time goes mostly to the client's own parsing (pyxb), so it is no
measure of the server:

| store | {" | ".join(METHODS)} |
| --- | {" | ".join("---" for _ in METHODS)} |
{chr(10).join(d1_lines)}
{sync_text}{machine_line(args, started, loads_at_start)}"""


if __name__ == "__main__":
    main()
