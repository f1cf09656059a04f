"""`adapter serve`: the DataONE Member Node read API over the store, under waitress or granian.

The check page (`adapter web`) is served beside it, at `/check` and `/findings`,
and with `--ops` the operator view of the store at `/ops`. When a node has a `notify:`
section, COAR Notify's inbox answers at `/inbox` and its worker (adapter.notify) checks the
pages asked for and sends the answers: a thread pair under waitress, a process of its own
beside granian's workers.

Under granian (the `granian` extra: one forked worker per core,
adapter.commands.serving_granian) when it is installed and the port is fixed, else under
waitress (one process), it serves every configured node at `http://HOST:PORT/<short name>/v2`,
and says at start which server answers and why.
It opens the store without migrating it (the API never writes anything but
synchronization failures and, in batches, the access log of getLogRecords), so it can
run beside a sync writing to the same SQLite file (WAL) or PostgreSQL database.

The Node document's baseURL comes only from configuration: `--public-url`,
else the node's `dataone.base_url`, else the address and port the server
listens on (loopback when it listens on every address). Quick mode (`--store`
without `--config`) has no subjects of its own: `--submitter`,
`--rights-holder` and `--contact-subject` give them, else the
`PLACEHOLDER_SUBJECTS` are used and a warning says so.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from adapter.api.call import MemberNode
from adapter.api.schedule import Schedule, harvest_schedule
from adapter.api.xml import NodeInfo
from adapter.commands.args import BadValue, epilog
from adapter.commands.serving import listen, serve_until_stopped
from adapter.commands.web import ops_secret
from adapter.config.load import load_config, placeholder_subjects, quick_node
from adapter.config.settings import AccessLogSettings, AuthSettings, NodeSettings
from adapter.errors import ConfigError, StoreError
from adapter.extras import install_hint, installed, require
from adapter.service.logsetup import LogFormat, configure

if TYPE_CHECKING:  # the API's types, without importing it for `adapter --help`
    from adapter.api.auth import Authority
    from adapter.notify.front import NotifyFront
    from adapter.store.accesslog import LogRetention

log = logging.getLogger(__name__)

MAX_REQUEST_BODY = 1024 * 1024  # only POST /error has a body (read up to 64 KiB)
# `--store` without a configuration has no repository; serving never reads this.
_NO_REPOSITORY = "https://repository.invalid/"


def member_node(
    settings: NodeSettings, listen_url: str, public_url: str | None = None
) -> MemberNode:
    """What the API needs of a configured node: its Node document and its sysmeta writer.

    The Node document's baseURL is `public_url/<short name>` when given (the
    server sits behind a proxy), else the node's `dataone.base_url`, else
    `listen_url/<short name>` (where this server listens); never a request's
    Host header. Its schedule is the sync's cron in UTC, shifted by
    `dataone.harvest_delay_minutes` (adapter.api.schedule).
    """
    # lazy: every command module loads for `adapter --help`
    from adapter.api.auth import node_access
    from adapter.api.sysmeta import SysmetaWriter

    base_url = str(settings.dataone.base_url or "")
    if public_url or not base_url:
        base_url = f"{(public_url or listen_url).rstrip('/')}/{settings.short_name}"
    schedule = settings.schedule

    def harvest(now: datetime) -> Schedule:
        return harvest_schedule(
            schedule.cron,
            schedule.interval_minutes,
            schedule.timezone,
            now,
            settings.dataone.harvest_delay_minutes,
        )

    info = NodeInfo(
        id=settings.id,
        name=settings.name,
        description=settings.description or f"{settings.name}: a schema.org slender node",
        contact_subject=settings.dataone.contact_subject,
        schedule=harvest(datetime.now(UTC)),
        base_url=_versionless(base_url),
    )
    return MemberNode(info, SysmetaWriter(settings), harvest, node_access(settings))


def _versionless(url: str) -> str:
    """The Node document's baseURL carries no API version (D1-API getCapabilities example)."""
    url = url.rstrip("/")
    for suffix in ("/v1", "/v2"):
        url = url.removesuffix(suffix)
    return url


