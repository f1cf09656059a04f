"""A node moves from mnlite: import its store, serve it, and sync it for the first time.

The mnlite node folder is written with opersist's own tables (tests/support/
mnlite_instance.py) and holds what mnlite harvested from a fixture site on
127.0.0.1 (real-shaped pages: a Dryad-like, a BCO-DMO-like, a two-block
science-on-schema.org and a PANGAEA-like @graph page). DataONE's own client reads
the imported node as a coordinating node would, then the site changes (one page
edited, one gone, two unchanged) and the first sync runs: the client sees a new
version only for the edited page, obsoleting mnlite's head in the same series,
and the gone page archived. Run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import d1_client.mnclient_2_0
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from adapter.cli import cli
from adapter.config.load import load_config
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.fixture_server import MAIN_ORIGIN, SITES, SiteServer, start_site, stop
from tests.support.member_node import serve_app
from tests.support.mnlite_instance import (
    FORMAT,
    OWNER,
    SUBMITTER,
    MnThing,
    blob_of,
    node_json,
    write_instance,
)

store_url = stores.store_url  # a fresh SQLite file, and a fresh PostgreSQL schema
NODE = "urn:node:MOVED"
SITE = "mnlite-move"
SCRIPT = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.S)
MS = timedelta(milliseconds=1)


def page_jsonld(name: str, origin: str) -> Any:
    """The page's JSON-LD as mnlite's spider read it: its one block, or its blocks as a list."""
    html = (SITES / SITE / "dataset" / f"{name}.html").read_text("utf-8")
    blocks = [json.loads(b) for b in SCRIPT.findall(html.replace(MAIN_ORIGIN, origin))]
    return blocks[0] if len(blocks) == 1 else blocks


def when(month: int, day: int) -> datetime:
    return datetime(2023, month, day, 10, 20, 30, 123456, tzinfo=UTC)


@dataclass
class Moved:
    """The mnlite node the tests import: its things by role, its folder, the site."""

    folder: Path
    things: dict[str, MnThing]
    origin: str
    servers: list[SiteServer]
    root: Path


def mnlite_node(tmp_path: Path) -> Moved:
    root = tmp_path / "sites" / SITE
    shutil.copytree(SITES / SITE, root)
    servers = start_site(SITE, tmp_path / "sites")
    origin = servers[0].origin
    url = f"{origin}/dataset"
    dryad_old = page_jsonld("dryad-like", origin) | {"name": "Thermal tolerance (draft)"}
    soso_old = page_jsonld("soso-full", origin)
    soso_old[0] = soso_old[0] | {"description": "An earlier description of the survey."}
    dryad_sid = "https://doi.org/10.5072/dryad.8w9ghx3k2"
    things = {
        "dryad-v1": MnThing(
            dryad_old, f"{url}/dryad-like", dryad_sid, when(2, 1), when(3, 1), serial_version=2
        ),
        "dryad": MnThing(
            page_jsonld("dryad-like", origin),
            f"{url}/dryad-like",
            dryad_sid,
            when(3, 1),
            when(3, 1),
        ),
        "bcodmo": MnThing(
            page_jsonld("bcodmo-like", origin),
            f"{url}/bcodmo-like",
            "doi:10.5072/bco-dmo.778899.2",
            when(2, 10),
            when(2, 10),
        ),
        "soso": MnThing(
            soso_old, f"{url}/soso-full", "doi:10.5072/ODR.4F7G2", when(2, 15), when(2, 15)
        ),
        "pangaea": MnThing(
            page_jsonld("pangaea-graph", origin),
            f"{url}/pangaea-graph",
            "https://doi.org/10.5072/EDP.912345",
            when(2, 20),
            when(2, 20),
        ),
        "missing": MnThing(
            {"@context": "https://schema.org/", "@type": "Dataset", "name": "lost"},
            f"{url}/lost",
            "doi:10.5072/LOST",
            when(1, 5),
            when(1, 5),
            write_blob=False,
        ),
        "damaged": MnThing(
            {"@context": "https://schema.org/", "@type": "Dataset", "name": "damaged"},
            f"{url}/damaged",
            "doi:10.5072/DAMAGED",
            when(1, 6),
            when(1, 6),
            blob=b'{"name": "not what was published"}',
        ),
    }
    v1, v2 = things["dryad-v1"], things["dryad"]
    v1.obsoleted_by, v2.obsoletes = v2.pid, v1.pid
    folder = write_instance(
        tmp_path / "MOVED",
        node_json(NODE, f"{origin}/sitemap.xml"),
        list(things.values()),
        settings={"lastmod_filter": "2022-12-01", "which_jsonld": 0},
    )
    return Moved(folder, things, origin, servers, root)


def run_import(moved: Moved, store: str, config: Path, *extra: str) -> dict[str, Any]:
    args = ["import", "mnlite", str(moved.folder), "--node", NODE, "--store", store]
    result = CliRunner().invoke(cli, [*args, "--config", str(config), "--json", *extra])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.output)
    return report


def client_for(base: str) -> Any:
    return d1_client.mnclient_2_0.MemberNodeClient_2_0(base, timeout_sec=10)


def d1_time(value: datetime) -> datetime:
    """A timestamp as DataONE's types carry it: UTC, to the millisecond."""
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def assert_served_as_mnlite(client: Any, thing: MnThing) -> None:
    """getSystemMetadata equal on every field the CN compares, and get the same bytes."""
    data = blob_of(thing.jsonld)
    sm = client.getSystemMetadata(thing.pid)
    assert sm.identifier.value() == thing.pid
    assert sm.seriesId.value() == thing.series_id
    assert sm.formatId == FORMAT
    assert sm.size == len(data)
    assert (sm.checksum.algorithm, sm.checksum.value()) == ("MD5", _md5(data))
    assert sm.submitter.value() == SUBMITTER and sm.rightsHolder.value() == OWNER
    assert sm.serialVersion == thing.serial_version
    assert (sm.obsoletes.value() if sm.obsoletes else None) == thing.obsoletes
    assert (sm.obsoletedBy.value() if sm.obsoletedBy else None) == thing.obsoleted_by
    assert bool(sm.archived) is thing.archived
    assert d1_time(sm.dateUploaded) == d1_time(thing.date_uploaded)
    assert d1_time(sm.dateSysMetadataModified) == d1_time(thing.date_modified)
    assert sm.originMemberNode.value() == NODE == sm.authoritativeMemberNode.value()
    policy = sm.replicationPolicy  # mnlite's things: replication off, no replicas
    assert (bool(policy.replicationAllowed), policy.numberReplicas) == (False, 0)
    rules = [(a.subject[0].value(), a.permission[0]) for a in sm.accessPolicy.allow]
    assert rules == list(thing.access)
    assert sm.mediaType.name == "application/ld+json" and sm.fileName == thing.file_name
    assert client.get(thing.pid).content == data


