"""What a sync run writes between its discovery and its pages, page by page or batch by batch.

Pages that left the node (its sitemaps, or a graph read whole) have their records archived
(`archive_left`); a store written before resource maps existed gets one for each live
Dataset (`publish_missing_packages`). Each page or batch is one transaction that adds its
counts to the run, and each yields its count once committed, so the run's summary holds
what the store holds even when a later transaction fails.
"""

from __future__ import annotations

from collections.abc import Iterator

from adapter.dataone.records import DUPLICATE_DOI
from adapter.store import frontier as fr
from adapter.store.db import Store
from adapter.store.history import add_to_run
from adapter.store.ledger import RecordDefaults, archive_page
from adapter.store.packages import pages_without_packages, refresh_packages

PACKAGE_BATCH = 200  # pages per transaction when maps are published for an upgraded store


def archive_left(store: Store, node_id: str, rows: list[fr.FrontierRow]) -> Iterator[int]:
    """Pages that left the node (its sitemaps, or its graph): their records archived."""
    for row in rows:
        with store.write() as conn:
            archived = len(archive_page(conn, node_id, row.url))
            fr.mark_removed(conn, row.id)
            # a page refused for one of its DOIs may take the series now
            fr.mark_due_with_finding(conn, node_id, DUPLICATE_DOI.code, row.url)
            add_to_run(conn, node_id, {"archived": archived})
        yield archived


def publish_missing_packages(store: Store, defaults: RecordDefaults) -> Iterator[int]:
    """Resource maps for the live Datasets that have none: a store written before maps
    existed gets them on its first run, as new objects; no other record changes."""
    after = ""
    while True:
        with store.write() as conn:
            pages = pages_without_packages(conn, defaults.node_id, after, PACKAGE_BATCH)
            if not pages:
                return
            created = sum(len(refresh_packages(conn, defaults, url).created) for url in pages)
            add_to_run(conn, defaults.node_id, {"new_objects": created})
        yield created
        after = pages[-1]
