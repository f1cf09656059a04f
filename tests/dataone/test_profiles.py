"""Requirement profiles: one fixture page per verdict, judged under each profile as a checklist.

Pages from fixtures/sites/page-profiles over a real local HTTP server.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapter.dataone.profiles import PROFILES, profile_for
from adapter.dataone.records import possible_series_ids, series_id
from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.models import DatasetReport
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.report.jsonview import to_json
from adapter.report.text import render_text
from tests.support.fixture_server import SiteServer, start_site, stop

EVERY_SCHEME = ("doi", "ark", "handle", "urn", "http")

# page -> the profiles under which it is harvestable (custom: with every identifier scheme)
VERDICTS = {
    "complete": {"dataone", "soso", "mnlite", "custom"},
    "no-copy": {"mnlite", "custom"},  # a DOI and a download, but no metadata copy
    "ark": {"mnlite", "custom"},
    "handle": {"mnlite", "custom"},
    "urn": {"mnlite", "custom"},
    "own-iri": {"mnlite", "custom"},
    "local-id": {"mnlite"},  # a local id and a name: all mnlite asks
    "other-host-iri": {"mnlite"},  # an IRI on someone else's host is no identifier of theirs
}


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    servers = start_site("page-profiles")
    yield servers[0]
    stop(servers)


def check(site: SiteServer, page: str, profile: str = "dataone", **kw: object) -> DatasetReport:
    options = CheckOptions(profile=profile, **kw)  # type: ignore[arg-type]
    with Fetcher(policy=AddressPolicy([site.origin])) as fetcher:
        return check_landing_page(site.url(f"/dataset/{page}.html"), fetcher, options)


@pytest.mark.parametrize("page", sorted(VERDICTS))
def test_one_page_per_verdict(site: SiteServer, page: str) -> None:
    got = set()
    for profile in PROFILES:
        schemes = EVERY_SCHEME if profile == "custom" else ("doi",)
        report = check(site, page, profile, identifier_schemes=schemes)
        assert report.profile == profile
        [dataset] = report.datasets
        blocking_unmet = [i for i in dataset.checklist if i.blocking and not i.met]
        # the verdict is the checklist's: harvestable exactly when every requirement is met
        assert report.harvestable == (not blocking_unmet), (profile, blocking_unmet)
        if report.harvestable:
            got.add(profile)
    assert got == VERDICTS[page]


def test_a_missing_copy_blocks_under_dataone_and_the_checklist_says_why(
    site: SiteServer,
) -> None:
    report = check(site, "no-copy")
    [dataset] = report.datasets
    items = {i.name: i for i in dataset.checklist}
    assert [n for n, i in items.items() if not i.met] == ["encoding", "signposting/cite-as"]
    assert items["encoding"].blocking and items["encoding"].codes == ("dataone/encoding-missing",)
    assert not items["signposting/cite-as"].blocking  # shown, not blocking
    [error] = [f for f in dataset.findings if f.severity == "error"]
    assert error.code == "dataone/profile-unmet"
    assert "'dataone' profile requires" in error.message and "encoding-missing" in error.message


def test_an_eml_copy_is_not_the_iso_copy_dataone_asks_for(site: SiteServer) -> None:
    report = check(site, "ark", "custom", identifier_schemes=("ark",), required=frozenset())
    assert report.harvestable
    strict = check(site, "ark", "dataone")
    unmet = [i.name for i in strict.datasets[0].checklist if i.blocking and not i.met]
    assert unmet == ["doi-identifier"]  # its ISO copy and download are fine


def test_custom_takes_only_the_schemes_it_names_and_the_node_required_list(
    site: SiteServer,
) -> None:
    assert check(site, "handle", "custom", identifier_schemes=("handle",)).harvestable
    only_ark = check(site, "handle", "custom", identifier_schemes=("ark",))
    assert not only_ark.harvestable
    [item] = [i for i in only_ark.datasets[0].checklist if not i.met and i.blocking]
    assert item.name == "persistent-identifier" and "ARK" in item.label
    # judged from the Dataset itself, with the advice beside it
    assert item.codes == ("dataone/profile-unmet", "dataone/identifier-not-doi")
    required = check(
        site,
        "handle",
        "custom",
        identifier_schemes=("handle",),
        required=frozenset({"date-modified"}),
    )
    assert not required.harvestable
    [extra] = [i for i in required.datasets[0].checklist if i.name == "date-modified"]
    assert (extra.met, extra.codes) == (False, ("dataone/date-modified-missing",))
    codes = {f.code for f in required.datasets[0].findings if f.severity == "error"}
    assert codes == {"dataone/required-check-failed"}


def test_soso_judges_the_properties_of_the_dataset_itself(site: SiteServer) -> None:
    report = check(site, "no-copy", "soso")
    unmet = {i.name for i in report.datasets[0].checklist if not i.met}
    assert {"keywords", "license", "creator", "version", "spatial-coverage"} <= unmet
    assert "description-length" not in unmet and "distribution" not in unmet
    assert "identifier" not in unmet and "encoding" not in {
        i.name for i in report.datasets[0].checklist
    }


def test_both_reports_show_the_checklist(site: SiteServer) -> None:
    report = check(site, "local-id", "mnlite")
    text = render_text(report)
    assert "  profile mnlite: 2 of 2 requirements met" in text
    assert "    [x] an `identifier` that is not a placeholder" in text
    assert (
        "    [ ] a `description` (the abstract) (recommended)  <- dataone/description-missing"
        in text
    )
    data = to_json(report)
    assert data["profile"] == "mnlite" and data["harvestable"] is True
    [dataset] = data["datasets"]
    assert dataset["checklist"][0] == {
        "requirement": "identifier",
        "label": "an `identifier` that is not a placeholder",
        "blocking": True,
        "met": True,
        "codes": ["dataone/identifier-not-doi", "dataone/identifier-not-persistent"],
    }
    assert dataset["persistent_identifiers"] == []


@pytest.mark.parametrize(
    ("page", "doi_scheme", "mnlite_scheme"),
    [
        ("complete", "doi:10.82120/mbari.bof.2021", "doi:10.82120/MBARI.BOF.2021"),
        ("no-copy", "doi:10.82120/nwt.snow.7", "https://doi.org/10.82120/NWT.SNOW.7"),
        ("ark", "ark:/13030/m5kelp42", "ark:/13030/m5kelp42"),
        ("handle", "hdl:20.500.12345/LW-SM-2020", "https://hdl.handle.net/20.500.12345/LW-SM-2020"),
        ("urn", "urn:nbn:fi:att-2022-ice-0031", "urn:nbn:fi:att-2022-ice-0031"),
        ("local-id", None, "EX2211-CTD"),  # a local id: a series only as mnlite forms them
    ],
)
def test_series_ids_under_each_scheme(
    site: SiteServer, page: str, doi_scheme: str | None, mnlite_scheme: str
) -> None:
    [dataset] = check(site, page, "mnlite").datasets
    accepted = profile_for("mnlite").schemes
    assert series_id(dataset, "doi", accepted) == doi_scheme
    assert series_id(dataset, "mnlite", accepted) == mnlite_scheme
    assert series_id(dataset, "doi", ("doi",)) == (
        doi_scheme if page in ("complete", "no-copy") else None
    )
    listed = possible_series_ids(dataset)
    assert mnlite_scheme in listed and (doi_scheme is None or doi_scheme in listed)


def test_an_own_iri_is_the_publishers_identifier(site: SiteServer) -> None:
    [dataset] = check(site, "own-iri", "mnlite").datasets
    [pid] = dataset.pids
    assert pid.scheme == "http" and pid.value == site.url("/id/dataset/seal-counts")
    assert series_id(dataset, "doi", ("doi", "http")) == pid.value
    [other] = check(site, "other-host-iri", "mnlite").datasets
    assert other.pids == [] and series_id(other, "doi", EVERY_SCHEME) is None


def test_a_series_id_is_never_a_pid_form() -> None:
    from adapter.models import DatasetResult

    dataset = DatasetResult(id=None, doi=None, first_identifier="sha256:abc")
    assert series_id(dataset, "mnlite", ()) is None
