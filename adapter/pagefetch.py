"""The landing page's GET for `adapter.pipeline`, and a failed fetch or status as a finding.

Split from the pipeline (which re-exports `fetch_failure` and `status_finding`)
so each module stays short. A fetch failure, a 304 or an HTTP error ends the
page's check with the reason in the report; everything else goes on to the
readers.
"""

from __future__ import annotations

from adapter.errors import FetchError
from adapter.findings import Finding, FindingType, Severity
from adapter.http import fetcher as fetch_stage
from adapter.http.fetcher import ACCEPT_HTML, Fetcher
from adapter.models import DatasetReport, Fetched


def fetch_page(
    report: DatasetReport,
    fetcher: Fetcher,
    url: str,
    validators: tuple[str | None, str | None],
    prefetched: Fetched | FetchError | None,
) -> Fetched | None:
    """The landing page's response, or None with the reason in report.findings."""
    etag, last_modified = validators
    try:
        if isinstance(prefetched, FetchError):
            raise prefetched
        fetched = prefetched
        if fetched is None:
            fetched = fetcher.get(url, accept=ACCEPT_HTML, etag=etag, last_modified=last_modified)
    except FetchError as exc:
        report.findings.append(fetch_failure(exc, "The landing page", url))
        report.path.append(url)
        return None
    report.final_url = fetched.final_url
    report.status = fetched.status
    report.fetched = fetched
    report.path.extend([*fetched.redirects, fetched.final_url])
    if fetched.status == 304:
        report.not_modified = True
        return None
    problem = status_finding(fetched, "The landing page")
    if problem is not None:
        report.findings.append(problem)
        return None
    return fetched


def fetch_failure(exc: FetchError, what: str, url: str) -> Finding:
    """A FetchError fetching `url` as the finding its code names; the message says where."""
    kind = _FETCH_TYPES.get(exc.code)
    severity = kind.severity if kind is not None else Severity.ERROR
    at = f" (at {exc.url})" if exc.url != url else ""
    return Finding(exc.code, severity, f"{what} {url} could not be fetched{at}: {exc.message}", url)


def status_finding(fetched: Fetched, what: str) -> Finding | None:
    """None for 2xx, `fetch/gone` for 404/410, `fetch/http-error` for the rest."""
    status, where = fetched.status, fetched.final_url
    if 200 <= status < 300:
        return None
    if status in (404, 410):
        return fetch_stage.GONE.at(
            where, f"{what} {where} answered HTTP {status}: it is gone (or never existed)."
        )
    return fetch_stage.HTTP_STATUS.at(where, f"{what} {where} answered HTTP {status}.")


_FETCH_TYPES: dict[str, FindingType] = {
    v.code: v for v in vars(fetch_stage).values() if isinstance(v, FindingType)
}
