"""Any URL of a scholarly object -> its landing page (the COAR Notify web-agent path).

A repository manager may paste a DOI, a download URL or a metadata URL rather
than the landing page. FAIR Signposting gives the way back: a content
resource links to its landing page with `collection`, a metadata resource
with `describes`. HEAD first (the links are in the headers); GET and HTML
`<link>` only for HTML. A DOI (`doi:10.x/y`, `https://doi.org/...`, a bare
`10.x/y`) is turned into its resolver URL first. Each step is recorded so the
report can say which path it took.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adapter.doi import doi_url, normalize_doi
from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity
from adapter.http import findings as fetch
from adapter.http.fetcher import ACCEPT_HTML, Fetcher
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import Fetched, Link
from adapter.signposting.htmllinks import looks_like_html, parse_html_links
from adapter.signposting.linkheader import parse_link_fields
from adapter.signposting.links import anchored_at, url_key

NO_WAY_BACK = FindingType(
    "signposting/resolve-no-way-back",
    Severity.WARNING,
    "The URL given is not an HTML landing page and carries no 'collection' or 'describes' "
    "link back to one; it was checked as given.",
)
LOOP = FindingType(
    "signposting/resolve-loop",
    Severity.WARNING,
    "Following 'collection'/'describes' links from the URL given leads in a circle or too "
    "far; the last page reached was checked.",
)
FAILED = FindingType(
    "signposting/resolve-failed",
    Severity.WARNING,
    "A URL on the way to the landing page could not be fetched; the last one reached was checked.",
)
REACHED = FindingType(
    "signposting/resolve-path",
    Severity.INFO,
    "The URL given was not the landing page; the adapter followed the signposting path to it.",
)

_BACK_RELS = ("collection", "describes")
_LANDING_RELS = frozenset({"cite-as", "describedby", "item"})
MAX_HOPS = 5  # collection/describes steps; redirects within a step follow limits.max_redirects


@dataclass(slots=True)
class Resolution:
    landing_url: str
    path: list[str] = field(default_factory=list)  # every URL visited, in order
    steps: list[str] = field(default_factory=list)  # the same path in words, for the report
    findings: list[Finding] = field(default_factory=list)
    fetched: Fetched | None = None  # the landing page's GET, when one was made
    error: FetchError | None = None  # why the landing page's own fetch failed, when it did
    failed: bool = False  # the last step failed: `landing_url` is where it stopped


# fetch failures a second request to the same URL would only repeat (and wait for again)
_FINAL_FAILURES = frozenset(
    t.code for t in (fetch.TIMEOUT, fetch.CONNECTION, fetch.UNSAFE_URL, fetch.HOST_PAUSED)
)


def resolver_url(text: str) -> str | None:
    """`https://doi.org/10.x/y` for a DOI in any spelling that is not already another URL."""
    value = text.strip()
    lowered = value.lower()
    if lowered.startswith(("http://", "https://")) and "doi.org/" not in lowered:
        return None
    doi = normalize_doi(value)
    return doi_url(doi) if doi else None


def find_landing_page(url: str, fetcher: Fetcher, limits: Limits = DEFAULT_LIMITS) -> Resolution:
    """Follow the web-agent path from `url` to the landing page it belongs to."""
    start = resolver_url(url) or url
    out = Resolution(landing_url=start)
    if start != url:
        out.steps.append(f"{url} is a DOI: resolver {start}")
    seen: set[str] = set()
    current = start
    for _ in range(MAX_HOPS + 1):
        if url_key(current) in seen:
            out.findings.append(LOOP.at(url, f"{current} was reached twice"))
            break
        seen.add(url_key(current))
        step = _step(current, fetcher, limits, out)
        if step is None:
            break
        current = step
    else:
        out.findings.append(LOOP.at(url, f"more than {MAX_HOPS} collection/describes steps"))
    if url_key(out.landing_url) != url_key(url) and not out.failed:
        out.findings.append(
            REACHED.at(
                url,
                f"{url} led to the landing page {out.landing_url}: " + "; ".join(out.steps),
                "path",
            )
        )
    return out


def _step(current: str, fetcher: Fetcher, limits: Limits, out: Resolution) -> str | None:
    """Visit `current`; the next URL to visit, or None when the landing page is found."""
    try:
        got = fetcher.head(current)
        method = "HEAD"
        if got.status in (403, 405, 501):
            got = fetcher.get(current, accept=ACCEPT_HTML, max_bytes=limits.max_page_bytes)
            method = "GET"
    except FetchError as exc:
        out.findings.append(FAILED.at(current, f"{current}: {exc.message}"))
        out.failed = True
        if exc.code in _FINAL_FAILURES:  # a GET would fail the same way: keep the answer
            out.landing_url, out.error = current, exc
        return None
    moved = f" -> {got.final_url}" if got.final_url != current else ""
    out.steps.append(f"{method} {current}{moved} ({got.status} {got.content_type or '-'})")
    for visited in (current, *got.redirects, got.final_url):
        if not out.path or out.path[-1] != visited:
            out.path.append(visited)
    out.landing_url = got.final_url
    if got.status >= 400:
        moved = f" (at {got.final_url})" if got.final_url != current else ""
        out.findings.append(FAILED.at(current, f"{current} answered HTTP {got.status}{moved}"))
        out.failed = True
        return None
    links = _own_links(got, got.link_headers, limits)
    back = _back_link(links)
    if back is not None:
        out.steps.append(f"rel={back.rel} -> {back.href}")
        return back.href
    described = [x.href for x in links if x.rel == "describedby"]
    if described:
        out.steps.append(f"rel=describedby -> {', '.join(described[:3])} (its metadata)")
    if any(x.rel in _LANDING_RELS for x in links) or not looks_like_html(got.content_type, b""):
        if not looks_like_html(got.content_type, b"") and not _is_jsonld(got):
            out.findings.append(
                NO_WAY_BACK.at(
                    current,
                    f"{got.final_url} ({got.content_type or 'no type'}) "
                    "has no collection or describes link",
                )
            )
        return None
    return _from_html(got, fetcher, limits, out)


def _from_html(got: Fetched, fetcher: Fetcher, limits: Limits, out: Resolution) -> str | None:
    """An HTML page without header signposting: its <link> elements decide."""
    if not got.body:
        try:
            got = fetcher.get(got.final_url, accept=ACCEPT_HTML, max_bytes=limits.max_page_bytes)
        except FetchError as exc:
            out.findings.append(FAILED.at(got.final_url, f"{got.final_url}: {exc.message}"))
            out.failed = True
            if exc.code in _FINAL_FAILURES:
                out.error = exc
            return None
        out.steps.append(f"GET {got.final_url} (HTML <link>)")
    html = parse_html_links(
        got.body,
        got.final_url,
        content_type=got.content_type,
        charset=got.charset,
        max_links=limits.max_links,
    ).links
    back = _back_link(html)
    if back is not None:
        out.steps.append(f"<link rel={back.rel}> -> {back.href}")
        return back.href
    out.fetched = got
    return None


def _own_links(got: Fetched, fields: tuple[str, ...], limits: Limits) -> list[Link]:
    parsed = parse_link_fields(fields, got.final_url, max_links=limits.max_links)
    return anchored_at(parsed.links, [got.url, got.final_url])


def _back_link(links: list[Link]) -> Link | None:
    for rel in _BACK_RELS:
        for link in links:
            if link.rel == rel:
                return link
    return None


def _is_jsonld(got: Fetched) -> bool:
    return got.content_type in ("application/ld+json", "application/json")
