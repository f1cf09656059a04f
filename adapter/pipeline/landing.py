"""The landing page's response into the report: fetched, or why there is nothing to read
(a fetch failure, a 304, an HTTP error, a sitemap given as a page).
"""

from __future__ import annotations

import zlib

from adapter.discovery.sitemap_body import sniff
from adapter.errors import FetchError
from adapter.findings import Finding, Severity
from adapter.http import findings as fetch_findings
from adapter.http.decompress import GZIP_MAGIC
from adapter.http.fetcher import ACCEPT_HTML, Fetcher
from adapter.models import DatasetReport, Fetched
from adapter.page.findings import SITEMAP_GIVEN

_SNIFF = 64 * 1024  # enough of the body to find a root element after any prolog


def sitemap_finding(fetched: Fetched) -> Finding | None:
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
