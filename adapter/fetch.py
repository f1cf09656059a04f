"""The only network code: polite, capped, safe HTTP fetches.

Redirects are followed by hand so that every hop is checked (scheme, address,
robots gate, loop) and counted; bodies are streamed and decoded by us so the
byte cap holds after decompression; a total deadline bounds a trickling
server. Failures that leave nothing to inspect raise `FetchError` with a
finding code; everything else is a `Fetched` for the caller to judge.
"""

from __future__ import annotations

import ipaddress
import random
import socket
import threading
import time
from collections.abc import Callable, Iterable
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

import requests
import urllib3

from adapter import USER_AGENT
from adapter.decompress import CappedDecoder, DecompressionFailed, DecompressionLimit
from adapter.errors import FetchError
from adapter.findings import FindingType, Severity
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import Fetched
from adapter.politeness import NoPacer, Pacer

ACCEPT_HTML = "text/html;q=1.0, application/xhtml+xml;q=0.9, application/ld+json;q=0.8, */*;q=0.1"
ACCEPT_JSONLD = "application/ld+json, application/json;q=0.9, */*;q=0.1"
ACCEPT_XML = "application/xml, text/xml;q=0.9, application/gzip;q=0.8, text/plain;q=0.5, */*;q=0.1"
ACCEPT_ANY = "*/*"

