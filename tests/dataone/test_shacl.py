"""The SHACL onboarding view: our SOSO shapes, an operator's own, and how results become findings.

Pages are served by the fixture server (fixtures/sites/page-shacl) and checked
through the real pipeline with `CheckOptions(shacl=...)`, the CLI and a sync.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from adapter.config.load import load_config
from adapter.dataone.shacl import ShapesError, load_shapes
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.models import DatasetReport
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.store import schema as t
from adapter.store.db import Store
from adapter.sync.run import run_node
from tests.support import stores
from tests.support.cli import Ran, run_in_process
from tests.support.fixture_server import SiteServer, start_site, stop

OWN_SHAPES = """@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix schema: <http://schema.org/> .
@prefix ex: <https://repo.example/shapes#> .
ex:Funded a sh:NodeShape ; sh:targetClass schema:Dataset ;
  sh:property [ sh:path schema:funding ; sh:minCount 1 ; sh:severity sh:Violation ;
                sh:message "Our repository asks every Dataset to name its funding." ] .
"""


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    servers = start_site("page-shacl")
    yield servers[0]
    stop(servers)


def check(site: SiteServer, path: str, shacl: str | None) -> DatasetReport:
    url = site.url(path)
    with Fetcher(policy=AddressPolicy([url])) as fetcher:
        return check_landing_page(url, fetcher, CheckOptions(shacl=shacl))


def shacl(report: DatasetReport) -> list[tuple[str, str | None, str]]:
    return [
        (f.code, f.where, f.message)
        for d in report.datasets
        for f in d.findings
        if f.code.startswith("shacl/")
    ]


def test_a_complete_soso_dataset_meets_every_shape(site: SiteServer) -> None:
    assert shacl(check(site, "/dataset/complete.html", "soso")) == []


def test_without_the_option_nothing_is_validated(site: SiteServer) -> None:
    assert shacl(check(site, "/dataset/messy.html", None)) == []


def test_each_broken_rule_names_its_property_section_and_value(site: SiteServer) -> None:
    found = shacl(check(site, "/dataset/messy.html", "soso"))
    by_where = {(code, where): message for code, where, message in found}
    assert "no @id IRI" in by_where[("shacl/violation", "$")]
    assert "(value: 95.1)" in by_where[("shacl/violation", "$..latitude")]
    assert "north of the weir" in by_where[("shacl/violation", "$..box")]
    assert "encodingFormat" in by_where[("shacl/violation", "$.distribution")]
    assert "not the text" in by_where[("shacl/advice", "$.isAccessibleForFree")]
    assert "ISO 8601" in by_where[("shacl/advice", "$.temporalCoverage")]
    assert ("shacl/advice", "$.variableMeasured") in by_where
    for _code, _where, message in found:
        assert "guides/Dataset.md" in message  # every shape names its SOSO section
    codes = [code for code, _, _ in found]
    assert codes == sorted(codes, key=lambda c: c != "shacl/violation")  # violations first


def test_shacl_findings_advise_and_never_change_the_verdict(site: SiteServer) -> None:
    plain = check(site, "/dataset/messy.html", None)
    validated = check(site, "/dataset/messy.html", "soso")
    assert validated.harvestable is plain.harvestable


def test_an_operators_own_shapes_replace_ours(site: SiteServer, tmp_path: Path) -> None:
    shapes = tmp_path / "ours.ttl"
    shapes.write_text(OWN_SHAPES)
    found = shacl(check(site, "/dataset/complete.html", str(shapes)))
    assert found == [
        (
            "shacl/violation",
            "$.funding",
            "funding: Our repository asks every Dataset to name its funding.",
        )
    ]


def test_an_unreadable_shapes_file_is_said_with_its_path(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ttl"
    broken.write_text("@prefix sh: <http://www.w3.org/ns/shacl#> .\nthis is not turtle")
    with pytest.raises(ShapesError, match=str(broken)):
        load_shapes(str(broken))


def test_a_shapes_file_broken_after_validation_is_a_page_finding(
    site: SiteServer, tmp_path: Path
) -> None:
    broken = tmp_path / "later.ttl"
    broken.write_text("not turtle at all")
    report = check(site, "/dataset/complete.html", str(broken))
    codes = [f.code for f in report.findings]
    assert "shacl/shapes-unreadable" in codes
    assert report.harvestable is check(site, "/dataset/complete.html", None).harvestable


def _adapter(*args: str, cwd: Path) -> Ran:
    """The command's contract (exit code, JSON, one error line) in this process: no
    signal or process tree is the point (tests/support/cli.py)."""
    return run_in_process(list(args), cwd)


def test_check_dataset_shacl_without_a_file_uses_the_bundled_shapes(
    site: SiteServer, tmp_path: Path
) -> None:
    done = _adapter(
        "check-dataset", site.url("/dataset/messy.html"), "--json", "--shacl", cwd=tmp_path
    )
    report = json.loads(done.stdout)
    codes = {f["code"] for d in report["datasets"] for f in d["findings"]}
    assert {"shacl/violation", "shacl/advice"} <= codes
    plain = _adapter("check-dataset", site.url("/dataset/messy.html"), "--json", cwd=tmp_path)
    assert done.returncode == plain.returncode


def test_check_dataset_refuses_a_broken_shapes_file_before_fetching(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ttl"
    broken.write_text("nope")
    done = _adapter("check-dataset", "http://127.0.0.1:9/x", "--shacl", str(broken), cwd=tmp_path)
    assert done.returncode == 2
    assert str(broken) in done.stderr
    assert "Traceback" not in done.stderr


def test_a_node_setting_validates_every_synced_page_and_can_make_it_blocking(
    site: SiteServer, tmp_path: Path
) -> None:
    def sync(extra: str, url: str) -> dict[str, int]:
        config = tmp_path / "node.yaml"
        config.write_text(
            f"store_url: {url}\nnodes:\n"
            "  - id: urn:node:SHACL\n"
            "    name: shacl\n"
            f"    start: {{sitemap_urls: ['{site.url('/sitemap.xml')}']}}\n"
            "    politeness: {requests_per_second: 100}\n"
            # mnlite: the pages have no ISO metadata copy (the dataone profile's requirement)
            f"    checks: {{profile: mnlite, shacl: soso{extra}}}\n"
            "    dataone: {submitter: x, rights_holder: y, contact_subject: z}\n"
        )
        loaded = load_config(config)
        return run_node(loaded, loaded.nodes[0]).not_harvestable

    url = stores.sqlite_url(tmp_path)
    assert sync("", url) == {}  # advice only: both pages synced as before
    store = Store.open(url, create=False)
    try:
        with store.read() as conn:
            stored = " ".join(conn.execute(select(t.frontier.c.last_report)).scalars().all())
    finally:
        store.close()
    assert "shacl/violation" in stored
    blocked = sync(", required: [shacl/violation]", stores.sqlite_url(tmp_path, "blocking.db"))
    assert blocked == {"dataone/required-check-failed": 1}  # messy.html; complete.html passes
