"""What a response gives: the framed Datasets of an HTML page or a JSON-LD document, and,
when the page embeds none, those of the JSON-LD document it links to (describedby or
alternate). Values only: `compose` puts them into the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity, has_errors
from adapter.http.fetcher import ACCEPT_JSONLD, Fetcher
from adapter.jsonld import normalize as normalize_stage
from adapter.jsonld.normalize import NormalizedDataset
from adapter.limits import Limits
from adapter.models import Fetched, Link
from adapter.page import extract as extract_stage
from adapter.page import findings as page_findings
from adapter.page.extract import Skipped
from adapter.page.tree import PageTree

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

# page-level findings that a linked JSON-LD document makes moot
_MOOT = frozenset(
    t.code for t in (page_findings.NO_JSONLD, page_findings.JS_RENDERED, normalize_stage.NO_DATASET)
)


@dataclass(frozen=True, slots=True)
class Read:
    """What reading the page (and the JSON-LD it links to) gave."""

    datasets: list[NormalizedDataset]
    findings: list[Finding]  # page-level, in the order they were found
    path: list[str] = field(default_factory=list)  # the linked documents' URLs, redirects first


def read_datasets(fetched: Fetched, limits: Limits, tree: PageTree | None = None) -> Read:
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
            return Read([], [*extraction.findings, unreadable])
        return Read([], extraction.findings)
    datasets, findings = normalize_stage.normalize(
        extraction.blocks, base_url=extraction.base_url or url, limits=limits
    )
    if not datasets and _blocks_left_out(extraction.findings):
        findings = [_too_many_blocks(f, url, limits) for f in findings]
    return Read(datasets, [*extraction.findings, *findings])


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


def linked_datasets(
    embedded: Read, fetched: Fetched, links: list[Link], fetcher: Fetcher, limits: Limits
) -> Read:
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
        linked = read_datasets(doc, limits)
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
        return Read(datasets, [*kept, *linked.findings, used], path)
    return Read([], findings, path)


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


def jsonld_links(links: Sequence[Link], landing: Sequence[str]) -> list[Link]:
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
