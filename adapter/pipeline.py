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
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from adapter.dataone import profiles
from adapter.dataone.requirements import check_requirements, enforce_required
from adapter.dataone.shacl import SHAPES_UNREADABLE, ShapesError, load_shapes, shacl_findings
from adapter.dataone.soso.rules import check_soso
from adapter.discovery.sitemap_body import sniff
from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity, Stage, has_errors
from adapter.http import findings as fetch_findings
from adapter.http.decompress import GZIP_MAGIC
from adapter.http.fetcher import ACCEPT_HTML, ACCEPT_JSONLD, Fetcher
from adapter.jsonld import normalize as normalize_stage
from adapter.jsonld.normalize import NormalizedDataset
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import DatasetReport, DatasetResult, Fetched, Link
from adapter.page import extract as extract_stage
from adapter.page import findings as page_findings
from adapter.page.extract import Skipped
from adapter.page.findings import SITEMAP_GIVEN
from adapter.page.tree import PageTree
from adapter.render import findings as render_findings
from adapter.signposting import stage as signposting

if TYPE_CHECKING:
    from adapter.dataone.index.compute import IndexFields

log = logging.getLogger(__name__)

LINKED_JSONLD = FindingType(
    "extract/linked-jsonld-used",
    Severity.WARNING,
    "The page embeds no schema.org Dataset; the adapter used the JSON-LD document the page "
    "links to (describedby or alternate). Harvesters that read only the page see nothing: "
    "embed the JSON-LD as well.",
)
LINKED_JSONLD_UNREACHABLE = FindingType(
    "extract/linked-jsonld-unreachable",
    Severity.WARNING,
    "The page embeds no schema.org Dataset and the JSON-LD document it links to "
    "(describedby or alternate) could not be fetched (refused, DNS, timeout, an HTTP error, "
    "over the size cap), so the Dataset it may hold was not read. The landing page itself "
    "answered; the finding is about the link.",
)
INTERNAL_ERROR = FindingType(
    "pipeline/internal-error",
    Severity.ERROR,
    "The adapter failed while checking this page (a bug in the adapter, not in the page); "
    "the run goes on. Please report it with the page's URL.",
)

# page-level findings that a linked JSON-LD document makes moot
_MOOT = frozenset(
    t.code for t in (page_findings.NO_JSONLD, page_findings.JS_RENDERED, normalize_stage.NO_DATASET)
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
    sitemap = _sitemap_finding(fetched)
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

    def read() -> _Read:
        embedded = _read_datasets(fetched, limits, tree)
        if embedded.datasets:
            return embedded
        return _linked_datasets(embedded, fetched, _jsonld_links(links, pages), fetcher, limits)

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


_SNIFF = 64 * 1024  # enough of the body to find a root element after any prolog


def _sitemap_finding(fetched: Fetched) -> Finding | None:
    """extract/sitemap-given when the body is a sitemap (gzipped or not), by its root."""
    head = fetched.body[:_SNIFF]
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _SNIFF)
        except zlib.error:
            return None
    root = sniff(head)
    if root not in ("urlset", "sitemapindex"):
        return None
    where = fetched.final_url
    return SITEMAP_GIVEN.at(
        where,
        f"{where} is a sitemap (<{root}>), not a landing page: it lists pages rather than "
        f"describing a Dataset. List them with `adapter discover {where}` and check each page.",
    )


@dataclass(frozen=True, slots=True)
class _Read:
    """What reading the page (and the JSON-LD it links to) gave."""

    datasets: list[NormalizedDataset]
    findings: list[Finding]  # page-level, in the order they were found
    path: list[str] = field(default_factory=list)  # the linked documents' URLs, redirects first


def _read_datasets(fetched: Fetched, limits: Limits, tree: PageTree | None = None) -> _Read:
    """The framed Datasets of one response (an HTML page or a JSON-LD document)."""
    url = fetched.final_url
    extraction = extract_stage.extract(
        fetched.body,
        url=url,
        content_type=fetched.content_type,
        charset=fetched.charset,
        limits=limits,
        tree=tree,
    )
    if not extraction.blocks:
        if extraction.skipped and not has_errors(extraction.findings):
            unreadable = _unreadable(url, extraction.skipped, limits)
            return _Read([], [*extraction.findings, unreadable])
        return _Read([], extraction.findings)
    datasets, findings = normalize_stage.normalize(
        extraction.blocks, base_url=extraction.base_url or url, limits=limits
    )
    if not datasets and _blocks_left_out(extraction.findings):
        findings = [_too_many_blocks(f, url, limits) for f in findings]
    return _Read(datasets, [*extraction.findings, *findings])


