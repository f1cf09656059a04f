"""The sync, runs, db and queue commands through the real CLI, on a store filled by a sync
of the demo repository served over HTTP."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from adapter.cli import cli
from adapter.config.load import quick_node
from adapter.demo.server import DemoServer
from adapter.errors import StoreError
from adapter.store.db import Store
from tests.support.d1schemas import pyxb_parse, validate_types

NODE = "urn:node:QUEUE"
EVENT_KEYS = {
    "event",
    "pid",
    "series_id",
    "format_id",
    "checksum",
    "checksum_algorithm",
    "size",
    "source_url",
    "obsoletes",
    "archived",
}


pytestmark = pytest.mark.slow  # syncs of the demo repository


def adapter(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


@pytest.fixture(scope="module")
def demo_server() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory, demo_server: DemoServer) -> Path:
    """One sync of the demo repository, once: the quick run's node (`quick_node`, as
    `sync URL --metadata-copy --profile mnlite` makes it) from a configuration file, so at 50
    requests/s instead of the quick run's fixed 2 (~5 s of waiting: the tests read what was
    stored, not when it was asked)."""
    folder = tmp_path_factory.mktemp("queue")
    path = folder / "q.db"
    node = quick_node(
        demo_server.url("/robots.txt"),
        NODE,
        dataone={"sync_metadata_copy": True},
        checks={"profile": "mnlite"},  # two demo Datasets have no ISO copy (dataone's profile)
        politeness={"requests_per_second": 50},
    )
    cfg = {"store_url": f"sqlite:///{path}", "nodes": [node.model_dump(mode="json")]}
    (folder / "q.yaml").write_text(json.dumps(cfg), "utf-8")  # JSON is YAML
    result = adapter("sync", "--config", str(folder / "q.yaml"), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    # 3 Datasets, their 3 resource maps and 1 ISO copy
    assert summary["node_id"] == NODE and summary["new_objects"] == 7
    return path


@pytest.fixture
def filled(synced: Path, tmp_path: Path) -> str:
    """A private copy of the synced store (the run closed it, so the WAL is checkpointed)."""
    shutil.copy(synced, tmp_path / "q.db")
    return f"sqlite:///{tmp_path / 'q.db'}"


def test_queue_list_json_has_every_field(filled: str) -> None:
    result = adapter("queue", "list", "--store", filled, "--json")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert len(lines) == 7 and [e["seq"] for e in lines] == sorted(e["seq"] for e in lines)
    store = Store.open(filled, create=False)
    for event in lines:
        assert set(event) >= EVENT_KEYS
        rec = store.get_record(NODE, event["pid"])
        assert rec is not None
        assert (event["checksum"], event["size"], event["series_id"]) == (
            rec.checksum,
            rec.size,
            rec.series_id,
        )
        assert event["event"] == "create" and event["checksum_algorithm"] == "MD5"
    formats = {e["format_id"] for e in lines}
    assert formats == {
        "science-on-schema.org/Dataset;ld+json",
        "http://www.isotc211.org/2005/gmd",
        "http://www.openarchives.org/ore/terms",
    }
    human = adapter("queue", "list", "--store", filled)
    assert human.exit_code == 0 and "7 event(s)" in human.output
    for event in lines:
        assert event["pid"] in human.output


def test_export_matches_list_and_ack_removes_events(filled: str, tmp_path: Path) -> None:
    listed = adapter("queue", "list", "--store", filled, "--json").output
    out = tmp_path / "events.jsonl"
    assert adapter("queue", "export", "--store", filled, "-o", str(out)).exit_code == 0
    assert out.read_text() == listed
    first_seq = json.loads(listed.splitlines()[0])["seq"]
    acked = adapter("queue", "ack", "--store", filled, "--up-to", str(first_seq))
    assert acked.exit_code == 0 and "1 event(s) acknowledged" in acked.output
    pending = adapter("queue", "list", "--store", filled, "--json").output.splitlines()
    assert len(pending) == 6
    everything = adapter("queue", "list", "--store", filled, "--json", "--all").output
    assert [json.loads(x)["acked"] for x in everything.splitlines()] == [True] + [False] * 6
    assert adapter("queue", "ack", "--store", filled).exit_code == 2  # nothing named
    assert "6 event(s)" in adapter("queue", "ack", "--store", filled, "--all").output
    assert "empty" in adapter("queue", "list", "--store", filled).output


def test_queue_show_prints_valid_sysmeta(filled: str) -> None:
    lines = adapter("queue", "list", "--store", filled, "--json").output.splitlines()
    for event in map(json.loads, lines):
        result = adapter("queue", "show", event["pid"], "--store", filled, "--sysmeta")
        assert result.exit_code == 0, result.output
        xml = result.output.encode()
        validate_types(xml)
        parsed = pyxb_parse(xml)
        assert parsed.identifier.value() == event["pid"]
        assert parsed.checksum.value() == event["checksum"]
        assert parsed.originMemberNode.value() == NODE
    pid = json.loads(lines[0])["pid"]
    shown = json.loads(adapter("queue", "show", pid, "--store", filled, "--json").output)
    assert shown["pid"] == pid and shown["events"][0]["event"] == "create"
    obj = adapter("queue", "show", pid, "--store", filled, "--object").output
    assert obj.startswith("{") or obj.startswith("<?xml")
    missing = adapter("queue", "show", "sha256:nope", "--store", filled)
    assert missing.exit_code == 1 and "no record" in missing.output


def test_runs_and_a_second_incremental_sync(filled: str, demo_server: DemoServer) -> None:
    again = adapter("sync", demo_server.url("/robots.txt"), "--store", filled, "--node-id", NODE)
    assert again.exit_code == 0, again.output
    assert "new objects 0" in again.output and "pages seen 6" in again.output
    # quick mode: every run summary names the placeholder subjects and how to replace them
    [note] = [line for line in again.output.splitlines() if line.startswith("  note: ")]
    assert "placeholder submitter and rightsHolder" in note
    assert "CN=adapter-placeholder-submitter,DC=dataone,DC=org" in note
    assert "dataone.submitter and dataone.rights_holder" in note and "--config" in note
    runs = adapter("runs", "--store", filled, "--json")
    history = [json.loads(x) for x in runs.output.splitlines()]
    assert [h["status"] for h in history] == ["ok", "ok"]
    assert history[1]["summary"]["new_objects"] == 7 and history[0]["summary"]["due"] < 6
    for run in history:  # the stored run rows say it too
        assert run["summary"]["notices"] == [note.removeprefix("  note: ")]
    table = adapter("runs", "--store", filled)
    assert table.exit_code == 0 and NODE in table.output


def test_sync_with_a_config_file_names_nodes(tmp_path: Path, demo_server: DemoServer) -> None:
    cfg = tmp_path / "nodes.yaml"
    store = f"sqlite:///{tmp_path / 'c.db'}"
    cfg.write_text(f"""
