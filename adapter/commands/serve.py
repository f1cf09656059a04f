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

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import click

from adapter.commands.args import BadValue, epilog
from adapter.commands.serving import listen, serve_until_stopped
from adapter.commands.serving_announce import announce, announce_ops, host_for_url, reachable
from adapter.commands.serving_app import application
from adapter.commands.serving_choice import GRANIAN_THREADS, WAITRESS_THREADS, Server, choose_server
from adapter.commands.serving_notify import (
    announce_notify,
    notify_front,
    start_notify_process,
    wake,
)
from adapter.commands.serving_priority import DEFAULT_IDLE, DEFAULT_NICE, lower_priority
from adapter.commands.serving_settings import (
    member_node,
    require_existing_file,
    serve_settings,
)
from adapter.commands.web import ops_secret
from adapter.config.settings import NodeSettings
from adapter.errors import ConfigError
from adapter.service.logsetup import LogFormat, configure

if TYPE_CHECKING:  # the API's types, without importing it for `adapter --help`
    from adapter.api.auth import Authority
    from adapter.store.accesslog import LogRetention

MAX_REQUEST_BODY = 1024 * 1024  # only POST /error has a body (read up to 64 KiB)


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
    require_existing_file(url)
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
    app = application(store, api, settings, bool(config_path), (with_ops, ops_token), threads)
    front = notify_front(store, settings)
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
    bound = f"http://{host_for_url(host)}:{server.effective_port}"
    listen_url = f"http://{host_for_url(reachable(host))}:{server.effective_port}"
    api.serve_nodes([member_node(s, listen_url, public_url) for s in settings])
    if front is not None:
        front.bind(public_url or listen_url)

    def announce_started() -> None:
        announce(
            settings, bound, f"Serving {len(settings)} node(s) from {url} {runner}; Ctrl-C stops."
        )
        announce_ops(bound, with_ops, ops_token)
        announce_notify(bound, front)

    access_log.start()
    if front is not None:
        front.start()
    try:
        serve_until_stopped(server, announce_started)
    finally:
        if front is not None:
            front.close()  # the outbox keeps what was not delivered
        access_log.close()  # writes the reads still waiting
        store.close()


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
    bound = f"http://{host_for_url(host)}:{port}"
    listen_url = f"http://{host_for_url(reachable(host))}:{port}"
    nodes = [member_node(s, listen_url, public_url) for s in settings]
    notifying = [s for s in settings if s.notify.enabled]
    worker = None
    if notifying:  # before granian forks: the process is spawned, it inherits no thread
        worker = start_notify_process(url, notifying, public_url or listen_url, logs)

    def build() -> tuple[Any, Callable[[], None]]:
        store = Store.open(url, create=False)
        access_log = EventBuffer(StoreSink(store, retention))  # reads are logged in batches
        api = MemberNodeApp(
            store, nodes, access_log=access_log, authority=authority, retention=retention
        )
        app = application(store, api, settings, configured, ops, server.threads)
        if notifying:
            from adapter.notify.front import NotifyFront

            front = NotifyFront(store, notifying, worker=False)  # the worker is a process
            app = front.wrap(app)
            front.bind(public_url or listen_url)
            if worker is not None:  # its pid, known before the fork: wake it by a signal
                front.inbox.wake = partial(wake, worker.pid)
        access_log.start()

        def at_exit() -> None:
            access_log.close()  # writes the reads still waiting
            store.close()

        return app, at_exit

    def announce_started() -> None:
        announce(
            settings, bound, f"Serving {len(settings)} node(s) from {url} {server}; Ctrl-C stops."
        )
        announce_ops(bound, *ops)
        if notifying:
            names = ", ".join(n.short_name for n in notifying)
            click.echo(f"COAR Notify inbox: {bound}/inbox (for {names})", err=True)

    try:
        serve_forked(
            build,
            host,
            port,
            workers=server.workers,
            threads=server.threads,
            announce=announce_started,
        )
    finally:
        if worker is not None:
            worker.terminate()  # SIGTERM: it stops its threads; the outbox keeps the rest
            worker.join(timeout=60)
