"""Test helpers for the Member Node API: a real store written through the ledger,
and the real WSGI app under waitress on 127.0.0.1 in a background thread."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import waitress
from waitress.server import BaseWSGIServer

from adapter.api.accesslog import RETENTION, EventBuffer, StoreSink
from adapter.api.app import MemberNodeApp
from adapter.api.auth import authority_from
from adapter.commands.serving_settings import member_node
from adapter.config.load import quick_node
from adapter.config.settings import AuthSettings, NodeSettings
from adapter.dataone.records import Candidate, canonical_bytes, content_key
from adapter.store.accesslog import LogRetention
from adapter.store.db import Store
from adapter.store.ledger import Applied, RecordDefaults, apply_candidates, archive_page
from tests.support.web import stop_waitress

FORMAT = "science-on-schema.org/Dataset;ld+json"
NODE_ID = "urn:node:TESTREPO"


def node_settings(node_id: str = NODE_ID, **overrides: object) -> NodeSettings:
    values: dict[str, object] = {
        "schedule": {"interval_minutes": 15},
        "dataone": {"contact_subject": "http://orcid.org/0000-0002-1825-0097"},
        **overrides,
    }
    return quick_node("https://repo.example/sitemap.xml", node_id, **values)


def dataset(doi: str, name: str) -> bytes:
    return canonical_bytes(
        {
            "@context": "https://schema.org/",
            "@type": "Dataset",
            "@id": f"https://doi.org/{doi}",
            "identifier": f"https://doi.org/{doi}",
            "name": name,
        }
    )


def put_dataset(
    store: Store, node: NodeSettings, doi: str, name: str, page: str | None = None
) -> Applied:
    """Write one Dataset object the way a sync does (new series or a new version)."""
    body = dataset(doi, name)
    candidate = Candidate(
        series_id=f"doi:{doi}",
        object_bytes=body,
        content_key=content_key(json.loads(body)),
        format_id=FORMAT,
        media_type="application/ld+json",
        file_name="metadata.jsonld",
        source_url=page or f"https://repo.example/dataset/{doi}",
        object_url=page or f"https://repo.example/dataset/{doi}",
    )
    defaults = RecordDefaults(
        node.id, node.dataone.checksum_algorithm, node.dataone.submitter, node.dataone.rights_holder
    )
    with store.write() as conn:
        return apply_candidates(conn, defaults, [candidate])


def archive(store: Store, node: NodeSettings, page: str) -> list[str]:
    with store.write() as conn:
        return archive_page(conn, node.id, page)


@dataclass
class Served:
    server: BaseWSGIServer
    origin: str  # http://127.0.0.1:PORT

    def base(self, node: NodeSettings, api: str = "v2") -> str:
        return f"{self.origin}/{node.short_name}/{api}"


@contextmanager
def serve_app(
    store: Store,
    nodes: list[NodeSettings],
    auth: AuthSettings | None = None,
    retention: LogRetention = RETENTION,
) -> Iterator[Served]:
    """The app under waitress (threads) on an ephemeral port, stopped afterwards.

    `auth` is the configuration's `auth:` section (default: no token verified).
    """
    access_log = EventBuffer(StoreSink(store, retention))
    authority = authority_from(auth or AuthSettings())
    app = MemberNodeApp(store, [], access_log=access_log, authority=authority, retention=retention)
    server = waitress.create_server(
        app, host="127.0.0.1", port=0, threads=4, ident="adapter"
    )  # waitress reads asyncore_loop_timeout as an int: 0.1 was 0, a select() loop spinning
    origin = f"http://127.0.0.1:{server.effective_port}"
    app.serve_nodes([member_node(n, origin) for n in nodes])  # baseURL: where it listens
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    access_log.start()
    try:
        yield Served(server, origin)
    finally:
        stop_waitress(server, thread)
        access_log.close()