store_url: "{store}"
nodes:
  - id: urn:node:DEMOA
    name: Demo A
    start: {{sitemap_urls: ["{demo_server.url("/sitemap_index.xml")}"]}}
    politeness: {{requests_per_second: 100}}
    dataone: {{submitter: "s", rights_holder: "r", contact_subject: "c"}}
  - id: urn:node:DEMOB
    name: Demo B
    start: {{sitemap_urls: ["{demo_server.url("/sitemaps/datasets-2.xml")}"]}}
    dataone: {{submitter: "s", rights_holder: "r", contact_subject: "c"}}
""")
    result = adapter("sync", "--config", str(cfg), "urn:node:DEMOA")
    assert result.exit_code == 0, result.output
    assert "urn:node:DEMOA: run 1 ok" in result.output and "DEMOB" not in result.output
    assert "placeholder" not in result.output  # real subjects: no note
    listed = adapter("queue", "list", "--config", str(cfg), "--json").output.splitlines()
    assert {json.loads(x)["node_id"] for x in listed} == {"urn:node:DEMOA"}
    sysmeta = adapter(
        "queue", "show", json.loads(listed[0])["pid"], "--config", str(cfg), "--sysmeta"
    ).output
    assert "<submitter>s</submitter>" in sysmeta and "<rightsHolder>r</rightsHolder>" in sysmeta
    bad = adapter("sync", "--config", str(cfg), "urn:node:NOPE")
    assert bad.exit_code != 0


def test_db_upgrade_and_a_store_without_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    result = adapter("queue", "list", "--store", url)
    assert isinstance(result.exception, StoreError)
    assert "adapter db upgrade" in str(result.exception)
    created = adapter("db", "upgrade", "--store", url)
    assert created.exit_code == 0 and "schema created" in created.output
    assert "up to date" in adapter("db", "upgrade", "--store", url).output
    assert "queue is empty" in adapter("queue", "list", "--store", url).output
    assert "No runs yet" in adapter("runs", "--store", url).output


def test_sync_usage_errors() -> None:
    assert adapter("sync").exit_code == 2
    assert adapter("sync", "https://a.example/", "https://b.example/").exit_code == 2


def test_runs_shows_what_dataone_reported_through_post_error(filled: str) -> None:
    """A SynchronizationFailed the CN posted (stored by the API) is visible to the operator."""
    store = Store.open(filled, create=False)
    try:
        store.log_sync_failure(
            NODE,
            "sha256:abc",
            '<error name="SynchronizationFailed" errorCode="0" detailCode="5000" '
            'identifier="sha256:abc"><description>checksum mismatch</description></error>',
        )
    finally:
        store.close()
    table = adapter("runs", "--store", filled)
    assert table.exit_code == 0, table.output
    assert f"synchronization failures for {NODE}" in table.output
    assert "sha256:abc  detailCode 5000: checksum mismatch" in table.output
