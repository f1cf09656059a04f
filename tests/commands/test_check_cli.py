"""`adapter check-dataset` and `adapter findings`: output, JSON schema and exit codes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapter.cli import cli
from adapter.errors import ConfigError
from adapter.findings import catalogue
from tests.support.clock import FakeClock
from tests.support.fixture_server import SITES, SiteServer
from tests.support.zygote import adapter_popen

Serve = Callable[[str], SiteServer]
ADAPTER = Path(sys.executable).parent / "adapter"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_good_page_text(serve_site: Serve) -> None:
    server = serve_site("page-good")
    code, out = invoke("check-dataset", server.url("/dataset/1"))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == f"HARVESTABLE  {server.url('/dataset/1')}"
    assert "DOI            10.5066/f7vx0dmq" in out
    assert f"{server.url('/files/1/zooplankton.csv')}  [text/csv]" in out
    assert "dataone (what DataONE needs from the Dataset): ok" in out
    assert "to fix:" not in out


def test_bad_page_text_names_each_problem(serve_site: Serve) -> None:
    server = serve_site("page-bad")
    code, out = invoke("check-dataset", server.url("/dataset/doi-null.html"))
    assert code == 1, out
    assert out.startswith("NOT HARVESTABLE  ")
    # a placeholder is an error under every profile; then what else the profile misses,
    # by the codes that explain it (not dataone/profile-unmet)
    assert out.splitlines()[2].startswith("  to fix: dataone/identifier-empty, dataone/")
    assert "profile-unmet" not in out.splitlines()[2]
    assert "ERROR    dataone/identifier-empty" in out
    assert "The identifier at $.identifier is 'doi:null'." in out
    assert "WARNING  dataone/wrong-property" in out
    assert "(Dataset, at $.distribution[0].contentURL)" in out
    # the stages come in pipeline order
    stages = [out.index(s) for s in ("fetch (", "extract (", "normalize (", "dataone (")]
    assert stages == sorted(stages)


def test_json_report_schema(serve_site: Serve) -> None:
    server = serve_site("page-good")
    # mnlite: its metadata copy is EML, not the ISO one the default dataone profile asks for
    code, out = invoke(
        "check-dataset", "--json", "--profile", "mnlite", server.url("/dataset/graph.html")
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["profile"] == "mnlite"
    assert [i["requirement"] for i in report["datasets"][0]["checklist"]] == [
        "identifier",
        "name",
        "description",
        "url",
    ]
    assert report["schema_version"] == 1
    assert report["url"] == report["final_url"] == server.url("/dataset/graph.html")
    assert report["harvestable"] is True
    assert report["path"] == [server.url("/dataset/graph.html")]
    [ds] = report["datasets"]
    assert ds["doi"] == "10.6073/pasta/8a1b2c3d"
    assert (ds["block"], ds["where"]) == (1, "block 1 $['@graph'][1]")  # beside a Person
    assert ds["identifiers"] == ["https://doi.org/10.6073/PASTA/8A1B2C3D"]
    assert ds["encoding"][0]["property"] == "subjectOf"
    assert ds["encoding"][0]["encodingFormat"] == [
        "application/xml",
        "https://eml.ecoinformatics.org/eml-2.2.0",
    ]
    assert ds["distributions"][0]["contentUrl"] == server.url("/files/graph/fluxes.csv")
    assert ds["distributions"][0]["encodingFormat"] == ["text/csv"]
    assert isinstance(report["signposts"], list) and isinstance(report["findings"], list)
    assert set(report["summary"]) == {"datasets", "errors", "warnings", "info"}
    # exactly the documented keys (adapter/report/jsonview.py), at every level
    assert set(report) == {
        "schema_version",
        "url",
        "final_url",
        "status",
        "not_modified",
        "harvestable",
        "profile",  # added by issue 17 (requirement profiles)
        "path",
        "summary",
        "datasets",
        "signposts",
        "other_links",  # added by issue 17
        "verdict",  # added by issue 30: could-not-check is not not-harvestable
        "rendered",  # added by issue 29: read from the DOM a browser rendered
        "findings",
    }
    assert set(ds) == {
        "id",
        "name",
        "block",
        "where",
        "doi",
        "harvestable",
        "identifiers",
        "persistent_identifiers",  # added by issue 17 (requirement profiles)
        "encoding",
        "distributions",
        "checklist",  # added by issue 17 (requirement profiles)
        "dataone_index",  # added by issue 28 (what DataONE search shows)
        "findings",
    }
    index = ds["dataone_index"]
    assert all(isinstance(v, str | list) for v in index.values())
    assert index["title"] == "Soil respiration chamber fluxes, Harvard Forest, 2018"
    assert isinstance(index["serviceEndpoint"], list)
    item = {"requirement", "label", "blocking", "met", "codes"}
    assert all(set(i) == item for i in ds["checklist"])
    assert ds["persistent_identifiers"] == [
        {
            "scheme": "doi",
            "value": "doi:10.6073/pasta/8a1b2c3d",
            "published": "https://doi.org/10.6073/PASTA/8A1B2C3D",
        }
    ]
    media = {"property", "contentUrl", "encodingFormat", "identifier", "dateModified", "where"}
    media |= {"url", "fileFormat", "link", "linkProperty", "reference"}  # added by issue 17
    assert all(set(m) == media for m in ds["encoding"] + ds["distributions"])
    link = {"rel", "href", "type", "profile", "anchor", "source"}
    assert all(set(s) == link for s in report["signposts"] + report["other_links"])


def test_json_says_which_block_each_dataset_came_from(serve_site: Serve) -> None:
    server = serve_site("page-bad")
    _, out = invoke("check-dataset", "--json", server.url("/dataset/two.html"))
    datasets = json.loads(out)["datasets"]
    assert [(d["block"], d["where"]) for d in datasets] == [(1, "block 1 $"), (2, "block 2 $")]


def test_json_says_a_dataset_came_from_the_linked_document(serve_site: Serve) -> None:
    server = serve_site("page-good")
    _, out = invoke("check-dataset", "--json", server.url("/dataset/linked.html"))
    [ds] = json.loads(out)["datasets"]
    assert ds["block"] == 1
    assert ds["where"].startswith(f"document {server.origin}/") and ds["where"].endswith(" $")


def test_json_findings_carry_code_severity_message_where_url(serve_site: Serve) -> None:
    server = serve_site("page-bad")
    code, out = invoke("check-dataset", "--json", server.url("/dataset/no-identifier.html"))
    assert code == 1
    report = json.loads(out)
    assert report["harvestable"] is False
    findings = report["datasets"][0]["findings"]
    by_code = {f["code"]: f for f in findings}
    # a warning that the profile makes blocking
    assert by_code["dataone/name-missing"]["severity"] == "warning"
    assert by_code["dataone/name-missing"]["where"] == "$.name"
    unmet = [f for f in findings if f["code"] == "dataone/profile-unmet"]
    assert any("name" in f["message"] and f["severity"] == "error" for f in unmet)
    # no identifier, the DOI in sameAs: the same warning as a DOI in url or @id
    assert by_code["dataone/doi-not-in-identifier"]["where"] == "$.sameAs"
    assert "10.6073/pasta/ice0001" in by_code["dataone/doi-not-in-identifier"]["message"]
    assert all(set(f) == {"code", "severity", "message", "where", "url"} for f in findings)
    assert report["summary"]["errors"] == sum(f["severity"] == "error" for f in findings)


def test_gone_page_exits_1(serve_site: Serve) -> None:
    server = serve_site("page-http")
    code, out = invoke("check-dataset", server.url("/dataset/gone"))
    assert code == 1
    assert "ERROR    fetch/gone" in out
    assert "extract (JSON-LD blocks in the page): not reached" in out


def test_unreachable_page_exits_2(virtual_clock: FakeClock) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out = invoke("check-dataset", "--json", f"http://127.0.0.1:{port}/dataset/1")
    assert code == 2
    report = json.loads(out)
    assert report["findings"][0]["code"] == "fetch/connection-failed"
    assert report["verdict"] == "could-not-check" and report["harvestable"] is False
    assert len(virtual_clock.sleeps) == 3  # after max_retries backoffs, on virtual time
    code, out = invoke("check-dataset", f"http://127.0.0.1:{port}/dataset/1")
    assert code == 2
    assert out.startswith("COULD NOT CHECK  http://127.0.0.1:") and "NOT HARVESTABLE" not in out
    assert "why: " in out and "(fetch/connection-failed)" in out and "to fix:" not in out
    assert "the server refused the connection" in out  # in words, not Python's exception text
    assert not any(t in out for t in ("Errno", "object at 0x", "ConnectionPool", "\x00"))


def test_a_page_that_answered_is_harvestable_or_not_never_could_not_check(
    serve_site: Serve,
) -> None:
    server = serve_site("page-http")
    code, out = invoke("check-dataset", "--json", server.url("/dataset/gone"))
    assert code == 1 and json.loads(out)["verdict"] == "not-harvestable"


def test_usage_errors_exit_2() -> None:
    assert invoke("check-dataset")[0] == 2
    code, out = invoke("check-dataset", "ftp://repo.example/dataset/1")
    assert code == 2 and "not an http(s) URL" in out


def test_findings_lists_the_catalogue() -> None:
    code, out = invoke("findings", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["code"] for r in rows] == [t.code for t in catalogue()]
    assert {"dataone/identifier-not-doi", "fetch/gone"} <= {r["code"] for r in rows}
    code, out = invoke("findings", "--markdown")
    assert out.startswith("| code | severity | meaning |\n|---|---|---|\n")
    assert "| `dataone/identifier-not-doi` | warning |" in out
    code, out = invoke("findings")
    assert code == 0 and "dataone/several-dois" in out


@pytest.mark.slow  # a fresh interpreter
def test_real_process(serve_site: Serve) -> None:
    """The console script as installed, then a real process forked warm (its exit status,
    and nothing on its standard error)."""
    good = serve_site("page-good").url("/dataset/1.html")
    done = subprocess.run(
        [str(ADAPTER), "check-dataset", "--json", good],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["datasets"][0]["doi"] == "10.5066/f7vx0dmq"
    bad = serve_site("page-bad").url("/dataset/free-text.html")
    proc = adapter_popen("check-dataset", bad, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert out.startswith("NOT HARVESTABLE")
    assert "dataone/identifier-not-doi" in out
    assert err == ""


def test_check_dataset_gets_the_landing_page_once(serve_site: Serve) -> None:
    # resolve GETs an HTML page for its <link>s; the check reads that same response
    server = serve_site("page-good")
    code, _ = invoke("check-dataset", "--profile", "mnlite", server.url("/dataset/graph.html"))
    assert code == 0
    gets = [e for e in server.log if e.method == "GET" and e.path == "/dataset/graph.html"]
    assert len(gets) == 1


def _node_config(path: Path, required: str, origin: str) -> Path:
    path.write_text(
        f"""
