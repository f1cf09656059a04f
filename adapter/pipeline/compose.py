"""The one place the stages are composed: one landing page in, one report out.

    fetch -> signposting.collect -> extract -> normalize
          -> (no Dataset? the describedby/alternate JSON-LD document)
          -> dataone checks per Dataset -> soso recommendations per Dataset
          -> what DataONE search would show of it (`dataone.index`, dataone/index-*)
          -> signposting.crosscheck
          -> the node's requirement profile (its checklist) and required checks

`check_landing_page` is what `adapter check-dataset` and the sync run for every
page. It never raises for a site's problems: a fetch failure, an HTTP error
or a broken document is a finding in the report, and the caller goes on. A
fetch failure, a 304 or an HTTP error ends the page's check with the reason in
the report (`fetch_page`), and so does a sitemap given as a page
(`extract/sitemap-given`); everything else goes on to the readers.

Each stage returns its findings and facts as values; this module alone puts them
into the `DatasetReport`, in the order the stages ran.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from adapter.dataone import profiles
from adapter.dataone.requirements import check_requirements, enforce_required
from adapter.dataone.shacl import SHAPES_UNREADABLE, ShapesError, load_shapes, shacl_findings
from adapter.dataone.soso.rules import check_soso
from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity
from adapter.http.fetcher import Fetcher
from adapter.jsonld.normalize import NormalizedDataset
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import DatasetReport, DatasetResult, Fetched, Link
from adapter.page.tree import PageTree
from adapter.pipeline.landing import fetch_page, sitemap_finding
from adapter.pipeline.read import (
    LINKED_JSONLD_UNREACHABLE,
    Read,
    jsonld_links,
    linked_datasets,
    read_datasets,
)
from adapter.signposting import stage as signposting

if TYPE_CHECKING:
    from adapter.dataone.index.compute import IndexFields

log = logging.getLogger(__name__)

INTERNAL_ERROR = FindingType(
    "pipeline/internal-error",
    Severity.ERROR,
    "The adapter failed while checking this page (a bug in the adapter, not in the page); "
    "the run goes on. Please report it with the page's URL.",
)


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How to check a page. `required` names checks a node makes blocking; see
    `adapter.dataone.requirements.REQUIREMENTS` (``encoding``, ``distribution``,
    ``date-modified``, ``id``, or a finding code prefix such as
    ``signposting/cite-as``)."""

    limits: Limits = DEFAULT_LIMITS
    follow: bool = False
    # the requirement profile that decides `harvestable` (`adapter.dataone.profiles`)
    profile: str = profiles.DEFAULT_PROFILE
    identifier_schemes: tuple[str, ...] = ("doi",)  # the custom profile's identifiers
    required: frozenset[str] = field(default_factory=frozenset)
    shacl: str | None = None  # validate each Dataset against SHACL shapes: "soso" or a file
    # read link sets on other hosts than the landing page's (check-dataset: only with --follow)
    linksets_elsewhere: bool = True
    # what DataONE search would show of each Dataset (`adapter.dataone.index`); the sync
    # turns it off unless the node asks (`checks.dataone_index`): several times normalize's CPU
    dataone_index: bool = True