TIMEOUT = FindingType(
    "fetch/timeout", Severity.ERROR, "The server did not answer within the time limit."
)
CONNECTION = FindingType(
    "fetch/connection-failed",
    Severity.ERROR,
    "The server could not be reached (DNS, refused or reset connection, TLS).",
)
TOO_LARGE = FindingType(
    "fetch/too-large", Severity.ERROR, "The response body is larger than the size limit."
)
REDIRECT_LOOP = FindingType(
    "fetch/redirect-loop", Severity.ERROR, "Redirects lead back to a URL already visited."
)
TOO_MANY_REDIRECTS = FindingType(
    "fetch/too-many-redirects", Severity.ERROR, "More redirects than the limit allows."
)
UNSAFE_URL = FindingType(
    "fetch/unsafe-url",
    Severity.ERROR,
    "The URL is refused: not http(s), too long, or it points at a loopback, private, "
    "link-local or cloud-metadata address that the operator did not name.",
)
BAD_ENCODING = FindingType(
    "fetch/bad-content-encoding",
    Severity.ERROR,
    "The compressed response body is broken or truncated.",
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
DISALLOWED = FindingType(
    "robots/disallowed", Severity.ERROR, "robots.txt does not allow this adapter to fetch the URL."
)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# gate(url) -> None when the URL may be fetched, else the reason it may not (robots.txt)
Gate = Callable[[str], str | None]


def origin(url: str) -> str:
    """scheme://host:port, with the default port made explicit."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme.lower()}://{host}:{port}"


def host_key(url: str) -> str:
    """The unit of politeness: host and port."""
    parts = urlsplit(url)
    return f"{(parts.hostname or '').lower()}:{parts.port or ''}"


def _address_is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class AddressPolicy:
    """Which URLs may be fetched: http(s) only; non-public addresses only where trusted.

    The operator's origins (the URL on the command line, a node's entry URLs,
    the hosts a node allows) are trusted; every other URL must resolve to
    public addresses only, checked again after each redirect.
    """

    def __init__(self, trusted_origins: Iterable[str] = (), allow_private: bool = False) -> None:
        self._trusted = {origin(u) for u in trusted_origins}
        self._allow_private = allow_private
        self._cache: dict[str, bool] = {}
        self._lock = threading.Lock()

    def trust(self, url: str) -> None:
        with self._lock:
            self._trusted.add(origin(url))

    def is_trusted(self, url: str) -> bool:
        return origin(url) in self._trusted

    def refusal(self, url: str, max_length: int) -> str | None:
        """None when `url` may be fetched, else why not."""
        if len(url) > max_length:
            return f"URL longer than {max_length} characters"
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https"):
            return f"scheme {parts.scheme or '(none)'!r} is not http or https"
        if not parts.hostname:
            return "URL has no host"
        if self._allow_private or self.is_trusted(url):
            return None
        host = parts.hostname
        with self._lock:
            public = self._cache.get(host)
        if public is None:
            try:
                infos = socket.getaddrinfo(host, parts.port or 80, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError):
                return None  # unresolvable: the connection itself will fail and say so
            public = all(_address_is_public(str(info[4][0])) for info in infos)
            with self._lock:
                self._cache[host] = public
        if not public:
            return f"host {host} resolves to a non-public address"
        return None


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Fetcher:
    """HTTP GET/HEAD with every cap from `Limits`; one `requests.Session` per fetcher."""

    def __init__(
        self,
        limits: Limits = DEFAULT_LIMITS,
        *,
        user_agent: str = USER_AGENT,
        policy: AddressPolicy | None = None,
        pacer: Pacer | None = None,
        gate: Gate | None = None,
        retry_base_delay: float = 1.0,
    ) -> None:
        self.limits = limits
        self.user_agent = user_agent
        self.policy = policy or AddressPolicy()
        self.pacer: Pacer = pacer or NoPacer()
        self.gate = gate
        self.retry_base_delay = retry_base_delay
        self._session = requests.Session()
        self._session.headers.clear()
        self._session.trust_env = False  # no proxies or .netrc from the environment
        self._failures: dict[str, int] = {}
        self._paused: dict[str, str] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public API ---------------------------------------------------------

    def get(
        self,
        url: str,
        *,
        accept: str = ACCEPT_HTML,
        max_bytes: int | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        max_redirects: int | None = None,
        truncate: bool = False,
    ) -> Fetched:
        """GET `url`. Past `max_bytes` the fetch fails, or with `truncate` keeps the head."""
        headers = {"Accept": accept}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        return self._fetch("GET", url, headers, max_bytes, max_redirects, truncate)

    def head(self, url: str, *, accept: str = ACCEPT_ANY) -> Fetched:
        return self._fetch("HEAD", url, {"Accept": accept}, 0, None, False)

    def paused_hosts(self) -> dict[str, str]:
        with self._lock:
            return dict(self._paused)

    # -- redirects, retries -------------------------------------------------

    def _fetch(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        max_bytes: int | None,
        max_redirects: int | None,
        truncate: bool,
    ) -> Fetched:
        limit = self.limits.max_redirects if max_redirects is None else max_redirects
        cap = self.limits.max_page_bytes if max_bytes is None else max_bytes
        start = time.monotonic()
        deadline = start + self.limits.total_timeout
        visited: list[str] = []
        current = url
        while True:
            self._check(current)
            resp = self._send_with_retries(method, current, headers, deadline)
            try:
                if resp.status_code in REDIRECT_STATUSES and "location" in resp.headers:
                    target = urljoin(current, resp.headers["location"])
                    visited.append(current)
                    if target in visited:
                        raise FetchError(
                            REDIRECT_LOOP.code, url, f"redirect loop: {target} visited twice"
                        )
                    if len(visited) > limit:
                        raise FetchError(
                            TOO_MANY_REDIRECTS.code, url, f"more than {limit} redirects"
                        )
                    if resp.status_code == 303:
                        method = "GET" if method != "HEAD" else method
                    current = target
                    continue
                body, truncated = self._read_body(resp, current, cap, deadline, method, truncate)
                return Fetched(
                    url=url,
                    final_url=current,
                    status=resp.status_code,
                    headers={k.lower(): v for k, v in resp.headers.items()},
                    body=body,
                    redirects=tuple(visited),
                    elapsed=time.monotonic() - start,
                    truncated=truncated,
                    link_headers=tuple(resp.raw.headers.getlist("link")),
                )
            finally:
                resp.close()

    def _check(self, url: str) -> None:
        reason = self.policy.refusal(url, self.limits.max_url_length)
        if reason:
            raise FetchError(UNSAFE_URL.code, url, f"refused: {reason}")
        key = host_key(url)
        with self._lock:
            paused = self._paused.get(key)
        if paused:
            raise FetchError(HOST_PAUSED.code, url, f"host {key} is paused: {paused}")
        if self.gate is not None:
            why = self.gate(url)
            if why:
                raise FetchError(DISALLOWED.code, url, why)

    def _send_with_retries(
        self, method: str, url: str, headers: dict[str, str], deadline: float
    ) -> requests.Response:
        key = host_key(url)
        attempt = 0
        while True:
            try:
                resp = self._send(method, url, headers, deadline)
            except FetchError as exc:
                if exc.code != CONNECTION.code or attempt >= self.limits.max_retries:
                    self._note_failure(key, exc.message)
                    raise
                wait = self._backoff(attempt)
            else:
                if resp.status_code not in RETRY_STATUSES:
                    with self._lock:
                        self._failures.pop(key, None)
                    return resp
                if attempt >= self.limits.max_retries:
                    self._note_failure(key, f"HTTP {resp.status_code} after {attempt} retries")
                    return resp
                asked = _retry_after(resp.headers.get("retry-after"))
                if asked is not None and asked > self.limits.max_retry_after:
                    resp.close()
                    self._pause(key, f"Retry-After of {asked:.0f} s passes the limit")
                    raise FetchError(HOST_PAUSED.code, url, f"asked to retry after {asked:.0f} s")
                resp.close()
                wait = asked if asked is not None else self._backoff(attempt)
            if time.monotonic() + wait > deadline:
                raise FetchError(TIMEOUT.code, url, "retries would pass the total time limit")
            time.sleep(wait)
            attempt += 1

    def _backoff(self, attempt: int) -> float:
        base: float = self.retry_base_delay * (2**attempt)
        return base * (0.5 + random.random())  # jitter, not crypto

    def _note_failure(self, key: str, reason: str) -> None:
        with self._lock:
            count = self._failures.get(key, 0) + 1
            self._failures[key] = count
        if count >= self.limits.host_failures_before_pause:
            self._pause(key, f"{count} failures in a row, last: {reason}")

    def _pause(self, key: str, reason: str) -> None:
        with self._lock:
            self._paused.setdefault(key, reason)

    # -- one request --------------------------------------------------------

    def _send(
        self, method: str, url: str, headers: dict[str, str], deadline: float
    ) -> requests.Response:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FetchError(TIMEOUT.code, url, f"took longer than {self.limits.total_timeout} s")
        send_headers = {
            "User-Agent": self.user_agent,
            "Accept-Encoding": "gzip, deflate",
            **headers,
        }
        timeout = (
            min(self.limits.connect_timeout, remaining),
            min(self.limits.read_timeout, remaining),
        )
        try:
            with self.pacer.slot(host_key(url)):
                return self._session.request(
                    method,
                    url,
                    headers=send_headers,
                    timeout=timeout,
                    allow_redirects=False,
                    stream=True,
                )
        except requests.Timeout as exc:
            raise FetchError(TIMEOUT.code, url, f"no answer within {timeout[1]:.0f} s") from exc
        except (requests.ConnectionError, urllib3.exceptions.HTTPError) as exc:
            raise FetchError(CONNECTION.code, url, f"connection failed: {_short(exc)}") from exc
        except (requests.RequestException, ValueError, UnicodeError) as exc:
            raise FetchError(UNSAFE_URL.code, url, f"unusable URL: {_short(exc)}") from exc

    def _read_body(
        self,
        resp: requests.Response,
        url: str,
        cap: int,
        deadline: float,
        method: str,
        truncate: bool,
    ) -> tuple[bytes, bool]:
        """Read at most `cap` decoded bytes, honouring the deadline between reads."""
        if method == "HEAD" or cap <= 0:
            return b"", False
        declared = resp.headers.get("content-length", "")
        if (
            not truncate
            and declared.isdigit()
            and int(declared) > cap
            and not resp.headers.get("content-encoding")
        ):
            raise FetchError(
                TOO_LARGE.code, url, f"Content-Length {declared} passes the limit of {cap} bytes"
            )
        encoding = resp.headers.get("content-encoding", "").strip().lower()
        decoder = CappedDecoder(encoding, cap) if encoding in ("gzip", "deflate") else None
        chunks: list[bytes] = []
        size = 0
        raw = resp.raw
        try:
            while True:
                if time.monotonic() > deadline:
                    raise FetchError(
                        TIMEOUT.code,
                        url,
                        f"body not complete within {self.limits.total_timeout} s",
                    )
                data = raw.read1(65536, decode_content=False)
                if not data:
                    break
                if decoder is not None:
                    data = decoder.feed(data)
                size += len(data)
                if size > cap:
                    if truncate:
                        chunks.append(data[: len(data) - (size - cap)])
                        return b"".join(chunks), True
                    raise FetchError(TOO_LARGE.code, url, f"body passes the limit of {cap} bytes")
                chunks.append(data)
            if decoder is not None:
                decoder.finish()
        except DecompressionLimit as exc:
            if truncate:
                return b"".join(chunks), True
            raise FetchError(
                TOO_LARGE.code, url, f"decompressed body passes the limit of {cap} bytes"
            ) from exc
        except DecompressionFailed as exc:
            raise FetchError(BAD_ENCODING.code, url, f"broken {encoding} body: {exc}") from exc
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if isinstance(exc, urllib3.exceptions.ReadTimeoutError | socket.timeout):
                raise FetchError(TIMEOUT.code, url, "the body stopped arriving") from exc
            raise FetchError(CONNECTION.code, url, f"body cut off: {_short(exc)}") from exc
        return b"".join(chunks), False


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:200] + "..."
