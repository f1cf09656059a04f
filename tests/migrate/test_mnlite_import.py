"""The mnlite import's parts: what it skips and why, the settings it maps, its output.

Each mnlite node folder is written with opersist's own tables
(tests/support/mnlite_instance.py); the store is a real SQLite file.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from adapter.cli import cli
from adapter.config.load import load_config
from adapter.dataone.records import content_key, dataset_candidate, series_id
from adapter.errors import ConfigError
from adapter.limits import DEFAULT_LIMITS
from adapter.migrate.mnlite_config import node_config
from adapter.migrate.mnlite_import import import_mnlite, node_from
from adapter.migrate.mnlite_plan import plan_import
from adapter.models import DatasetResult
from adapter.store.db import Store
from adapter.store.mnlite import open_instance, read_blob, read_things
from tests.support.mnlite_instance import MnThing, blob_of, node_json, write_instance

NODE = "urn:node:MOVED"
SITEMAP = "https://repo.example/sitemap.xml"
T0 = datetime(2023, 5, 6, 7, 8, 9, tzinfo=UTC)


def dataset(n: int, name: str = "A dataset") -> dict[str, Any]:
    return {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "@id": f"https://repo.example/dataset/{n}",
        "identifier": f"https://doi.org/10.5072/MN.{n}",
        "name": f"{name} {n}",
    }


def thing(n: int, name: str = "A dataset", **kw: Any) -> MnThing:
    page, sid = f"https://repo.example/dataset/{n}", f"https://doi.org/10.5072/MN.{n}"
    return MnThing(dataset(n, name), page, sid, T0, T0, **kw)


def instance(tmp_path: Path, things: list[MnThing], **settings: Any) -> Path:
    return write_instance(tmp_path / "node", node_json(NODE, SITEMAP), things, settings)


def test_each_thing_that_cannot_be_served_as_mnlite_served_it_is_skipped_with_why(
    tmp_path: Path,
) -> None:
    big = thing(5, name="x" * 3000)
    things = [
        thing(1),
        thing(2, write_blob=False),
        thing(3, blob=b"{}"),
        thing(4, extra={"checksum_md5": "0" * 32}),
        big,
        thing(6, extra={"identifier": None}),
        thing(7, extra={"size_bytes": 1}),
    ]
    folder = instance(tmp_path, things)
    found = open_instance(folder)
    rows = read_things(found)
    node = node_from(node_config(NODE, found.node_json, {}, rows)[0], "test")
    limits = DEFAULT_LIMITS.with_overrides({"max_page_bytes": 2000})
    plan = plan_import(rows, lambda t: read_blob(found, t, 2000), node, limits)
    assert [r.pid for r in plan.records] == [things[0].pid]
    why = {s.sha256: s.reason for s in plan.skipped}
    sha = {t.pid: t.pid.removeprefix("sha256:") for t in things}
    assert "is missing" in why[sha[things[1].pid]]
    assert "sha256 is not the one mnlite recorded" in why[sha[things[2].pid]]
    assert "is not the published 0000" in why[sha[things[3].pid]]
    assert "over the object cap of 2000" in why[sha[big.pid]]
    assert "no identifier" in why[sha[things[5].pid]]
    assert "mnlite published 1" in why[sha[things[6].pid]]
    [series] = plan.series
    assert (series.head_pid, series.source_url) == (things[0].pid, things[0].source)
    assert len(blob_of(big.jsonld)) > 2000


def test_the_head_of_a_series_gets_the_content_key_a_sync_computes(tmp_path: Path) -> None:
    """The content key is the adapter's, not the hash of mnlite's bytes: same meaning, same key."""
    v1, v2 = thing(1, name="Old"), thing(1)
    v1.obsoleted_by, v2.obsoletes = v2.pid, v1.pid
    folder = instance(tmp_path, [v1, v2])
    found = open_instance(folder)
    rows = read_things(found)
    node = node_from(node_config(NODE, found.node_json, {}, rows)[0], "test")
    plan = plan_import(rows, lambda t: read_blob(found, t, 10**6), node, DEFAULT_LIMITS)
    [series] = plan.series
    assert series.head_pid == v2.pid
    expected = dataset_candidate(dataset(1), None, v2.source, series=v2.series_id or "")
    assert series.content_key == expected.content_key
    assert series.content_key != v2.pid.removeprefix("sha256:")  # not mnlite's bytes' hash
    [page] = plan.pages
    assert page.url == v2.source


def test_mnlite_settings_map_to_the_nodes_yaml_or_say_they_have_none(tmp_path: Path) -> None:
    settings = {
        "url_match": "/dataset/",
        "use_at_id": True,
        "lastmod_filter": "2024-01-01",
        "which_jsonld": "all",
        "dedup_nodes": ["/srv/mnlite/nodes/OTHER"],
    }
    folder = instance(tmp_path, [thing(1)], **settings)
    found = open_instance(folder)
    raw, notes, warnings = node_config(NODE, found.node_json, found.settings_json, [])
    assert raw["scope"]["include"] == [re.escape("/dataset/")]
    assert raw["dataone"]["series_id_scheme"] == "mnlite-at-id"
    assert raw["dataone"]["resource_maps"] is False
    assert raw["start"] == {"sitemap_urls": [SITEMAP]}
    assert (raw["dataone"]["submitter"], raw["dataone"]["checksum_algorithm"]) == (
        "http://orcid.org/0000-0002-1825-0097",
        "MD5",
    )
    mapped = {n.setting: n.equivalent for n in notes}
    assert mapped == {
        "sitemap_urls": "start.sitemap_urls",
        "url_match": "scope.include",
        "use_at_id": "dataone.series_id_scheme",
        "lastmod_filter": None,
        "which_jsonld": None,
        "dedup_nodes": None,
    }
    assert warnings == []
    node = node_from(raw, "test")
    assert node.in_scope("https://repo.example/dataset/1")
    assert not node.in_scope("https://repo.example/about")


def test_mnlite_at_id_files_a_dataset_under_its_at_id() -> None:
    found = DatasetResult(id="https://repo.example/d/1", doi=None, first_identifier="x:1")
    assert series_id(found, "mnlite-at-id", ("doi",)) == "https://repo.example/d/1"
    assert series_id(found, "mnlite", ("doi",)) == "x:1"
    no_id = DatasetResult(id=None, doi=None, first_identifier="x:1")
    assert series_id(no_id, "mnlite-at-id", ("doi",)) == "x:1"


def test_text_report_lists_skips_settings_and_the_node_configuration(tmp_path: Path) -> None:
    folder = instance(tmp_path, [thing(1), thing(2, write_blob=False)], which_jsonld=0)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    args = ["import", "mnlite", str(folder), "--node", NODE, "--store", store]
    dry = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "(dry run: nothing was written)" in dry.output and "1 imported" in dry.output
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "2 things: 1 imported, 0 already imported, 1 skipped" in out
    assert f"{thing(2).pid}: its blob " in out and "is missing" in out
    assert "which_jsonld = '0' -> no equivalent" in out
    assert "Node configuration (add it to the configuration file's nodes):" in out
    shown = yaml.safe_load(
        "\n".join(line[2:] for line in out.split("nodes):\n", 1)[1].splitlines())
    )
    assert shown[0]["id"] == NODE and shown[0]["dataone"]["series_id_scheme"] == "mnlite"


def test_an_existing_configuration_decides_the_node_and_stays_as_it_is(tmp_path: Path) -> None:
    folder = instance(tmp_path, [thing(1)])
    config = tmp_path / "adapter.yaml"
    store = f"sqlite:///{tmp_path / 'store.db'}"
    text = yaml.safe_dump(
        {
            "store_url": store,
            "nodes": [
                {
                    "id": NODE,
                    "name": "Moved",
                    "start": {"sitemap_urls": [SITEMAP]},
                    "dataone": {
                        "submitter": "http://orcid.org/0000-0002-1825-0097",
                        "rights_holder": "http://orcid.org/0000-0002-1825-0097",
                        "contact_subject": "http://orcid.org/0000-0002-1825-0097",
                        "series_id_scheme": "mnlite",
                    },
                    "sync": {"volatile_properties": ["name"]},
                }
            ],
        }
    )
    config.write_text(text)
    args = ["import", "mnlite", str(folder), "--node", NODE, "--config", str(config), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["imported"], report["store"], report["config_written"]) == (1, store, None)
    assert config.read_text() == text
    node = load_config(config).node(NODE)
    opened = Store.open(store)
    with opened.engine.connect() as conn:
        [(key,)] = conn.exec_driver_sql("SELECT content_key FROM series")
    opened.close()
    assert key == content_key(dataset(1), node.sync.volatile_properties)
    other = CliRunner().invoke(cli, [*args[:4], "urn:node:OTHER", *args[5:]])
    assert isinstance(other.exception, ConfigError)  # main() exits 2 on it
    assert "no node urn:node:OTHER" in str(other.exception)


def test_a_folder_that_is_not_an_mnlite_node_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no node\.json"):
        open_instance(tmp_path)
    (tmp_path / "node.json").write_text('{"content_database": "postgresql://db/x"}')
    with pytest.raises(ConfigError, match="is not SQLite"):
        open_instance(tmp_path)
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    with pytest.raises(ConfigError, match="not SQLite"):
        import_mnlite(tmp_path, NODE, store)
    store.close()
