"""`--follow`: visit the signposting targets and check that they answer as announced.

Each `item` should answer with its declared type and link back to the landing
page with `collection`; each `describedby` with its type and `describes`; the
`cite-as` PID should resolve (through redirects) to the landing page. HEAD
first; GET only when HEAD is refused or the back-link can only be in HTML.
At most `limits.max_follow` targets, each with the fetcher's own caps.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity
from adapter.http.fetcher import ACCEPT_ANY, Fetcher
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import Fetched, Link
from adapter.signposting.htmllinks import looks_like_html, parse_html_links
from adapter.signposting.linkheader import parse_link_fields
from adapter.signposting.links import anchored_at, media_type, url_key
from adapter.signposting.resolve import resolver_url

UNREACHABLE = FindingType(
    "signposting/follow-unreachable",
    Severity.WARNING,
    "A signposting target could not be fetched (network error or HTTP error status).",
)
TYPE_MISMATCH = FindingType(
    "signposting/follow-type-mismatch",
    Severity.WARNING,
    "A signposting target answers with a different Content-Type than its link announces.",
)
NO_COLLECTION = FindingType(
    "signposting/follow-no-collection",
    Severity.WARNING,
    "A content resource ('item') does not link back to the landing page with 'collection' "
    "(in its Link header or the link set).",
)
NO_DESCRIBES = FindingType(
    "signposting/follow-no-describes",
    Severity.WARNING,
    "A metadata resource ('describedby') does not link back to the landing page with "
    "'describes' (in its Link header or the link set).",
)
CITE_AS_ELSEWHERE = FindingType(
    "signposting/follow-cite-as-elsewhere",
    Severity.WARNING,
    "The 'cite-as' identifier does not resolve to this landing page; FAIR-SP requires that "
    "dereferencing it leads to the page that provided it.",
)
LIMIT = FindingType(
    "signposting/follow-limit",
    Severity.INFO,
    "The page has more signposting targets than --follow visits (limits.max_follow); the "
    "rest were not visited.",
)
# what --follow says about the targets it visited (not about the page's own links)
FOLLOW_CODES = frozenset(
    t.code
    for t in (UNREACHABLE, TYPE_MISMATCH, NO_COLLECTION, NO_DESCRIBES, CITE_AS_ELSEWHERE, LIMIT)
)

_BACK = {"item": ("collection", NO_COLLECTION), "describedby": ("describes", NO_DESCRIBES)}
_SNIFF_BYTES = 65_536  # enough of a refused-HEAD body to read its headers and <head>


def follow_targets(
    links: Sequence[Link],
    pages: Sequence[str],
    fetcher: Fetcher,
    *,
    limits: Limits = DEFAULT_LIMITS,
    unreachable: frozenset[str] = frozenset(),
) -> list[Finding]:
    """What the targets' answers say; `unreachable`: targets already fetched in vain (the
    linked JSON-LD document), said once under their link, not asked again."""
    landing = anchored_at(links, pages)
    targets: list[Link] = []
    seen: set[tuple[str, str]] = set()
    for rel in ("cite-as", "describedby", "item"):
        for link in landing:
            key = (rel, url_key(link.href))
            if link.rel == rel and key not in seen and link.href not in unreachable:
                seen.add(key)
                targets.append(link)
    out: list[Finding] = []
    if len(targets) > limits.max_follow:
        out.append(
            LIMIT.at(
                pages[-1],
                f"{len(targets)} targets; visited the first {limits.max_follow}",
                "signposting",
            )
        )
    for link in targets[: limits.max_follow]:
        out.extend(_visit(link, links, pages, fetcher, limits))
    return out


def _visit(
    link: Link, links: Sequence[Link], pages: Sequence[str], fetcher: Fetcher, limits: Limits
) -> list[Finding]:
    where = f"rel={link.rel} {link.href}"
    href = link.href
    if link.rel == "cite-as" and not href.startswith(("http://", "https://")):
        href = resolver_url(href) or href  # doi:10.x/y, info:doi/... -> https://doi.org/
    try:
        got = fetcher.head(href)
        if got.status in (403, 405, 501) or (got.status < 400 and not got.content_type):
            got = fetcher.get(href, accept=ACCEPT_ANY, max_bytes=_SNIFF_BYTES, truncate=True)
    except FetchError as exc:
        return [UNREACHABLE.at(link.href, f"{where}: {exc.message}", where)]
    if got.status >= 400:
        return [UNREACHABLE.at(link.href, f"{where} answered HTTP {got.status}", where)]
    if link.rel == "cite-as":
        if url_key(got.final_url) in {url_key(p) for p in pages}:
            return []
        return [
            CITE_AS_ELSEWHERE.at(
                link.href,
                f"cite-as {link.href} leads to {got.final_url}, not to {pages[-1]}",
                where,
            )
        ]
    out = []
    said, served = media_type(link.type), got.content_type
    if said and served and said != served:
        out.append(
            TYPE_MISMATCH.at(
                link.href, f"{where} announces {said}, the server answers {served}", where
            )
        )
    back_rel, missing = _BACK[link.rel]
    try:
        back = _links_back(link, got, back_rel, links, pages, fetcher, limits)
    except FetchError as exc:  # its HTML could not be read: unknown, not "no back-link"
        return [*out, UNREACHABLE.at(link.href, f"{where}: {exc.message}", where)]
    if not back:
        out.append(
            missing.at(link.href, f"{link.href} has no rel={back_rel} link to {pages[-1]}", where)
        )
    return out


def _links_back(
    link: Link,
    got: Fetched,
    back_rel: str,
    links: Sequence[Link],
    pages: Sequence[str],
    fetcher: Fetcher,
    limits: Limits,
) -> bool:
    """Whether the target names the landing page with `back_rel` (headers, link set, HTML).

    Raises FetchError when its HTML had to be fetched and could not be."""
    home = {url_key(p) for p in pages}
    contexts = [link.href, got.final_url]
    said = anchored_at(links, contexts)
    said += parse_link_fields(got.link_headers, got.final_url, max_links=limits.max_links).links
    if any(x.rel == back_rel and url_key(x.href) in home for x in said):
        return True
    if not looks_like_html(got.content_type, got.body):
        return False
    if not got.body:  # a FetchError here is the caller's to report
        got = fetcher.get(link.href, max_bytes=limits.max_page_bytes, truncate=True)
    html = parse_html_links(
        got.body,
        got.final_url,
        content_type=got.content_type,
        charset=got.charset,
        max_links=limits.max_links,
    ).links
    return any(x.rel == back_rel and url_key(x.href) in home for x in html)
