"""COAR Notify under `adapter serve`: the inbox beside the API, and the worker behind it.

The server's public URL is known only once it listens (`--port 0`), so `wrap` puts the
inbox in front of the application first and `bind` tells it where it is reached; `start`
starts the worker (adapter.notify.worker) and `close` stops it.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.config.settings import NodeSettings
from adapter.notify.inbox import Advertise, InboxApp, WsgiApp
from adapter.notify.patterns import node_service
from adapter.notify.worker import NotifyWorker
from adapter.store.db import Store


def notify_nodes(nodes: Sequence[NodeSettings]) -> list[NodeSettings]:
    """The nodes that take part in COAR Notify (`notify:` with origins or report_to)."""
    return [n for n in nodes if n.notify.enabled]


class NotifyFront:
    """The inbox, its `Link` on the nodes' base URLs and the check page, and the worker."""

    def __init__(self, store: Store, nodes: Sequence[NodeSettings], *, worker: bool = True):
        self.store = store
        self.nodes = list(nodes)
        self.inbox = InboxApp(store, self.nodes, {})
        self.with_worker = worker
        self.worker: NotifyWorker | None = None
        self._advertise: Advertise | None = None

    def wrap(self, app: WsgiApp) -> WsgiApp:
        """`app` with `/inbox` in front of it (answering once `bind` has run)."""
        self._advertise = Advertise(self.inbox, app, [n.short_name for n in self.nodes], "")
        return self._advertise

    def bind(self, public_url: str) -> None:
        """Where the server is reached: the inbox URL, the nodes' service ids, the worker."""
        self.inbox.services = {
            n.id: node_service(public_url, n.short_name, n.name) for n in self.nodes
        }
        if self._advertise is not None:
            self._advertise.set_public(public_url)
        if self.with_worker:
            self.worker = NotifyWorker(self.store, self.nodes, public_url)
            self.inbox.wake = self.worker.wake

    def start(self) -> None:
        if self.worker is not None:
            self.worker.start()

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
