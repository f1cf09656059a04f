"""What `adapter serve` serves: the store and nodes, and each node's Member Node.

From a configuration file, or in quick mode from `--store` and `--node-id`. The Node
document's baseURL comes only from configuration (or where the server listens), never
from a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import click

from adapter.api.call import MemberNode
from adapter.api.schedule import Schedule, harvest_schedule
from adapter.api.xml import NodeInfo
from adapter.config.load import load_config, quick_node
from adapter.config.settings import AccessLogSettings, AuthSettings, NodeSettings
from adapter.errors import ConfigError, StoreError
from adapter.service.logsetup import LogFormat

# `--store` without a configuration has no repository; serving never reads this.
_NO_REPOSITORY = "https://repository.invalid/"
NO_AUTH = AuthSettings()
DEFAULT_ACCESS_LOG = AccessLogSettings()


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


@dataclass(frozen=True, slots=True)
class ServeSettings:
    store_url: str
    nodes: list[NodeSettings]
    log_format: LogFormat = "human"
    log_level: str = "INFO"
    auth: AuthSettings = NO_AUTH  # quick mode verifies no token
    access_log: AccessLogSettings = DEFAULT_ACCESS_LOG
    ops_token: str | None = None  # the operator's secret for /ops


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


def require_existing_file(url: str) -> None:
    """Serving only reads: a SQLite file that is not there is an error, not a new empty store."""
    if url.startswith("sqlite:///") and ":memory:" not in url:
        path = Path(url.removeprefix("sqlite:///").split("?", 1)[0])
        if not path.is_file():
            raise StoreError(
                f"{url}: no store file at {path}; run `adapter sync` (or `adapter db upgrade`) "
                "to create it"
            )
