"""Signposting stage of the pipeline.

`collect` reads every typed link for a landing page (HTTP Link headers, HTML
<link>, the link sets they point to, Signmap links from the sitemap) and returns
them, one `Link` per source (`adapter.signposting.links.group` folds them per
statement), with the link-level findings. `crosscheck` holds them against each
Dataset once the Datasets are known and, with `follow`, visits the targets; it
returns its findings, the page's and the checked Dataset's apart. Both return
values: `adapter.pipeline` puts them into the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity
from adapter.http.fetcher import Fetcher
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import DatasetReport, DatasetResult, Fetched, Link
from adapter.page.tree import PageTree
from adapter.signposting.crosscheck import crosscheck_dataset, primary_dataset
from adapter.signposting.datasetlinks import dataset_links
from adapter.signposting.follow import FOLLOW_CODES, follow_targets
from adapter.signposting.htmllinks import looks_like_html, parse_html_links
from adapter.signposting.linkheader import TOO_MANY, ParsedLinks, normalize_rel, parse_link_fields
from adapter.signposting.links import anchored_at, dedupe
from adapter.signposting.linkset import (
    ACCEPT_LINKSET,
    UNREACHABLE,
    check_anchors,
    check_linkset_link,
    parse_linkset,
)
from adapter.signposting.proposal import proposal_finding
from adapter.signposting.sources import check_sources

LINKSET_ELSEWHERE = FindingType(
    "signposting/linkset-not-fetched",
    Severity.INFO,
    "The landing page points to a link set on another host; check-dataset fetches it only "
    "with --follow, so the links in it were not read.",
)


def _origin(url: str) -> str:
    """scheme://host:port, lower-cased: a link set elsewhere is one on another origin."""
    try:
        parts = urlsplit(url)
        return f"{parts.scheme.lower()}://{parts.netloc.lower()}"
    except ValueError:
        return url


@dataclass(frozen=True, slots=True)
class Collected:
    """The landing page's typed links, one per source, and what was wrong with them."""

    links: list[Link]
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class CrossChecked:
    """The cross-check's findings: about the page, and about the Dataset it checked."""

    findings: list[Finding]  # page-level
    dataset: DatasetResult | None  # the Dataset the links were held against
    dataset_findings: list[Finding]  # its findings, to add to its own


def landing_pages(url: str, fetched: Fetched | None, final_url: str | None = None) -> list[str]:
    """Every URL that names the landing page: as given, each redirect, the final one."""
    urls = [url]
    if fetched is not None:
        urls += [*fetched.redirects, fetched.final_url]
    elif final_url:
        urls.append(final_url)
    return list(dict.fromkeys(u for u in urls if u))


def landing_urls(report: DatasetReport) -> list[str]:
    """`landing_pages` of a report's page."""
    return landing_pages(report.url, report.fetched, report.final_url)


def collect(
    url: str,
    fetched: Fetched,
    fetcher: Fetcher,
    sitemap_links: Sequence[Link] = (),
    *,
    limits: Limits = DEFAULT_LIMITS,
    tree: PageTree | None = None,
    elsewhere: bool = True,
) -> Collected:
    """The typed links of the page `url` answered with `fetched`, and link-level findings.

    `tree`: the page's HTML parse, shared with the extract stage (`adapter.page.tree`).
    `elsewhere`: also fetch link sets on other hosts than the page's (check-dataset
    asks only with --follow: it visits no other host unasked).
    """
    page = fetched.final_url
    pages = landing_pages(url, fetched)
    fields = fetched.link_headers or (
        (fetched.headers["link"],) if fetched.headers.get("link") else ()
    )
    found = parse_link_fields(fields, page, max_links=limits.max_links)
    if looks_like_html(fetched.content_type, fetched.body):
        html = parse_html_links(
            fetched.body,
            page,
            content_type=fetched.content_type,
            charset=fetched.charset,
            max_links=max(0, limits.max_links - len(found.links)),
            tree=tree,
        )
        _merge(found, html)
    found.links.extend(_normalized(link) for link in sitemap_links)
    said = anchored_at([x for x in found.links if x.rel == "linkset"], pages)
    for problems in dict.fromkeys(tuple(check_linkset_link(link)) for link in said):
        found.findings.extend(problems)
    _read_linksets(found, fetcher, pages, limits, elsewhere)
    links = dedupe(found.links)
    if len(links) > limits.max_links:
        links = links[: limits.max_links]
        found.findings.append(
            TOO_MANY.at(page, f"more than {limits.max_links} links from all sources together")
        )
    found.findings.extend(check_sources(anchored_at(links, pages), page))
    return Collected(links, found.findings)


