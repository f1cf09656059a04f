"""The WSGI application `adapter serve` runs, in waitress's process or in each granian worker.

The Member Node API with /metrics and the health checks, and the check page (and, with
`--ops`, the operator view) beside it.
"""

from __future__ import annotations

from typing import Any

from adapter.config.settings import NodeSettings


def application(
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