def _blocks_left_out(findings: Sequence[Finding]) -> bool:
    return any(f.code == page_findings.TOO_MANY_BLOCKS.code for f in findings)


def _too_many_blocks(finding: Finding, url: str, limits: Limits) -> Finding:
    """no-dataset when max_jsonld_blocks left blocks unread: say that the cap bit."""
    if finding.code != normalize_stage.NO_DATASET.code:
        return finding
    cap = limits.max_jsonld_blocks
    return normalize_stage.over_limit(
        url, [f"blocks after {cap}"], "max_jsonld_blocks", cap, sure=False
    )


def _unreadable(url: str, skipped: list[Skipped], limits: Limits) -> Finding:
    """no-dataset when every JSON-LD candidate was skipped: only warnings say why.

    When a cap skipped them, the finding says which (`normalize/dataset-over-limit`):
    a limit that bites is not a page without a Dataset.
    """
    capped = [(s.where, s.limit) for s in skipped if s.limit is not None]
    if capped:
        name = capped[0][1]
        blocks = [where for where, limit in capped if limit == name]
        return normalize_stage.over_limit(url, blocks, name, getattr(limits, name), sure=False)
    words = [f"{s.where}: {s.why}" for s in skipped[:8]]
    listed = "; ".join(words) + ("; ..." if len(skipped) > 8 else "")
    message = (
        "No schema.org Dataset could be read: the page's only JSON-LD could not be read and "
        f"was skipped ({listed}); see the extract findings above. Fixing it (strict JSON, "
        "every value present) makes the Dataset readable."
    )
    return normalize_stage.NO_DATASET.at(url, message)


def _linked_datasets(
    embedded: _Read, fetched: Fetched, links: list[Link], fetcher: Fetcher, limits: Limits
) -> _Read:
    """No embedded Dataset: the JSON-LD document a describedby/alternate link names.

    `embedded` is what the page itself gave; the first linked document with a Dataset
    makes its findings that say "no metadata here" moot. A linked document that cannot
    be fetched is a finding about its link (`linked_failure`), never a fetch/ finding:
    the landing page answered, and a 404 there is not the page gone.
    """
    findings = list(embedded.findings)
    path: list[str] = []
    for link in links:
        try:
            doc = fetcher.get(link.href, accept=ACCEPT_JSONLD)
        except FetchError as exc:
            at = f" (at {exc.url})" if exc.url != link.href else ""
            findings.append(linked_failure(link, f"could not be fetched{at}: {exc.message}"))
            continue
        path.extend([*doc.redirects, doc.final_url])
        if not 200 <= doc.status < 300:
            at = f" (at {doc.final_url})" if doc.final_url != link.href else ""
            findings.append(linked_failure(link, f"answered HTTP {doc.status}{at}"))
            continue
        linked = _read_datasets(doc, limits)
        if not linked.datasets:
            findings.extend(linked.findings)
            continue
        used = LINKED_JSONLD.at(
            fetched.final_url,
            f"The page embeds no schema.org Dataset; the adapter used the JSON-LD "
            f"document {doc.final_url} that the page links to. Harvesters that read "
            "only the page see nothing: embed the JSON-LD as well.",
        )
        kept = [f for f in findings if f.code not in _MOOT]
        # say where they are: not in the page
        datasets = [_in_document(found, doc.final_url) for found in linked.datasets]
        return _Read(datasets, [*kept, *linked.findings, used], path)
    return _Read([], findings, path)


def linked_failure(link: Link, why: str) -> Finding:
    """extract/linked-jsonld-unreachable about `link`: its `where` names the relation and
    target, as the signposting findings do, so the report shows it on the link's row."""
    return LINKED_JSONLD_UNREACHABLE.at(
        link.href,
        f"The JSON-LD document {link.href} that the page links to (rel={link.rel}) {why}; "
        "the Dataset it may hold was not read.",
        f"rel={link.rel} {link.href}",
    )


def _in_document(found: NormalizedDataset, url: str) -> NormalizedDataset:
    block = "" if found.block_index == 1 else f" block {found.block_index}"
    return replace(found, where=f"document {url}{block} {found.path}")


_JSONLD_TYPES = ("application/ld+json", "application/json")


def _jsonld_links(links: Sequence[Link], landing: Sequence[str]) -> list[Link]:
    """describedby/alternate links of the landing page typed as JSON-LD, one per target."""
    pages = set(landing)
    out: dict[str, Link] = {}
    for link in links:
        kind = (link.type or "").split(";")[0].strip().lower()
        if (
            link.rel in ("describedby", "alternate")
            and kind in _JSONLD_TYPES
            and link.anchor in pages
            and link.href not in pages
        ):
            out.setdefault(link.href, link)
    return list(out.values())


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