WAITRESS_THREADS = 8
GRANIAN_THREADS = 4  # per worker: benchmarks/api.py measures 2 workers x 4 threads


@dataclass(frozen=True, slots=True)
class Server:
    """Which WSGI server answers, with how many processes and threads, and why that one."""

    kind: Literal["waitress", "granian"]
    workers: int
    threads: int
    why: str = ""  # why waitress when granian was not asked for

    def __str__(self) -> str:
        if self.kind == "granian":
            return f"with granian, {self.workers} worker(s) of {self.threads} threads"
        return f"with waitress, {self.threads} threads" + (f" ({self.why})" if self.why else "")


def cores() -> int:
    """The cores this process may run on (its affinity where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def choose_server(kind: str | None, workers: int | None, threads: int | None, port: int) -> Server:
    """The server `adapter serve` runs: granian when asked, or when installed and the port is
    fixed (its workers share one port the system cannot choose), else waitress.

    Asking for granian (`--server granian`, or `--workers`) without it installed says which
    extra to install; `--workers` under waitress, which runs one process, is a usage error.
    """
    if kind == "waitress":
        if workers is not None and workers > 1:
            raise click.UsageError("--workers needs granian (waitress runs one process)")
        return Server("waitress", 1, threads or WAITRESS_THREADS)
    asked = kind == "granian" or workers is not None
    if asked:
        require("granian", "--server granian" if kind == "granian" else "--workers")
    elif not installed("granian"):
        why = "granian is not installed; for several times the requests per second: "
        why += install_hint("granian")
        return Server("waitress", 1, threads or WAITRESS_THREADS, why)
    elif port == 0:
        why = "--port 0: granian's workers need a fixed --port"
        return Server("waitress", 1, threads or WAITRESS_THREADS, why)
    return Server("granian", workers or cores(), threads or GRANIAN_THREADS)


NO_AUTH = AuthSettings()
# the API's CPU priority unless told: beside a full-speed sync on 2 shared cores, an API at full
# speed cost the sync 22 % at niceness 0, 5-13 % at 10 and 3-6 % under SCHED_IDLE, where the
# coordinating node's p99 wait grew from 60-70 ms to 180-200 ms (benchmarks/api.py, operate.md)
DEFAULT_NICE = 10
DEFAULT_IDLE = True
DEFAULT_ACCESS_LOG = AccessLogSettings()


@dataclass(frozen=True, slots=True)
class ServeSettings:
    store_url: str
    nodes: list[NodeSettings]
    log_format: LogFormat = "human"
    log_level: str = "INFO"
    auth: AuthSettings = NO_AUTH  # quick mode verifies no token
    access_log: AccessLogSettings = DEFAULT_ACCESS_LOG
    ops_token: str | None = None  # the operator's secret for /ops


def lower_priority(niceness: int, idle: bool) -> None:
    """Yield the CPU to a sync on shared cores, in every thread and so in every worker started
    later: raise the niceness to `niceness` (never lower it: that needs privileges) and, when
    `idle`, run under SCHED_IDLE (Linux), which takes only the CPU time nothing else wants."""
    policy = getattr(os, "SCHED_IDLE", None) if idle else None
    for tid in _threads():
        with suppress(ProcessLookupError):  # a thread that ended meanwhile
            current = os.getpriority(os.PRIO_PROCESS, tid)
            if niceness > current:
                os.setpriority(os.PRIO_PROCESS, tid, niceness)
            if policy is not None:
                os.sched_setscheduler(tid, policy, os.sched_param(0))
    if idle and policy is None:
        log.warning("--idle: this system has no SCHED_IDLE; the API runs at niceness %d", niceness)


def _threads() -> list[int]:
    """This process's thread ids (Linux: niceness and policy are per thread), else itself."""
    try:
        return [int(tid) for tid in os.listdir("/proc/self/task")]
    except FileNotFoundError:
        return [0]


