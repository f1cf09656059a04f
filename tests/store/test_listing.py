"""listObjects' narrow pages (`Store.list_entries`), on both engines: every page of every
window is what `list_changes` gives, also once totals and page anchors are kept and the
log has grown since, and after the log's newest time went back (a restored backup)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest
from sqlalchemy import delete, func, select

from adapter.store import schema as t
from adapter.store.db import Store
from adapter.store.ledger import archive_page
from adapter.store.listing import ListedObject, Listing, Window
from tests.store.test_changelog import MS, NODE, dataset, write
from tests.support import stores

pytestmark = pytest.mark.slow  # over 1 s (tests/support/timing.py)

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store.open(store_url)
    yield s
    s.close()


def expected(
    store: Store, window: Window, start: int, count: int
) -> tuple[int, list[ListedObject]]:
    total, records = store.list_changes(window, start=start, count=count)
    return total, [
        ListedObject(r.pid, r.format_id, r.checksum_algorithm, r.checksum, r.size, r.date_modified)
        for r in records
    ]


def expected_pages(
    store: Store, window: Window, count: int
) -> dict[int, tuple[int, list[ListedObject]]]:
    """`list_changes`' page at every start: its whole listing, cut. Asking it once a start
    cost most of this file's CPU; its own page from the middle is held to the cut."""
    total, listed = expected(store, window, 0, 10**6)
    assert len(listed) == total
    want = {start: (total, listed[start : start + count]) for start in range(total + 1)}
    middle = total // 2
    assert expected(store, window, middle, count) == want[middle], (window, middle, count)
    return want


def windows(store: Store) -> list[Window]:
    """Every filter the API passes, at times inside the log."""
    stamps = [s for (s,) in _stamps(store)]
    middle, late = stamps[len(stamps) // 2], stamps[-2]
    head = store.list_changes(Window(NODE), count=1)[1][0]
    return [
        Window(NODE),
        Window(NODE, from_date=middle),
        Window(NODE, to_date=late),
        Window(NODE, from_date=middle, to_date=late + MS),
        Window(NODE, format_id=head.format_id),
        Window(NODE, format_id="text/csv"),
        Window(NODE, identifier=head.series_id),
        Window(NODE, identifier=head.pid, from_date=middle),
        Window("urn:node:OTHER"),
    ]


def _stamps(store: Store) -> list[tuple[datetime]]:
    lg = t.sysmeta_log
    with store.read() as conn:
        rows = conn.execute(select(lg.c.stamp).where(lg.c.node_id == NODE).order_by(lg.c.stamp))
        return [(t.utc(s),) for (s,) in rows]


def every_page(store: Store, window: Window) -> None:
    """Every (start, count) of the window, in the CN's order and out of it."""
    total = expected(store, window, 0, 0)[0]
    for count in (1, 2, 3, 1000):
        starts = list(range(0, total + 1))
        want = expected_pages(store, window, count)
        for start in starts + starts[::-1]:
            got = store.list_entries(window, start=start, count=count)
            assert got == want[start], (window, start, count)


def grow(store: Store) -> None:
    """New objects, a new version (obsoletedBy on the old head) and an archive."""
    write(store, dataset(10), dataset(11))
    write(store, dataset(1, "v3"))
    with store.write() as conn:
        archive_page(conn, NODE, "https://r/2")


def test_every_page_is_the_change_logs_page_also_after_the_log_grew(store: Store) -> None:
    for n in range(6):
        write(store, dataset(n))
    write(store, dataset(1, "v2"))
    with store.write() as conn:
        archive_page(conn, NODE, "https://r/4")
    kept = windows(store)
    for window in kept:
        every_page(store, window)  # first counted, then from kept totals and anchors
    grow(store)  # the kept totals now count only what came after them
    for window in kept + windows(store):
        every_page(store, window)
    fresh = Store.open(store.url)  # nothing kept: the same answers
    try:
        for window in kept:
            assert fresh.list_entries(window, count=1000) == store.list_entries(window, count=1000)
    finally:
        fresh.close()


def test_kept_figures_are_dropped_when_the_nodes_newest_time_goes_back(store: Store) -> None:
    for n in range(5):
        write(store, dataset(n))
    window = Window(NODE)
    every_page(store, window)
    lg = t.sysmeta_log
    with store.write() as conn:  # as a restore from an older backup would leave it
        newest = conn.execute(select(func.max(lg.c.stamp)).where(lg.c.node_id == NODE)).scalar()
        conn.execute(delete(lg).where(lg.c.stamp == newest))
    assert store.list_entries(window, count=1000)[0] == 4
    every_page(store, window)
    with store.write() as conn:  # and an empty log lists nothing
        conn.execute(delete(lg))
    assert store.list_entries(window, count=1000) == (0, [])


def hopped_pages(store: Store, window: Window, listing: Listing) -> None:
    """Every page of the window from `listing`, asked deepest first (hops from nothing, or
    from what it kept), then in the CN's order, then every other page."""
    total = expected(store, window, 0, 0)[0]
    starts = list(range(total + 1))
    for count in (1, 3):
        want = expected_pages(store, window, count)
        with store.read() as conn:
            for start in starts[::-1] + starts + starts[1::2]:
                got = listing.page(conn, window, start, count)
                assert got == want[start], (window, start, count)


def test_every_page_is_the_change_logs_page_when_reached_by_hops(store: Store) -> None:
    for n in range(6):
        write(store, dataset(n))
    write(store, dataset(1, "v2"))
    with store.write() as conn:
        archive_page(conn, NODE, "https://r/4")
    listing = Listing(stride=2)  # a hop every 2 entries
    for window in windows(store):
        hopped_pages(store, window, listing)
    grow(store)  # the anchors kept stay true as the log grows
    for window in windows(store):
        hopped_pages(store, window, listing)