# a page read whole may still carry these extraction findings; any other fetch/,
# extract/ or pipeline/ finding, or unreadable JSON-LD, means a Dataset may hide
# in what could not be read, so the page's series are all kept
_READ_WHOLE_EXTRACT = frozenset(
    t.code
    for t in (page_findings.NO_JSONLD, page_findings.REPAIRED_JSON, LINKED_JSONLD,
              page_findings.NON_JSONLD_MARKUP)
)  # fmt: skip
_UNREADABLE_JSONLD = frozenset(
    t.code
    for t in (
        normalize_stage.INVALID_JSONLD,
        normalize_stage.REMOTE_CONTEXT,
        normalize_stage.EMBEDDING_TOO_LARGE,
    )
)
_NOT_READ_WHOLE = frozenset({Stage.FETCH, Stage.ROBOTS, Stage.PIPELINE})
# rendering that did not finish (or lost a request): its scripts may have had more to write
_RENDERED_PART = frozenset(
    t.code for t in (render_findings.RENDER_FAILED, render_findings.BUDGET_SPENT,
                     render_findings.REQUEST_FAILED)
)  # fmt: skip


def read_whole(report: DatasetReport) -> bool:
    """Whether every JSON-LD of the page was read, so no Dataset hides in what was not
    (the sync archives a series only a page read whole no longer lists)."""
    for f in report.all_findings():
        if f.stage in _NOT_READ_WHOLE or f.code in _UNREADABLE_JSONLD or f.code in _RENDERED_PART:
            return False
        if f.stage == Stage.EXTRACT and f.code not in _READ_WHOLE_EXTRACT:
            return False
    return True


def fetch_page(
    report: DatasetReport,
    fetcher: Fetcher,
    url: str,
    validators: tuple[str | None, str | None],
    prefetched: Fetched | FetchError | None,
) -> Fetched | None:
    """The landing page's response, or None with the reason in report.findings."""
    etag, last_modified = validators
    fetched = prefetched if prefetched is not None else get_page(fetcher, url, etag, last_modified)
    if isinstance(fetched, FetchError):
        report.findings.append(fetch_failure(fetched, "The landing page", url))
        report.path.append(url)
        report.status = fetched.status  # a body too large was still answered
        return None
    report.final_url = fetched.final_url
    report.status = fetched.status
    report.fetched = fetched
    report.path.extend([*fetched.redirects, fetched.final_url])
    if fetched.status == 304 and (etag or last_modified):
        report.not_modified = True
        return None
    if fetched.status == 304:  # to a request that asked nothing: not a landing page
        report.findings.append(
            fetch_findings.HTTP_STATUS.at(
                fetched.final_url,
                f"The landing page {fetched.final_url} answered HTTP 304 Not Modified to a "
                "request that was not conditional (no If-None-Match or If-Modified-Since), "
                "so there is no page to read; a server should answer 304 only to a "
                "conditional request (RFC 9110, 15.4.5).",
            )
        )
        return None
    problem = status_finding(fetched, "The landing page")
    if problem is not None:
        report.findings.append(problem)
        return None
    return fetched


def get_page(
    fetcher: Fetcher, url: str, etag: str | None = None, last_modified: str | None = None
) -> Fetched | FetchError:
    """The landing page's GET as `check_landing_page` makes it, or how it failed: a page
    fetched in one process and checked in another (`prefetched`)."""
    try:
        return fetcher.get(url, accept=ACCEPT_HTML, etag=etag, last_modified=last_modified)
    except FetchError as exc:
        return exc


def fetch_failure(exc: FetchError, what: str, url: str) -> Finding:
    """A FetchError fetching `url` as the finding its code names; the message says where."""
    kind = fetch_findings.BY_CODE.get(exc.code)
    severity = kind.severity if kind is not None else Severity.ERROR
    at = f" (at {exc.url})" if exc.url != url else ""
    return Finding(exc.code, severity, f"{what} {url} could not be fetched{at}: {exc.message}", url)


def status_finding(fetched: Fetched, what: str) -> Finding | None:
    """None for 2xx, `fetch/gone` for 404/410, `fetch/http-error` for the rest."""
    status, where = fetched.status, fetched.final_url
    if 200 <= status < 300:
        return None
    if status in (404, 410):
        return fetch_findings.GONE.at(
            where, f"{what} {where} answered HTTP {status}: it is gone (or never existed)."
        )
    return fetch_findings.HTTP_STATUS.at(where, f"{what} {where} answered HTTP {status}.")