def check_landing_page(
    url: str,
    fetcher: Fetcher,
    options: CheckOptions = CheckOptions(),  # frozen, so safe to share
    *,
    sitemap_links: Sequence[Link] = (),
    etag: str | None = None,
    last_modified: str | None = None,
    # the page's GET already made (resolve's), or how it failed: never fetched twice
    prefetched: Fetched | FetchError | None = None,
) -> DatasetReport:
    """Fetch, read and check one landing page; every problem is a finding in the report."""
    report = DatasetReport(url=url, profile=options.profile)
    fetched = fetch_page(report, fetcher, url, (etag, last_modified), prefetched)
    if fetched is None:
        return report
    limits = options.limits
    report.rendered = fetched.rendered  # its body is the DOM a browser rendered (adapter.render)
    report.findings.extend(fetched.render_findings)
    sitemap = sitemap_finding(fetched)
    if sitemap is not None:  # not a page: nothing else to read
        report.findings.append(sitemap)
        return report
    tree = PageTree(fetched.body)  # parsed once for the links and the JSON-LD, where it can be
    pages = signposting.landing_pages(url, fetched)
    page = fetched.final_url

    def collect() -> signposting.Collected:
        return signposting.collect(
            url,
            fetched,
            fetcher,
            sitemap_links,
            limits=limits,
            tree=tree,
            elsewhere=options.linksets_elsewhere,
        )

    def read() -> Read:
        embedded = read_datasets(fetched, limits, tree)
        if embedded.datasets:
            return embedded
        return linked_datasets(embedded, fetched, jsonld_links(links, pages), fetcher, limits)

    def crosscheck() -> signposting.CrossChecked:
        failed = {f.url for f in report.findings if f.code == LINKED_JSONLD_UNREACHABLE.code}
        return signposting.crosscheck(
            report.datasets,
            links,
            pages,
            fetcher,
            follow=options.follow,
            limits=limits,
            unreachable=frozenset(failed),
        )

    collected = _guard(report, "signposting", collect)
    links = collected.links if collected is not None else []
    if collected is not None:
        report.signposts.extend(collected.links)
        report.findings.extend(collected.findings)
    found = _guard(report, "extract", read)
    if found is not None:
        report.findings.extend(found.findings)
        report.path.extend(found.path)
    for dataset in found.datasets if found is not None else []:
        result = _guard(report, "dataone", partial(_check, dataset, page))
        if result is not None:
            soso = _guard(report, "soso", partial(check_soso, result.framed, page))
            result.findings.extend(soso or [])
            search = (
                _guard(
                    report,
                    "dataone-index",
                    partial(_index_dataset, result.original, result.framed, page),
                )
                if options.dataone_index
                else None
            )
            if search is not None:  # what DataONE search would show, and what it would miss
                result.dataone_index, missed = search
                result.findings.extend(missed)
            report.datasets.append(result)
    checked = _guard(report, "signposting", crosscheck)
    if checked is not None:
        report.findings.extend(checked.findings)
        if checked.dataset is not None:
            checked.dataset.findings.extend(checked.dataset_findings)
    if options.shacl is not None:
        _guard(report, "shacl", partial(_validate_shacl, report, options.shacl))
    _guard(report, "profile", partial(_judge, report, options))
    if options.required:
        _enforce(report, options.required)
    return report


# -- extract, normalize, check ------------------------------------------------


def _check(found: NormalizedDataset, page: str) -> DatasetResult:
    checked = check_requirements(found.framed, page)
    return DatasetResult(
        id=found.id,
        doi=checked.doi,
        identifiers=checked.identifiers,
        encoding=checked.encoding,
        distributions=checked.distributions,
        framed=found.framed,
        original=found.original,
        findings=checked.findings,
        block=found.block_index,
        where=found.where,
        pids=checked.pids,
        first_identifier=checked.first_identifier,
    )


def _index_dataset(
    original: Mapping[str, Any], framed: Mapping[str, Any], page: str
) -> tuple[IndexFields, list[Finding]]:
    """`adapter.dataone.index.rules.index_dataset`, imported on first use: rdflib's SPARQL
    under it was a fifth of every checking process's start-up, and the sync asks for
    DataONE search's view only where a node does (`checks.search_index`)."""
    from adapter.dataone.index.rules import index_dataset

    return index_dataset(original, framed, page)


def _judge(report: DatasetReport, options: CheckOptions) -> None:
    """Each Dataset's checklist under the node's profile; its unmet requirements as errors."""
    profile = profiles.profile_for(options.profile, options.identifier_schemes)
    page = report.final_url or report.url
    for result in report.datasets:
        result.checklist, errors = profiles.judge(
            profile, result, report.findings, page, options.required
        )
        result.findings.extend(errors)


def _validate_shacl(report: DatasetReport, shapes_source: str) -> None:
    """The onboarding view: each Dataset against the shapes (pyshacl is loaded on first use)."""
    page = report.final_url or report.url
    try:
        shapes = load_shapes(shapes_source)
    except ShapesError as exc:  # the operator's file: said once per page, the page goes on
        report.findings.append(SHAPES_UNREADABLE.at(page, str(exc)))
        return
    for result in report.datasets:
        result.findings.extend(shacl_findings(result.framed, page, shapes))


def _enforce(report: DatasetReport, required: frozenset[str]) -> None:
    page = report.final_url or report.url
    for result in report.datasets:
        result.findings.extend(enforce_required(result.findings, required, page))
    if report.datasets:
        report.findings.extend(enforce_required(report.findings, required, page))


T = TypeVar("T")


def _guard(report: DatasetReport, stage: str, step: Callable[[], T]) -> T | None:
    """Run one stage; an unexpected exception (our bug) becomes a finding, not a crash."""
    try:
        return step()
    except Exception as exc:  # the one boundary that keeps a run going
        log.exception("%s stage failed on %s", stage, report.url)
        report.findings.append(
            INTERNAL_ERROR.at(
                report.final_url or report.url,
                f"The adapter failed in its {stage} stage on this page: "
                f"{type(exc).__name__}: {exc}. Please report it with the page's URL.",
            )
        )
        return None
