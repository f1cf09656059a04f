"""`adapter web`: the check page for repository managers, under waitress.

Anyone who reaches the page can make the server fetch a URL, so a typed URL
may reach public addresses only; the origins of the nodes in `--config`, and
each `--trust URL`, are trusted as on the command line (a repository on the
operator's own network). Each client address may start at most `--rate-limit`
checks a minute, counted in a SQLite file that every server process shares.

With `--ops` and a store (`--store`, or the store of `--config`) the
operator's view of it is served at `/ops` too: nodes with their profile, last
and next runs, every page and finding code down to the stored reports, the
queue. It holds every page's report, so it answers only callers on a loopback
address, or who present the operator's secret (`ops_token` in the
configuration, or ADAPTER_OPS_TOKEN): `Authorization: Bearer SECRET`, or the
secret typed once into /ops/login.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from adapter.commands.args import epilog
from adapter.commands.serving import listen, serve_until_stopped
from adapter.service.logsetup import configure

if TYPE_CHECKING:
    from adapter.config.settings import NodeSettings
    from adapter.store.db import Store
    from adapter.web.app import WebApp
    from adapter.web.ops import Ops

DEFAULT_RATE = 30  # checks a minute per client address
DEFAULT_DEADLINE = 30.0  # seconds for one check
MAX_FORM_BODY = 11 * 1024 * 1024  # a page's worth of pasted HTML (max_page_bytes) and the form


@click.command(
    "web",
    epilog=epilog(
        "adapter web --config node.yaml --port 8090",
        "adapter web --config node.yaml --ops    # /ops: loopback callers only",
        "ADAPTER_OPS_TOKEN=... adapter web --config node.yaml --ops --host 0.0.0.0",
        "adapter web --trust http://127.0.0.1:8737/ --rate-limit 60",
        exits="0 after SIGTERM, 2 a busy port or a bad store, 130 Ctrl-C.",
    ),
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Node YAML file.")
@click.option(
    "--trust",
    "trusted",
    multiple=True,
    metavar="URL",
    help="Also trust this origin (it may be on a private address). Repeatable.",
)
@click.option(
    "--store",
    "store_url",
    help="Store URL for the operator view at /ops (default: the store of --config).",
)
@click.option(
    "--ops/--no-ops",
    "with_ops",
    default=False,
    show_default=True,
    help="Serve the operator view of the store at /ops (needs --store or --config). It "
    "shows every page's report, so it answers only callers on a loopback address or who "
    "present the operator's secret: ops_token in the configuration, or ADAPTER_OPS_TOKEN "
    "in the environment (sent as 'Authorization: Bearer SECRET', or typed into /ops/login).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8090, show_default=True, type=click.IntRange(0, 65535))
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256))
@click.option(
    "--trusted-proxy",
    metavar="ADDRESS",
    help="The reverse proxy in front (its address): the rate limit then counts the client "
    "its X-Forwarded-For names, not the proxy.",
)
@click.option(
    "--rate-limit",
    "rate",
    default=DEFAULT_RATE,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Checks a minute per client address; more are answered 429.",
)
@click.option(
    "--rate-file",
    type=click.Path(dir_okay=False),
    help="SQLite file of the rate limit's counts, shared by every server process "
    "(default: one per user in the temporary directory).",
)
@click.option(
    "--deadline",
    default=DEFAULT_DEADLINE,
    show_default=True,
    type=click.FloatRange(1, 600),
    help="Seconds one check may take, every fetch included.",
)
def web(
    config_path: str | None,
    trusted: tuple[str, ...],
    store_url: str | None,
    with_ops: bool,
    host: str,
    port: int,
    threads: int,
    trusted_proxy: str | None,
    rate: int,
    rate_file: str | None,
    deadline: float,
) -> None:
    """Serve the check page: a landing page URL, DOI or pasted HTML/JSON-LD in, the report out."""
    # lazy: the check page's stack loads only when `adapter web` runs, not for its --help
    from adapter.config.load import load_config

    config = load_config(config_path) if config_path else None
    nodes = list(config.nodes) if config else []
    if config is not None and not store_url and with_ops:
        if store_exists(config.store_url):
            store_url = config.store_url
        else:  # nothing synced yet: the check page alone, and say why
            click.echo(f"No operator view: no store yet at {config.store_url}", err=True)
    if with_ops and not store_url and config is None:
        raise click.UsageError("--ops needs --store URL or --config FILE")
    if store_url and not with_ops:
        raise click.UsageError("--store is the operator view's store: give --ops too")
    token = ops_secret(config.ops_token if config else None)
    ops = operator_view(open_store(store_url), nodes, token) if with_ops and store_url else None
    origins = configured_origins(nodes, trusted)
    app = build_app(origins, rate, rate_file, deadline, ops, max_checks=max(1, threads // 2))
    configure("human", "INFO")
    server = listen(
        app,
        host,
        port,
        threads=threads,
        ident="adapter",
        max_request_body_size=MAX_FORM_BODY,
        clear_untrusted_proxy_headers=True,
        **_proxy(trusted_proxy),
    )
    shown = f"[{host}]" if ":" in host else host

    def announce() -> None:
        click.echo(f"Check page: http://{shown}:{server.effective_port}/check")
        if ops is not None:
            who = (
                "loopback callers, or with the operator's secret"
                if token
                else ("loopback callers only: no operator's secret is set")
            )
            click.echo(f"Operator view: http://{shown}:{server.effective_port}/ops ({who})")
        click.echo("Ctrl-C stops.", err=True)

    try:
        serve_until_stopped(server, announce)
    finally:
        if ops is not None:
            ops.store.close()


def _proxy(address: str | None) -> dict[str, Any]:
    """waitress's settings to take REMOTE_ADDR from the proxy's X-Forwarded-For."""
    if not address:
        return {}
    return {"trusted_proxy": address, "trusted_proxy_headers": {"x-forwarded-for"}}


def configured_origins(nodes: Iterable[NodeSettings], trusted: Iterable[str] = ()) -> list[str]:
    """The origins the operator named: each node's start URLs, and each `--trust URL`."""
    origins = list(trusted)
    for url in origins:
        if not url.startswith(("http://", "https://")):
            raise click.BadParameter(f"{url!r} is not an http(s) URL", param_hint="--trust")
    for node in nodes:
        origins.extend(node.trusted_origins())
    return origins


