"""The finding codes of the fetch stage, shared by the fetcher and its body reader."""

from __future__ import annotations

from adapter.findings import FindingType, Severity

TIMEOUT = FindingType(
    "fetch/timeout",
    Severity.ERROR,
    "The server did not answer completely within the time limit "
    "(connect_timeout, read_timeout or total_timeout).",
)
CONNECTION = FindingType(
    "fetch/connection-failed",
    Severity.ERROR,
    "The server could not be reached, or the connection broke (DNS, refused or reset "
    "connection, TLS, a body shorter than its Content-Length).",
)
TOO_LARGE = FindingType(
    "fetch/too-large",
    Severity.ERROR,
    "The response body, before or after decompression, is larger than the size limit.",
)
HEADERS_TOO_LARGE = FindingType(
    "fetch/headers-too-large",
    Severity.ERROR,
    "The response headers are too large to read (a header line over 65,536 bytes, "
    "or more than 100 header fields).",
)
REDIRECT_LOOP = FindingType(
    "fetch/redirect-loop", Severity.ERROR, "Redirects lead back to a URL already visited."
)
TOO_MANY_REDIRECTS = FindingType(
    "fetch/too-many-redirects",
    Severity.ERROR,
    "More redirects than the limit (max_redirects) allows.",
)
UNSAFE_URL = FindingType(
    "fetch/unsafe-url",
    Severity.ERROR,
    "The URL is refused: not http(s), too long, carrying credentials, or it points at a "
    "loopback, private, link-local or cloud-metadata address that the operator did not name.",
)
BAD_ENCODING = FindingType(
    "fetch/bad-content-encoding",
    Severity.ERROR,
    "The compressed response body is broken, truncated or in an encoding we did not ask for.",
)
HTTP_STATUS = FindingType(
    "fetch/http-error", Severity.ERROR, "The server answered with an HTTP error status."
)
GONE = FindingType("fetch/gone", Severity.ERROR, "The page is gone (HTTP 404 or 410).")
HOST_PAUSED = FindingType(
    "fetch/host-paused",
    Severity.ERROR,
    "The host failed repeatedly or asked to wait too long; it is paused for the rest of the run.",
)
RATE_LIMITED = FindingType(
    "fetch/rate-limited",
    Severity.ERROR,
    "The server kept answering 429 or 503 (slow down) for longer than the retries or the "
    "time limit allow.",
)
DISALLOWED = FindingType(
    "robots/disallowed", Severity.ERROR, "robots.txt does not allow this adapter to fetch the URL."
)

# code -> type, for readers that turn a FetchError's code back into its finding
BY_CODE: dict[str, FindingType] = {
    v.code: v for v in list(globals().values()) if isinstance(v, FindingType)
}