def serve_settings(
    config_path: str | None,
    store_url: str | None,
    node_ids: tuple[str, ...],
    subjects: dict[str, str | None] | None = None,
) -> ServeSettings:
    """The store and nodes to serve, from a configuration file or `--store` and `--node-id`.

    `subjects` (submitter, rights_holder, contact_subject) are quick mode's;
    a configuration file has its own.
    """
    if config_path:
        config = load_config(config_path)
        nodes = list(config.nodes)
        if node_ids:
            try:
                nodes = [config.node(node_id) for node_id in node_ids]
            except KeyError as exc:
                raise ConfigError(f"{config_path}: no node {exc.args[0]!r}") from None
        return ServeSettings(
            store_url or config.store_url,
            nodes,
            config.log_format,
            config.log_level,
            config.auth,
            config.access_log,
            config.ops_token,
        )
    if not store_url:
        raise click.UsageError("give --config FILE, or --store URL (with --node-id ID)")
    if not node_ids:
        from adapter.store.db import Store  # lazy: every command module loads for `adapter --help`

        store = Store.open(store_url, create=False)
        try:
            node_ids = tuple(store.node_ids())
        finally:
            store.close()
        if not node_ids:
            raise ConfigError(f"{store_url}: no node has records yet; give --node-id")
    given = {key: value for key, value in (subjects or {}).items() if value}
    nodes = [quick_node(_NO_REPOSITORY, node_id, dataone=given) for node_id in node_ids]
    return ServeSettings(store_url, nodes)


