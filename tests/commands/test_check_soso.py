"""`adapter check-dataset` shows science-on-schema.org advice: grouped, never blocking under
the default profile."""

from __future__ import annotations

import json
from collections.abc import Callable

from click.testing import CliRunner

from adapter.cli import cli
from tests.support.fixture_server import SiteServer

Serve = Callable[[str], SiteServer]


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def section(out: str, title: str) -> list[str]:
    """The lines of one stage of "Findings by stage", without its title."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {title} ("))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    return lines[start + 1 : end]


def test_absent_properties_share_one_line_and_the_page_stays_harvestable(serve_site: Serve) -> None:
    server = serve_site("page-soso")
    code, out = invoke("check-dataset", server.url("/dataset/bare.html"))
    assert code == 0, out
    assert out.startswith("HARVESTABLE  ")
    assert "  science-on-schema.org: improve license, creator; consider spatialCoverage, " in out
    soso = section(out, "soso")
    assert soso[:5] == [
        "    WARNING  not given: license, creator  (Dataset)",
        "             soso/license-missing, soso/creator-missing",
        "    INFO     not given: spatialCoverage, temporalCoverage, variableMeasured, "
        "datePublished, isAccessibleForFree, funding  (Dataset)",
        "             soso/spatial-missing, soso/temporal-missing, soso/variables-missing, "
        "soso/date-published-missing, soso/free-missing, soso/funding-missing",
        "    INFO     soso/checksum-missing",
    ]
    assert len(soso) == 7  # the checksum finding's message and place follow


def test_each_problem_names_its_path_and_repeats_are_folded(serve_site: Serve) -> None:
    server = serve_site("page-soso")
    code, out = invoke("check-dataset", server.url("/dataset/people.html"))
    assert code == 0, out
    soso = "\n".join(section(out, "soso"))
    assert "WARNING  soso/orcid-invalid" in soso
    assert "creator[2].identifier is the ORCID iD 0000-0002-1825-0098" in soso
    assert "(Dataset, at $.creator[2].identifier)" in soso
    assert "publish https://spdx.org/licenses/MIT as well" in soso
    # three creators lack an ORCID: two are shown, the third is one line
    assert soso.count("INFO     soso/creator-no-orcid") == 2
    assert "... and 1 more soso/creator-no-orcid: $.creator[5]" in soso
    # warnings before info
    assert soso.index("soso/license-unknown-uri") < soso.index("soso/orcid-not-uri")


def test_a_complete_page_reads_ok(serve_site: Serve) -> None:
    server = serve_site("page-soso")
    code, out = invoke("check-dataset", server.url("/dataset/complete.html"))
    assert code == 0, out
    assert (
        "  soso (science-on-schema.org recommendations; blocking only under the soso profile): ok"
        in out
    )
    assert "science-on-schema.org: " not in out.split("Findings by stage")[0]


def test_the_json_report_lists_every_finding_under_its_dataset(serve_site: Serve) -> None:
    server = serve_site("page-soso")
    code, out = invoke("check-dataset", "--json", server.url("/dataset/coverage.html"))
    assert code == 0, out
    report = json.loads(out)
    assert report["harvestable"] is True
    soso = [f for f in report["datasets"][0]["findings"] if f["code"].startswith("soso/")]
    assert {f["severity"] for f in soso} == {"warning", "info"}
    where = {f["code"]: f["where"] for f in soso}
    assert where["soso/box-order"] == "$.spatialCoverage[2].geo.box"
    assert where["soso/temporal-order"] == "$.temporalCoverage[0]"
    assert not [f for f in report["findings"] if f["code"].startswith("soso/")]  # per Dataset
