"""A page with 214 Datasets: totals first, a verdict line each, the first few and the odd
ones out in full. Over real HTTP: a cruise page whose 214 casts are one @graph, three of
them without a DOI (tests/support/fixture_server.py `many_datasets`), and a JSON-LD feed
of 214 Datasets that all fail the dataone profile the same way. The cruise page is checked
once for the module: its two tests read the same report (a check of it is 1.4 CPU-s)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.manydatasets import FEW, summarize
from adapter.models import DatasetReport
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.report.jsonview import to_json
from adapter.report.text import render_text
from tests.support.fixture_server import SiteServer, start_site, stop

Serve = Callable[[str], SiteServer]
NO_DOI = (57, 138, 201)


def check(server: SiteServer, path: str, profile: str = "dataone") -> DatasetReport:
    with Fetcher(policy=AddressPolicy([server.origin])) as fetcher:
        return check_landing_page(server.url(path), fetcher, CheckOptions(profile=profile))


@pytest.fixture(scope="module")
def cruise() -> Iterator[DatasetReport]:
    """The cruise page's report; no test changes it (summarize and the renderers only read)."""
    servers = start_site("real-shapes")
    try:
        yield check(servers[0], "/cruise/at50-12.html")
    finally:
        stop(servers)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_the_odd_ones_out_are_shown_whole_beside_the_first_few(cruise: DatasetReport) -> None:
    report = cruise
    assert len(report.datasets) == 214
    many = summarize(report.datasets)
    assert many is not None
    assert (many.total, many.harvestable, many.not_harvestable) == (214, 211, 3)
    assert many.whole == {1, 2, 3, *NO_DOI}
    totals = {t.code: (t.severity, t.datasets, t.first) for t in many.codes}
    assert totals["dataone/profile-unmet"] == ("error", 3, 57)
    assert totals["dataone/identifier-missing"] == ("warning", 3, 57)
    assert totals["soso/funding-missing"] == ("info", 214, 1)
    assert [t.severity for t in many.codes] == sorted(
        (t.severity for t in many.codes), key=["error", "warning", "info"].index
    )


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_when_every_dataset_fails_alike_only_the_first_few_are_whole(serve_site: Serve) -> None:
    report = check(serve_site("real-shapes"), "/dataset/many.json")
    many = summarize(report.datasets)
    assert many is not None and many.harvestable == 0
    assert many.whole == {1, 2, 3}  # 214 times the same advice says nothing new
    assert [(t.code, t.datasets) for t in many.codes][:1] == [("dataone/profile-unmet", 214)]


def test_a_page_with_few_datasets_is_shown_whole(serve_site: Serve) -> None:
    report = check(serve_site("page-bad"), "/dataset/two.html")
    assert 1 < len(report.datasets) <= FEW
    assert summarize(report.datasets) is None
    text = render_text(report)
    assert "Dataset 1 of 2:" in text and "Dataset 2 of 2:" in text
    assert "Each Dataset" not in text


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_the_text_report_gives_totals_then_a_line_each(cruise: DatasetReport) -> None:
    report = cruise
    text = render_text(report)
    # 463 kB and 7,325 lines before (every Dataset whole, every finding of each)
    assert len(text) < 60_000, len(text)
    totals = text.index("214 Datasets: 211 harvestable, 3 not harvestable")
    assert totals < text.index("Each Dataset") < text.index("Dataset 1 of 214:")
    lines = re.findall(r"^ +(\d+)\. \[(harvestable|not harvestable)\]", text, re.M)
    assert [int(n) for n, _ in lines] == list(range(1, 215))
    assert [int(n) for n, verdict in lines if verdict == "not harvestable"] == list(NO_DOI)
    assert "  57. [not harvestable] CTD cast 057" in text
    assert "<- dataone/identifier-missing" in text  # each one says what keeps it out
    whole = [int(n) for n in re.findall(r"^Dataset (\d+) of 214:", text, re.M)]
    assert whole == [1, 2, 3, *NO_DOI]
    # a folded Dataset's findings are counted once per code, not repeated
    assert "dataone/encoding-incomplete: 208 other Datasets (4, 5, 6" in text
    assert "(Dataset 4, at" not in text
    # the JSON report keeps every Dataset and every finding: programs want them all
    data = to_json(report)
    assert len(data["datasets"]) == 214
    assert sum(len(d["findings"]) for d in data["datasets"]) == sum(
        len(d.findings) for d in report.datasets
    )
