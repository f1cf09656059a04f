"""`adapter serve`: the DataONE Member Node read API over the store, under waitress.

One process serves every configured node at `http://HOST:PORT/<short name>/v2`.
It opens the store without migrating it (the API never writes anything but
synchronization failures), so it can run beside a sync writing to the same
SQLite file (WAL) or PostgreSQL database.
"""

from __future__ import annotations

import logging
import signal
from dataclasses import dataclass
from pathlib import Path

import click

from adapter.api.call import MemberNode
from adapter.api.schedule import from_settings
from adapter.api.xml import NodeInfo
from adapter.config.load import load_config, quick_node
from adapter.config.settings import NodeSettings
from adapter.errors import ConfigError, StoreError
from adapter.service.logsetup import LogFormat, configure
from adapter.signals import interrupt, on_signals

log = logging.getLogger(__name__)

MAX_REQUEST_BODY = 2 * 1024 * 1024  # only POST /error has a body, of a few hundred bytes
# `--store` without a configuration has no repository; serving never reads this.
_NO_REPOSITORY = "https://repository.invalid/"


def member_node(settings: NodeSettings, public_url: str | None = None) -> MemberNode:
    """What the API needs of a configured node: its Node document and its sysmeta writer.

    The Node document's baseURL is `public_url/<short name>` when given (the
    server sits behind a proxy), else the node's `dataone.base_url`, else it
    is taken from each request's Host header.
    """
    from adapter.api.sysmeta import (
        sysmeta_xml,  # lazy: every command module loads for `adapter --help`
    )

    base_url = settings.dataone.base_url
    if public_url:
        base_url = f"{public_url.rstrip('/')}/{settings.short_name}"
    info = NodeInfo(
        id=settings.id,
        name=settings.name,
        description=settings.description or f"{settings.name}: a schema.org slender node",
        contact_subject=settings.dataone.contact_subject,
        schedule=from_settings(settings.schedule.cron, settings.schedule.interval_minutes),
        base_url=_versionless(str(base_url)) if base_url else None,
    )
    return MemberNode(info, lambda record: sysmeta_xml(record, settings))


def _versionless(url: str) -> str:
    """The Node document's baseURL carries no API version (D1-API getCapabilities example)."""
    url = url.rstrip("/")
    for suffix in ("/v1", "/v2"):
        url = url.removesuffix(suffix)
    return url


@dataclass(frozen=True, slots=True)
class ServeSettings:
    store_url: str
    nodes: list[NodeSettings]
    log_format: LogFormat = "human"
    log_level: str = "INFO"


def serve_settings(
    config_path: str | None, store_url: str | None, node_ids: tuple[str, ...]
) -> ServeSettings:
    """The store and nodes to serve, from a configuration file or `--store` and `--node-id`."""
    if config_path:
        config = load_config(config_path)
        nodes = list(config.nodes)
        if node_ids:
            try:
                nodes = [config.node(node_id) for node_id in node_ids]
            except KeyError as exc:
                raise ConfigError(f"{config_path}: no node {exc.args[0]!r}") from None
        return ServeSettings(
            store_url or config.store_url, nodes, config.log_format, config.log_level
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
    return ServeSettings(store_url, [quick_node(_NO_REPOSITORY, node_id) for node_id in node_ids])


@click.command("serve")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Node YAML file.")
@click.option("--store", "store_url", help="Store URL (sqlite:///file.db, postgresql://...).")
@click.option("--node-id", "node_ids", multiple=True, help="Serve only this node (repeatable).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option("--threads", default=8, show_default=True, type=click.IntRange(1, 256))
@click.option(
    "--log-format",
    type=click.Choice(["human", "json"]),
    help="Log lines for people or JSON lines (default: log_format in the file, else human).",
)
@click.option(
    "--public-url",
    help="Public URL the nodes are reached under (behind a proxy): "
    "baseURL = PUBLIC_URL/<short name>.",
)
def serve(
    config_path: str | None,
    store_url: str | None,
    node_ids: tuple[str, ...],
    host: str,
    port: int,
    threads: int,
    log_format: str | None,
    public_url: str | None,
) -> None:
    """Serve the DataONE Member Node read API (v2 and v1) for each node."""
    import waitress

    from adapter.store.db import Store  # lazy: every command module loads for `adapter --help`

    chosen = serve_settings(config_path, store_url, node_ids)
    url, settings = chosen.store_url, chosen.nodes
    fmt: LogFormat = chosen.log_format
    if log_format in ("human", "json"):
        fmt = "json" if log_format == "json" else "human"
    configure(fmt, chosen.log_level)
    if public_url and not public_url.startswith(("http://", "https://")):
        raise click.BadParameter("must be an absolute http(s) URL", param_hint="--public-url")
    _require_existing_file(url)
    store = Store.open(url, create=False)
    # lazy: every command module loads for `adapter --help`, which needs no API
    from adapter.api.app import MemberNodeApp
    from adapter.service.metrics import Metrics, OpsApp

    api = MemberNodeApp(store, [member_node(s, public_url) for s in settings])
    metrics = Metrics()
    metrics.collect_store(store)
    server = waitress.create_server(
        OpsApp(metrics, store, api),  # /metrics, /healthz, /readyz beside the nodes' paths
        host=host,
        port=port,
        threads=threads,
        ident="adapter",
        max_request_body_size=MAX_REQUEST_BODY,
        clear_untrusted_proxy_headers=True,
    )
    bound = f"http://{_host_for_url(host)}:{server.effective_port}"
    for s in settings:
        click.echo(f"{s.id}: {bound}/{s.short_name}/v2")
    click.echo(f"Metrics: {bound}/metrics; health: {bound}/healthz, {bound}/readyz", err=True)
    click.echo(f"Serving {len(settings)} node(s) from {url}; Ctrl-C stops.", err=True)

    try:
        with on_signals(interrupt, (signal.SIGTERM,)):
            server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        store.close()


def _require_existing_file(url: str) -> None:
    """Serving only reads: a SQLite file that is not there is an error, not a new empty store."""
    if url.startswith("sqlite:///") and ":memory:" not in url:
        path = Path(url.removeprefix("sqlite:///").split("?", 1)[0])
        if not path.is_file():
            raise StoreError(
                f"{url}: no store file at {path}; run `adapter sync` (or `adapter db upgrade`) "
                "to create it"
            )


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host