@click.command(
    "serve",
    epilog=epilog(
        "adapter serve --config node.yaml --port 8080",
        "adapter serve --store sqlite:///harvest.db --node-id urn:node:EXAMPLE",
        exits="0 after SIGTERM, 2 a busy port or a bad store, 130 Ctrl-C.",
    ),
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Node YAML file.")
@click.option("--store", "store_url", help="Store URL (sqlite:///file.db, postgresql://...).")
@click.option("--node-id", "node_ids", multiple=True, help="Serve only this node (repeatable).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--threads",
    type=click.IntRange(1, 256),
    help=f"Threads per process answering requests (default: {WAITRESS_THREADS} under waitress, "
    f"{GRANIAN_THREADS} in each granian worker).",
)
@click.option(
    "--server",
    "server_kind",
    type=click.Choice(["waitress", "granian"]),
    help="granian: --workers processes, HTTP parsed in Rust (several times waitress's requests "
    "per second; the `granian` extra); waitress: one process. Default: granian when it is "
    "installed and --port is fixed, else waitress; the server says which when it starts.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="granian's processes answering requests (default: one per core).",
)
@click.option(
    "--log-format",
    type=click.Choice(["human", "json"]),
    help="Log lines for people or JSON lines (default: log_format in the file, else human).",
)
@click.option(
    "--public-url",
    help="Public URL the nodes are reached under (behind a proxy): "
    "baseURL = PUBLIC_URL/<short name> (default: dataone.base_url, else where it listens).",
)
@click.option("--submitter", help="Quick mode: the submitter subject (default: a placeholder).")
@click.option(
    "--rights-holder", help="Quick mode: the rightsHolder subject (default: a placeholder)."
)
@click.option(
    "--contact-subject",
    help="Quick mode: the Node document's contactSubject (default: a placeholder).",
)
@click.option(
    "--nice",
    "niceness",
    default=DEFAULT_NICE,
    show_default=True,
    type=click.IntRange(0, 19),
    help="Run at this CPU niceness at least (0: as started): on cores shared with a sync, "
    "the API then takes the cores the sync leaves, and a busy API no longer doubles the "
    "sync's time; on idle cores it changes nothing.",
)
@click.option(
    "--idle/--no-idle",
    default=DEFAULT_IDLE,
    show_default=True,
    help="Run under Linux's SCHED_IDLE policy: the API takes only CPU time nothing else on "
    "the machine wants, so a sync on the same cores comes first (its clients wait longer "
    "while the sync is busy); --no-idle when other busy programs share the cores and the "
    "API must keep a share of them (then only --nice applies).",
)
@click.option(
    "--ops",
    "with_ops",
    is_flag=True,
    help="Also serve the operator view of the store at /ops. It shows every page's report, "
    "so it answers only callers on a loopback address or who present the operator's secret "
    "(ops_token in the configuration, or ADAPTER_OPS_TOKEN in the environment).",
)
def serve(
    config_path: str | None,
    store_url: str | None,
    node_ids: tuple[str, ...],
    host: str,
    port: int,
    threads: int | None,
    log_format: str | None,
    public_url: str | None,
    submitter: str | None,
    rights_holder: str | None,
    contact_subject: str | None,
    with_ops: bool = False,
    server_kind: str | None = None,
    workers: int | None = None,
    niceness: int = DEFAULT_NICE,
    idle: bool = DEFAULT_IDLE,
) -> None:
    """Serve the DataONE Member Node read API (v2 and v1) for each node."""

    from adapter.api.accesslog import EventBuffer, StoreSink, retention_from
    from adapter.api.auth import authority_from
    from adapter.store.db import Store  # lazy: every command module loads for `adapter --help`

    subjects = {
        "submitter": submitter,
        "rights_holder": rights_holder,
        "contact_subject": contact_subject,
    }
    if config_path and any(subjects.values()):
        raise click.UsageError(
            "--submitter, --rights-holder and --contact-subject are for quick mode; "
            "with --config, set them in the file's dataone section"
        )
    chosen = serve_settings(config_path, store_url, node_ids, subjects)
    url, settings = chosen.store_url, chosen.nodes
    fmt: LogFormat = chosen.log_format
    if log_format in ("human", "json"):
        fmt = "json" if log_format == "json" else "human"
    configure(fmt, chosen.log_level)
    if public_url and not public_url.startswith(("http://", "https://")):
        raise click.BadParameter("must be an absolute http(s) URL", param_hint="--public-url")
    _require_existing_file(url)
    try:
        authority = authority_from(chosen.auth)  # read the CN's certificate once, now
    except ValueError as exc:
        raise ConfigError(f"auth.cn_certificate: {exc}") from None
    retention = retention_from(chosen.access_log)
    ops_token = ops_secret(chosen.ops_token) if with_ops else None
    runner = choose_server(server_kind, workers, threads, port)
    lower_priority(niceness, idle)  # before granian's workers start: they inherit it
    if runner.kind == "granian":
        _serve_granian(
            url,
            settings,
            bool(config_path),
            (with_ops, ops_token),
            host,
            port,
            runner,
            public_url,
            authority,
            retention,
            (fmt, chosen.log_level),
        )
        return
    threads = runner.threads
    store = Store.open(url, create=False)
    # lazy: every command module loads for `adapter --help`, which needs no API
    from adapter.api.app import MemberNodeApp

    access_log = EventBuffer(StoreSink(store, retention))  # reads are logged in batches
    api = MemberNodeApp(  # nodes once the port is known
        store, [], access_log=access_log, authority=authority, retention=retention
    )
    app = _application(store, api, settings, bool(config_path), (with_ops, ops_token), threads)
    front = _notify_front(store, settings)
    if front is not None:
        app = front.wrap(app)
    try:
        server = listen(
            app,
            host,
            port,
            threads=threads,
            ident="adapter",
            max_request_body_size=MAX_REQUEST_BODY,
            clear_untrusted_proxy_headers=True,
        )
    except BadValue:
        store.close()
        raise
    bound = f"http://{_host_for_url(host)}:{server.effective_port}"
    listen_url = f"http://{_host_for_url(_reachable(host))}:{server.effective_port}"
    api.serve_nodes([member_node(s, listen_url, public_url) for s in settings])
    if front is not None:
        front.bind(public_url or listen_url)

    def announce() -> None:
        _announce(
            settings, bound, f"Serving {len(settings)} node(s) from {url} {runner}; Ctrl-C stops."
        )
        _announce_ops(bound, with_ops, ops_token)
        _announce_notify(bound, front)

    access_log.start()
    if front is not None:
        front.start()
    try:
        serve_until_stopped(server, announce)
    finally:
        if front is not None:
            front.close()  # the outbox keeps what was not delivered
        access_log.close()  # writes the reads still waiting
        store.close()


def _notify_front(store: Any, settings: list[NodeSettings]) -> NotifyFront | None:
    """COAR Notify's inbox and worker when a node configures `notify:` (the `notify` extra)."""
    if not any(s.notify.enabled for s in settings):
        return None
    require("coarnotify", "notify: in the configuration (COAR Notify)")
    # lazy: every command module loads for `adapter --help`, which needs no coarnotify
    from adapter.notify.front import NotifyFront, notify_nodes

    return NotifyFront(store, notify_nodes(settings))


def _announce_notify(bound: str, front: NotifyFront | None) -> None:
    if front is not None:
        names = ", ".join(n.short_name for n in front.nodes)
        click.echo(f"COAR Notify inbox: {bound}/inbox (for {names})", err=True)


def _announce_ops(bound: str, with_ops: bool, token: str | None) -> None:
    if with_ops:
        who = (
            "loopback callers, or with the operator's secret"
            if token
            else ("loopback callers only: no operator's secret is set")
        )
        click.echo(f"Operator view: {bound}/ops ({who})", err=True)


def _application(
    store: Any,
    api: Any,
    settings: list[NodeSettings],
    configured: bool,
    ops: tuple[bool, str | None],
    threads: int,
) -> Any:
    """The API with /metrics and the health checks, and the check page (and /ops) beside it."""
    from adapter.commands.web import build_app, operator_view
    from adapter.service.metrics import Metrics, OpsApp
    from adapter.web.mount import Mount

    metrics = Metrics()
    metrics.collect_store(store)
    view = operator_view(store, settings if configured else (), ops[1]) if ops[0] else None
    origins = (o for s in settings for o in s.trusted_origins())
    web = build_app(origins, ops=view, max_checks=max(1, threads // 2))
    return Mount(web, OpsApp(metrics, store, api), [s.short_name for s in settings])


def _serve_granian(
    url: str,
    settings: list[NodeSettings],
    configured: bool,
    ops: tuple[bool, str | None],
    host: str,
    port: int,
    server: Server,
    public_url: str | None,
    authority: Authority,
    retention: LogRetention,
    logs: tuple[LogFormat, str] = ("human", "INFO"),
) -> None:
    """`adapter serve --server granian`: each worker opens the store and builds the app;
    COAR Notify's inbox answers in every worker, its worker runs in a process of its own."""
    from adapter.api.accesslog import EventBuffer, StoreSink
    from adapter.api.app import MemberNodeApp
    from adapter.commands.serving_granian import serve_forked
    from adapter.store.db import Store

    Store.open(url, create=False).close()  # a wrong schema stops here, before any worker
    bound = f"http://{_host_for_url(host)}:{port}"
    listen_url = f"http://{_host_for_url(_reachable(host))}:{port}"
    nodes = [member_node(s, listen_url, public_url) for s in settings]
    notifying = [s for s in settings if s.notify.enabled]
    worker = None
    if notifying:  # before granian forks: the process is spawned, it inherits no thread
        require("coarnotify", "notify: in the configuration (COAR Notify)")
        context = multiprocessing.get_context("spawn")
        args = (url, notifying, public_url or listen_url, logs, os.getpid())
        worker = context.Process(target=notify_process, args=args, name="adapter-notify")
        # ignored from its start (a disposition exec keeps) until it can handle the wake-up:
        # SIGUSR1's default would end it
        previous = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        try:
            worker.start()
        finally:
            signal.signal(signal.SIGUSR1, previous)

    def build() -> tuple[Any, Callable[[], None]]:
        store = Store.open(url, create=False)
        access_log = EventBuffer(StoreSink(store, retention))  # reads are logged in batches
        api = MemberNodeApp(
            store, nodes, access_log=access_log, authority=authority, retention=retention
        )
        app = _application(store, api, settings, configured, ops, server.threads)
        if notifying:
            from adapter.notify.front import NotifyFront

            front = NotifyFront(store, notifying, worker=False)  # the worker is a process
            app = front.wrap(app)
            front.bind(public_url or listen_url)
            if worker is not None:  # its pid, known before the fork: wake it by a signal
                front.inbox.wake = partial(_wake, worker.pid)
        access_log.start()

        def at_exit() -> None:
            access_log.close()  # writes the reads still waiting
            store.close()

        return app, at_exit

    def announce() -> None:
        _announce(
            settings, bound, f"Serving {len(settings)} node(s) from {url} {server}; Ctrl-C stops."
        )
        _announce_ops(bound, *ops)
        if notifying:
            names = ", ".join(n.short_name for n in notifying)
            click.echo(f"COAR Notify inbox: {bound}/inbox (for {names})", err=True)

    try:
        serve_forked(
            build, host, port, workers=server.workers, threads=server.threads, announce=announce
        )
    finally:
        if worker is not None:
            worker.terminate()  # SIGTERM: it stops its threads; the outbox keeps the rest
            worker.join(timeout=60)


def _wake(pid: int | None) -> None:
    """Tell the notify process the inbox took something (it also looks every 5 s)."""
    if pid is not None:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGUSR1)


def notify_process(
    url: str,
    nodes: list[NodeSettings],
    public_url: str,
    logs: tuple[LogFormat, str],
    parent: int,
) -> None:
    """COAR Notify's worker in a process of its own, beside granian's workers (which answer
    the inbox and wake it with SIGUSR1). It stops on SIGTERM, or when the server that
    started it is gone."""
    from adapter.notify.worker import NotifyWorker
    from adapter.store.db import Store

    configure(*logs)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the server, which stops us
    store = Store.open(url, create=False)
    worker = NotifyWorker(store, nodes, public_url, poll=5.0)
    signal.signal(signal.SIGUSR1, lambda *_: worker.wake())  # the inbox took something
    worker.start()
    try:
        while not stop.wait(1.0) and os.getppid() == parent:
            pass
    finally:
        worker.close()
        store.close()


def _announce(settings: list[NodeSettings], bound: str, serving: str) -> None:
    """What a started server tells its operator: the nodes' addresses, then the rest."""
    _warn_placeholders(settings)
    for s in settings:
        click.echo(f"{s.id}: {bound}/{s.short_name}/v2")
    click.echo(f"Metrics: {bound}/metrics; health: {bound}/healthz, {bound}/readyz", err=True)
    click.echo(f"check page: {bound}/check", err=True)
    click.echo(serving, err=True)


def _require_existing_file(url: str) -> None:
    """Serving only reads: a SQLite file that is not there is an error, not a new empty store."""
    if url.startswith("sqlite:///") and ":memory:" not in url:
        path = Path(url.removeprefix("sqlite:///").split("?", 1)[0])
        if not path.is_file():
            raise StoreError(
                f"{url}: no store file at {path}; run `adapter sync` (or `adapter db upgrade`) "
                "to create it"
            )


def _warn_placeholders(settings: list[NodeSettings]) -> None:
    for s in settings:
        placeholders = placeholder_subjects(s)
        if placeholders:
            names = ", ".join(placeholders)
            click.echo(
                f"{s.id}: {names} are placeholder subjects (CN=adapter-placeholder-...); "
                "give --submitter/--rights-holder/--contact-subject or a --config file",
                err=True,
            )


def _reachable(host: str) -> str:
    """The loopback address for a wildcard listen address (a baseURL must name a host)."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host