store_url: "sqlite:///unused.db"
nodes:
  - id: urn:node:STRICT
    name: Strict Repository
    start:
      entry_urls: ["{origin}/"]
    checks:
      profile: mnlite
      required: [{required}]
    dataone:
      submitter: "http://orcid.org/0000-0002-1825-0097"
      rights_holder: "CN=strict,DC=dataone,DC=org"
      contact_subject: "http://orcid.org/0000-0002-1825-0097"
""",
        "utf-8",
    )
    return path


def test_config_and_node_apply_the_nodes_required_checks(serve_site: Serve, tmp_path: Path) -> None:
    server = serve_site("sync-change")
    url = server.url("/dataset/stable")  # harvestable under mnlite, with no `encoding`
    assert invoke("check-dataset", "--profile", "mnlite", url)[0] == 0
    assert invoke("check-dataset", url)[0] == 1  # the default dataone profile needs a copy
    config = _node_config(tmp_path / "strict.yaml", "encoding", server.origin)
    code, out = invoke("check-dataset", "--config", str(config), "--node", "urn:node:STRICT", url)
    assert code == 1, out
    assert "NOT HARVESTABLE" in out and "dataone/encoding-missing" in out
    code, out = invoke("check-dataset", "--config", str(config), url)  # its only node
    assert code == 1, out


def test_a_file_or_standard_input_is_checked_before_it_is_published(tmp_path: Path) -> None:
    page = SITES / "page-good" / "dataset" / "1.html"
    code, out = invoke("check-dataset", "--file", str(page))
    assert code == 0, out
    assert out.startswith(f"HARVESTABLE  {page.resolve().as_uri()}")
    where = "https://repo.example/dataset/1"
    result = CliRunner().invoke(
        cli,
        ["check-dataset", "--file", "-", "--base-url", where, "--json", "--profile", "mnlite"],
        input=(SITES / "page-good" / "dataset" / "1.jsonld").read_bytes(),
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["url"] == where and report["harvestable"] is True
    broken = tmp_path / "draft.html"
    broken.write_text(
        '<html><head><script type="application/ld+json">'
        '{"@context": "https://schema.org/", "@type": "Dataset", "identifier": "doi:null"}'
        "</script></head></html>"
    )
    code, out = invoke("check-dataset", "--file", str(broken))
    assert code == 1 and "NOT HARVESTABLE" in out


def test_adapter_limits_is_read_when_the_command_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    # set after every module is imported: the command reads it as it starts
    page = SITES / "page-good" / "dataset" / "1.html"
    monkeypatch.setenv("ADAPTER_LIMITS", "max_json_nodes=5")
    code, out = invoke("check-dataset", "--file", str(page), "--json")
    assert code == 1
    findings = json.loads(out)["findings"]
    [capped] = [f for f in findings if f["code"] == "normalize/dataset-over-limit"]
    assert "max_json_nodes" in capped["message"]
    monkeypatch.setenv("ADAPTER_LIMITS", "max_json_nodes=-1")
    result = CliRunner().invoke(cli, ["check-dataset", "--file", str(page)])
    # a configuration error (`main` exits 2 on it), raised by the command, not by an import
    assert isinstance(result.exception, ConfigError) and "ADAPTER_LIMITS" in str(result.exception)
    monkeypatch.delenv("ADAPTER_LIMITS")
    assert invoke("check-dataset", "--file", str(page))[0] == 0