def open_store(url: str) -> Store:
    """The store, only read: a SQLite file that is not there is an error, never created."""
    # lazy: the check page's stack loads only when `adapter web` runs, not for its --help
    from adapter.errors import StoreError
    from adapter.store.db import Store

    if not store_exists(url):
        raise StoreError(f"{url}: no store file there; run `adapter sync` to create it")
    return Store.open(url, create=False)


def store_exists(url: str) -> bool:
    """False for a SQLite file that is not there (a server URL is taken as there)."""
    if url.startswith("sqlite:///") and ":memory:" not in url:
        return Path(url.removeprefix("sqlite:///").split("?", 1)[0]).is_file()
    return True


def ops_secret(configured: str | None = None) -> str | None:
    """The operator's secret: the configuration's `ops_token`, else ADAPTER_OPS_TOKEN."""
    import os

    from adapter.web.opsaccess import TOKEN_ENV

    return configured or os.environ.get(TOKEN_ENV) or None


def operator_view(
    store: Store, nodes: Iterable[NodeSettings] = (), token: str | None = None
) -> Ops:
    """The /ops pages over `store`, with the configured nodes' names, profiles and next
    runs, answering loopback callers and those presenting `token`."""
    from datetime import UTC, datetime

    # lazy: the check page's stack loads only when `adapter web` runs, not for its --help
    from adapter.commands.status_view import next_run
    from adapter.web.ops import Ops, when
    from adapter.web.opsaccess import OpsAccess

    by_id = {node.id: node for node in nodes}

    def _next(node_id: str, last: Any) -> str | None:  # a RunInfo, or None
        node = by_id.get(node_id)
        if node is None:
            return None
        due = next_run(node, last)
        late = " (overdue: is `adapter schedule` running?)" if due < datetime.now(UTC) else ""
        return when(due) + late

    names = {n.id: n.name for n in by_id.values()}
    profiles = {n.id: str(n.checks.profile) for n in by_id.values()}
    return Ops(store, names, _next, profiles, OpsAccess(token))


def build_app(
    trusted_origins: Iterable[str] = (),
    rate: int = DEFAULT_RATE,
    rate_file: str | None = None,
    deadline: float = DEFAULT_DEADLINE,
    ops: Ops | None = None,
    max_checks: int = 4,
) -> WebApp:
    """The check page's WSGI application, as `adapter web` and `adapter serve` run it.

    `max_checks`: checks at once; the commands give half the server's threads, so
    slow strangers' sites never leave the other pages (or the Member Node API)
    without a thread.
    """
    # lazy: the check page's stack loads only when `adapter web` runs, not for its --help
    from adapter.limits import Limits
    from adapter.web.app import WebApp
    from adapter.web.checking import Checker
    from adapter.web.ratelimit import RateLimit, default_path

    checker = Checker(tuple(trusted_origins), Limits.from_env(), deadline)
    limit = RateLimit(Path(rate_file) if rate_file else default_path(), rate)
    return WebApp(checker, limit, ops, max_checks)
