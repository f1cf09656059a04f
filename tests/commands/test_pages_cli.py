"""`adapter pages` and `pages show`: an operator reads why a page failed without sqlite3.

A real sync of the sync-change fixture site (good pages, a page without a DOI,
a duplicate DOI, a withdrawn page) into a SQLite file by a real `adapter` process (warm:
tests/support/zygote.py),
then the entry point lists and shows its pages in the test process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run_in_process
from tests.support.fixture_server import SiteServer, start_site, stop
from tests.support.zygote import adapter_popen

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # the fixture's real sync
ADAPTER = Path(sys.executable).parent / "adapter"


def adapter(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    ran = run_in_process(list(args), cwd, env={"COLUMNS": "200"})
    return subprocess.CompletedProcess(args, ran.returncode, ran.stdout, ran.stderr)


def adapter_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A real `adapter` process, forked with its imports done (tests/support/zygote.py)."""
    proc = adapter_popen(
        *args,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess([str(ADAPTER), *args], proc.wait(), out, err)


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SiteServer, str, Path]]:
    tmp = tmp_path_factory.mktemp("pages")
    servers = start_site("sync-change")
    store = f"sqlite:///{tmp / 'h.db'}"
    # mnlite: most pages have no ISO metadata copy (the dataone profile's requirement); at
    # 200 requests a second, not a quick run's 2 (six seconds of pacing for this site); the
    # sync computes DataONE search's view only when asked, and check-dataset always shows it
    config = tmp / "node.yaml"
    config.write_text(
        f"""store_url: "{store}"
nodes:
  - id: urn:node:EXAMPLE
    name: EXAMPLE
    start:
      sitemap_urls: ["{servers[0].url("/sitemap.xml")}"]
    politeness:
      requests_per_second: 200
    checks:
      profile: mnlite
      dataone_index: true
    dataone:
      submitter: "http://orcid.org/0000-0002-1825-0097"
      rights_holder: "CN=example,DC=dataone,DC=org"
      contact_subject: "http://orcid.org/0000-0002-1825-0097"
"""
    )
    result = adapter_process("sync", "--config", str(config), cwd=tmp)
    assert result.returncode == 0, result.stdout + result.stderr
    yield servers[0], store, tmp
    stop(servers)


def listed(store: str, cwd: Path, *args: str) -> list[dict[str, object]]:
    result = adapter("pages", "--store", store, "--json", *args, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_every_page_is_listed_with_its_last_outcome(synced: tuple[SiteServer, str, Path]) -> None:
    server, store, tmp = synced
    pages = listed(store, tmp)
    by_url = {p["url"]: p for p in pages}
    assert by_url[server.url("/dataset/stable")]["last_status"] == "harvested"
    no_doi = by_url[server.url("/dataset/no-doi")]
    assert no_doi["last_status"] == "not-harvestable"
    assert no_doi["harvestable"] is False
    assert "dataone/identifier-missing" in no_doi["codes"]  # type: ignore[operator]
    mirror = by_url[server.url("/dataset/stable-mirror")]  # a DOI another page published
    assert (mirror["last_status"], mirror["harvestable"]) == ("not-harvestable", False)
    assert "sync/duplicate-doi" in mirror["codes"]  # type: ignore[operator]
    assert {p["node_id"] for p in pages} == {"urn:node:EXAMPLE"}
    text = adapter("pages", "--store", store, cwd=tmp).stdout.splitlines()
    assert len(text) == len(pages)
    assert all(len(line) <= 200 for line in text)


def test_filters_by_code_verdict_and_node(synced: tuple[SiteServer, str, Path]) -> None:
    server, store, tmp = synced
    everything = listed(store, tmp)
    duplicate = listed(store, tmp, "--code", "sync/duplicate-doi")
    assert [p["url"] for p in duplicate] == [server.url("/dataset/stable-mirror")]
    good = listed(store, tmp, "--harvestable")
    bad = listed(store, tmp, "--not-harvestable")
    assert good and bad
    assert all(p["harvestable"] is True for p in good)
    assert all(p["harvestable"] is False for p in bad)
    assert listed(store, tmp, "--node", "urn:node:OTHER") == []
    assert len(listed(store, tmp, "--node", "urn:node:EXAMPLE")) == len(everything)


def test_show_prints_the_report_as_check_dataset_does(synced: tuple[SiteServer, str, Path]) -> None:
    server, store, tmp = synced
    url = server.url("/dataset/stable")
    shown = adapter("pages", "show", url, "--store", store, cwd=tmp)
    checked = adapter("check-dataset", url, "--profile", "mnlite", cwd=tmp)  # as synced
    assert shown.returncode == checked.returncode == 0
    assert shown.stdout == checked.stdout
    assert shown.stdout.startswith(f"HARVESTABLE  {url}")


def test_show_adds_what_the_sync_found(synced: tuple[SiteServer, str, Path]) -> None:
    server, store, tmp = synced
    url = server.url("/dataset/stable-mirror")
    shown = adapter("pages", "show", url, "--store", store, cwd=tmp)
    assert shown.returncode == 1  # not synced: its DOI belongs to another page
    checked = adapter("check-dataset", url, "--profile", "mnlite", cwd=tmp)  # as synced
    assert checked.returncode == 0
    assert shown.stdout.startswith(checked.stdout)  # the check's report, then the sync's part
    assert "Found by the sync" in shown.stdout and "sync/duplicate-doi" in shown.stdout
    as_json = adapter("pages", "show", url, "--store", store, "--json", cwd=tmp)
    assert json.loads(as_json.stdout)["url"] == url