def _normalized(link: Link) -> Link:
    """Signmap links as the other readers make them: registered rels and types lower-cased."""
    type_ = link.type.strip().lower() or None if link.type else None
    return replace(link, rel=normalize_rel(link.rel), type=type_)


def _merge(into: ParsedLinks, other: ParsedLinks) -> None:
    into.links.extend(other.links)
    into.findings.extend(other.findings)
    into.truncated = into.truncated or other.truncated


def _read_linksets(
    found: ParsedLinks, fetcher: Fetcher, pages: list[str], limits: Limits, elsewhere: bool
) -> None:
    """Fetch each link set the landing page points to (at most `limits.max_follow`)."""
    targets = list(
        dict.fromkeys(x.href for x in anchored_at(found.links, pages) if x.rel == "linkset")
    )
    if not elsewhere:
        here = {_origin(p) for p in pages}
        away = [href for href in targets if _origin(href) not in here]
        for href in away:
            message = (
                f"The link set {href} is on another host ({_origin(href)}) than the landing "
                "page; it was not fetched (check-dataset visits other hosts only with --follow)."
            )
            found.findings.append(LINKSET_ELSEWHERE.at(pages[-1], message, "rel=linkset"))
        targets = [href for href in targets if href not in away]
    for href in targets[: limits.max_follow]:
        room = limits.max_links - len(found.links)
        if room <= 0:
            return
        where = f"rel=linkset {href}"  # about the link: the landing page itself answered
        try:
            got = fetcher.get(href, accept=ACCEPT_LINKSET, max_bytes=limits.max_page_bytes)
        except FetchError as exc:
            found.findings.append(UNREACHABLE.at(href, f"link set {href}: {exc.message}", where))
            continue
        if got.status != 200:
            message = f"link set {href} answered HTTP {got.status}"
            found.findings.append(UNREACHABLE.at(href, message, where))
            continue
        parsed = parse_linkset(got.body, got.content_type, got.final_url, max_links=room)
        parsed.findings.extend(check_anchors(parsed.links, got.final_url, pages))
        _merge(found, parsed)


def crosscheck(
    datasets: Sequence[DatasetResult],
    links: Sequence[Link],
    pages: Sequence[str],
    fetcher: Fetcher,
    *,
    follow: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    unreachable: frozenset[str] = frozenset(),
) -> CrossChecked:
    """The findings where the signposts `links` and the page's Datasets disagree.

    A page's links describe one object, so they are held against one Dataset:
    the one their cite-as names, else the first (an info finding says which
    when there are several). `pages`: the landing page's URLs (`landing_pages`);
    `unreachable`: targets already fetched in vain, which --follow does not ask again.
    """
    dataset, note = primary_dataset(datasets, links, pages)
    # read once for the checks and the proposal (both want it whenever there is a Dataset)
    facts = dataset_links(dataset, pages[-1]) if dataset is not None else None
    page_findings, dataset_findings = crosscheck_dataset(dataset, links, pages, facts)
    if note is not None:
        page_findings.append(note)
    if follow:
        visited = follow_targets(links, pages, fetcher, limits=limits, unreachable=unreachable)
        page_findings.extend(visited)
    if dataset is not None and _needs_fixing([*page_findings, *dataset_findings]):
        own = anchored_at(links, pages)  # kept as published: the proposal only adds
        page_findings.append(proposal_finding(dataset, pages[-1], facts, own))
    return CrossChecked(page_findings, dataset, dataset_findings)


def _needs_fixing(findings: list[Finding]) -> bool:
    """Warnings about the page's own links (not about the targets --follow visited)."""
    return any(f.severity is not Severity.INFO and f.code not in FOLLOW_CODES for f in findings)
