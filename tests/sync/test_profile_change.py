"""A node's requirement profile decides what it syncs; changing it never archives a live page.

The fixture site (fixtures/sites/page-profiles) lists three pages: one that meets
every profile (`complete`), one with a DOI but no metadata copy (`no-copy`), and
one filed under an ARK (`ark`). Synced under the lax mnlite profile all three
are published; under the default dataone profile the last two fail, and keep
their last record, unarchived, with no new versions, listed in the run summary.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.store.db import Store
from adapter.sync.outcome import RunSummary
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.fixture_server import stop
from tests.sync.test_sync import Site

store_url = stores.store_url  # the fixture, over SQLite and PostgreSQL
NODE_ID = "urn:node:PROFILES"
PAGES = ("complete", "no-copy", "ark")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    s = Site("page-profiles", tmp_path)
    yield s
    stop(s.servers)


def node(site: Site, profile: str, scheme: str = "doi") -> NodeSettings:
    return quick_node(
        site.url("/sitemap.xml"),
        NODE_ID,
        checks={"profile": profile},
        dataone={"series_id_scheme": scheme},
        politeness={"requests_per_second": 500, "concurrency": 1},
    )


def sync(url: str, settings: NodeSettings) -> RunSummary:
    summary = run_node(AdapterConfig(store_url=url, nodes=(settings,)), settings)
    assert summary.status == "ok", summary.as_dict()
    return summary


def lastmod(site: Site, day: str) -> None:
    """A new lastmod for every page, so the next run checks them all again."""
    urls = "".join(
        f"<url><loc>https://repo.example/dataset/{p}.html</loc><lastmod>{day}</lastmod></url>\n"
        for p in PAGES
    )
    (site.root / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
    )


def live(store_url: str) -> dict[str, str]:
    """seriesId -> head PID of every live (unobsoleted, unarchived) head, resource maps aside."""
    store = Store.open(store_url, create=False)
    try:
        records = store.list_objects(NODE_ID, count=1000)[1]
    finally:
        store.close()
    assert records, "nothing stored"
    return {
        r.series_id or "": r.pid
        for r in records
        if r.obsoleted_by is None
        and not r.archived
        and not (r.series_id or "").endswith("#resourcemap")
    }


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_stricter_profile_keeps_the_records_of_pages_still_up(site: Site, store_url: str) -> None:
    lastmod(site, "2024-01-01")
    lax = sync(store_url, node(site, "mnlite"))
    assert (lax.new_objects, lax.archived, lax.not_harvestable) == (6, 0, {})  # and 3 maps
    first = live(store_url)
    assert set(first) == {
        "doi:10.82120/mbari.bof.2021",
        "doi:10.82120/nwt.snow.7",
        "ark:/13030/m5kelp42",  # a non-DOI identifier the profile accepts: its own series
    }

    # the operator switches to the default profile; the pages change meanwhile
    site.edit("dataset/no-copy.html", "three fixed transects", "four fixed transects")
    site.edit("dataset/ark.html", "Quarterly giant kelp", "Monthly giant kelp")
    lastmod(site, "2024-02-01")
    strict = sync(store_url, node(site, "dataone"))
    assert strict.archived == 0
    assert strict.new_versions == 0  # no new version while a page fails its profile
    assert strict.not_harvestable == {"dataone/profile-unmet": 2}
    assert strict.series_findings == {"sync/held-by-profile": 2}
    assert live(store_url) == first

    # runs go on: still nothing archived while the pages are up
    lastmod(site, "2024-03-01")
    again = sync(store_url, node(site, "dataone"))
    assert (again.archived, again.new_versions) == (0, 0)
    assert live(store_url) == first

    # back to the lax profile: the changed pages get their new versions
    lastmod(site, "2024-04-01")
    back = sync(store_url, node(site, "mnlite"))
    assert (back.archived, back.new_versions, back.series_findings) == (0, 4, {})  # and maps
    now = live(store_url)
    assert set(now) == set(first)
    assert now["doi:10.82120/mbari.bof.2021"] == first["doi:10.82120/mbari.bof.2021"]
    assert now["ark:/13030/m5kelp42"] != first["ark:/13030/m5kelp42"]


def test_the_mnlite_scheme_files_each_series_under_the_first_identifier_as_published(
    site: Site, store_url: str
) -> None:
    lastmod(site, "2024-01-01")
    summary = sync(store_url, node(site, "mnlite", "mnlite"))
    assert summary.new_objects == 6  # three Datasets and their resource maps
    # what mnlite would have called them: a node moved from mnlite continues its series
    assert set(live(store_url)) == {
        "doi:10.82120/MBARI.BOF.2021",  # the PropertyValue's value, as written
        "https://doi.org/10.82120/NWT.SNOW.7",  # the text, as written
        "ark:/13030/m5kelp42",  # the first of two identifiers
    }