def _md5(data: bytes) -> str:
    import hashlib

    return hashlib.md5(data).hexdigest()


def listed(client: Any, from_date: datetime | None = None) -> list[Any]:
    total = client.listObjects(fromDate=from_date, start=0, count=0).total
    infos = list(client.listObjects(fromDate=from_date, start=0, count=max(total, 1)).objectInfo)
    assert len(infos) == total
    return infos


def log_size(store: Store) -> tuple[int, int]:
    with store.read() as conn:
        records = conn.execute(select(func.count()).select_from(t.records)).scalar_one()
        log = conn.execute(select(func.count()).select_from(t.sysmeta_log)).scalar_one()
    return int(records), int(log)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_mnlite_node_moves_and_its_first_sync_continues_each_series(
    tmp_path: Path, store_url: str
) -> None:
    moved = mnlite_node(tmp_path)
    config_path = tmp_path / "adapter.yaml"
    try:
        report = run_import(moved, store_url, config_path)
        assert (report["things"], report["imported"], len(report["skipped"])) == (7, 5, 2)
        reasons = {s["pid"]: s["reason"] for s in report["skipped"]}
        assert "is missing" in reasons[moved.things["missing"].pid]
        assert "sha256" in reasons[moved.things["damaged"].pid]
        assert (report["series"], report["pages"]) == (4, 4)
        settings = {s["setting"]: s["equivalent"] for s in report["settings"]}
        assert settings["sitemap_urls"] == "start.sitemap_urls"
        assert settings["lastmod_filter"] is None and settings["which_jsonld"] is None
        config = load_config(config_path)  # the written configuration loads
        node = config.node(NODE)
        assert node.dataone.series_id_scheme == "mnlite" and node.checks.profile == "mnlite"
        assert node.dataone.resource_maps is False
        assert node.start.sitemap_urls == (f"{moved.origin}/sitemap.xml",)

        imported = [k for k in moved.things if k not in ("missing", "damaged")]
        store = Store.open(store_url, create=False)
        before = log_size(store)
        with serve_app(store, [node]) as served:
            client = client_for(f"{served.origin}/{node.short_name}")
            infos = listed(client)
            assert {i.identifier.value() for i in infos} == {moved.things[k].pid for k in imported}
            stamps = [i.dateSysMetadataModified for i in infos]
            assert stamps == sorted(stamps)
            for key in imported:
                assert_served_as_mnlite(client, moved.things[key])
            assert client.get("doi:10.5072/bco-dmo.778899.2").content == blob_of(
                moved.things["bcodmo"].jsonld
            )

            again = run_import(moved, store_url, config_path)  # idempotent
            assert (again["imported"], again["already_imported"]) == (0, 5)
            assert (again["series"], again["pages"]) == (0, 0)
            assert log_size(store) == before

            last_seen = max(i.dateSysMetadataModified for i in infos)
            node = node.model_copy(
                update={
                    "politeness": node.politeness.model_copy(update={"requests_per_second": 50})
                }
            )
            summary = run_node(config, node)
            assert summary.status == "ok", summary.as_dict()
            assert (summary.new_versions, summary.archived) == (1, 1), summary.as_dict()

            changed = {i.identifier.value(): i for i in listed(client, last_seen + MS)}
            soso, pangaea = moved.things["soso"], moved.things["pangaea"]
            # mnlite published no resource maps, nor does the moved node (resource_maps: false)
            [head] = [p for p in changed if p not in {soso.pid, pangaea.pid}]
            assert summary.new_objects == 0 and not head.startswith("resource_map_")
            new_sm = client.getSystemMetadata(head)
            assert new_sm.obsoletes.value() == soso.pid
            assert new_sm.seriesId.value() == soso.series_id
            assert client.getSystemMetadata(soso.pid).obsoletedBy.value() == head
            assert bool(client.getSystemMetadata(pangaea.pid).archived)
            assert client.get(soso.series_id).content == client.get(head).content
            for key in ("dryad", "dryad-v1", "bcodmo"):  # unchanged: mnlite's object stays
                assert_served_as_mnlite(client, moved.things[key])
            dryad = moved.things["dryad"]
            assert client.get(dryad.series_id).content == blob_of(dryad.jsonld)
        store.close()
    finally:
        stop(moved.servers)


def test_import_refuses_a_store_with_other_records_of_the_node(
    tmp_path: Path, store_url: str
) -> None:
    from tests.support.member_node import node_settings, put_dataset

    moved = mnlite_node(tmp_path)
    stop(moved.servers)
    store = Store.open(store_url)
    put_dataset(store, node_settings(NODE), "10.5072/SYNCED", "synced before")
    store.close()
    args = ["import", "mnlite", str(moved.folder), "--node", NODE, "--store", store_url]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 1, refused.output
    assert "Refused: the store already holds 1 records of urn:node:MOVED" in refused.output
    forced = CliRunner().invoke(cli, [*args, "--force", "--json"])
    assert forced.exit_code == 0, forced.output
    assert json.loads(forced.output)["imported"] == 5
