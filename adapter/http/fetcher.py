"""The only network code: polite, capped, safe HTTP fetches.

Redirects are followed by hand so that every hop is checked (scheme, address,
robots gate, loop) and counted; bodies are streamed and decoded by us so the
byte cap holds after decompression; one deadline bounds the whole exchange
(status line, headers, body, redirects, retries), enforced by a watchdog
that shuts the socket down, because a read timeout alone is per `recv`.
Connections go only to addresses the `AddressPolicy` allows, checked on the
resolved address at connect time. Failures that leave nothing to inspect
raise `FetchError` with a finding code; everything else is a `Fetched`. Retries and
the mapping of transport errors to findings are in `adapter.http.retry`.

Each fetcher owns one urllib3 `PoolManager` (keep-alive pools of guarded
connections, TLS verified against certifi's bundle) and sends through it
directly: redirects, decoding, cookies, proxies and hooks are all ours or
off, and `requests`' layers that would apply them cost ~0.3 ms of CPU per
request, more than the request itself (`benchmarks/cpu_stages.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from urllib.parse import urljoin

import urllib3
from urllib3.exceptions import LocationValueError, NewConnectionError

from adapter import USER_AGENT
from adapter.errors import FetchError
from adapter.http import connections, headerparse
from adapter.http.addresses import AddressPolicy, UnsafeAddress, host_key
from adapter.http.body import read_body, short, timeout_error
from adapter.http.connections import Exchange, Watchdog, exchange, guarded_pools
from adapter.http.findings import (
    DISALLOWED,
    HOST_PAUSED,
    HTTP_STATUS,
    REDIRECT_LOOP,
    TIMEOUT,
    TOO_MANY_REDIRECTS,
    UNSAFE_URL,
)
from adapter.http.politeness import HostHealth, NoPacer, Pacer
from adapter.http.retry import send_with_retries, transport_failure
from adapter.http.tally import TALLY
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import Fetched

ACCEPT_HTML = "text/html;q=1.0, application/xhtml+xml;q=0.9, application/ld+json;q=0.8, */*;q=0.1"
ACCEPT_JSONLD = "application/ld+json, application/json;q=0.9, */*;q=0.1"
ACCEPT_XML = "application/xml, text/xml;q=0.9, application/gzip;q=0.8, text/plain;q=0.5, */*;q=0.1"
ACCEPT_ANY = "*/*"

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# urllib3 logs malformed or cut-off response headers as a WARNING with a traceback; we report
# what matters as findings, and a stranger's broken headers must not fill the operator's log
logging.getLogger("urllib3.connection").setLevel(logging.ERROR)
headerparse.install()  # response headers without the `email` package (headerparse.py)

# gate(url) -> None when the URL may be fetched, else the reason it may not (robots.txt)
Gate = Callable[[str], str | None]


class Fetcher:
    """HTTP GET/HEAD with every cap from `Limits`; one pool manager (keep-alive) per fetcher."""

    def __init__(
        self,
        limits: Limits = DEFAULT_LIMITS,
        *,
        user_agent: str = USER_AGENT,
        policy: AddressPolicy | None = None,
        pacer: Pacer | None = None,
        gate: Gate | None = None,
        retry_base_delay: float = 1.0,
        watchdog: Watchdog | None = None,
    ) -> None:
        """`watchdog` (default: the process's, `connections.WATCHDOG`) ends fetches at
        their deadline, and its clock times them, their retries included (tests hand in
        one on virtual time)."""
        self.limits = limits
        self.user_agent = user_agent
        self.policy = policy or AddressPolicy()
        self.pacer: Pacer = pacer or NoPacer()
        self.gate = gate
        self.retry_base_delay = retry_base_delay
        self.watchdog = connections.WATCHDOG if watchdog is None else watchdog
        self.clock = self.watchdog.clock
        self._pools = guarded_pools()  # no proxies or .netrc from the environment
        self.health = HostHealth(limits.host_failures_before_pause)

    def close(self) -> None:
        self._pools.clear()

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
        """host:port -> why it was paused; the caller reports each as a finding."""
        return self.health.paused_hosts()

    # -- redirects ----------------------------------------------------------

    def _fetch(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        max_bytes: int | None,
        max_redirects: int | None,
        truncate: bool,
    ) -> Fetched:
        try:
            fetched = self._exchange(method, url, headers, max_bytes, max_redirects, truncate)
        except FetchError as exc:
            TALLY.failed(url, exc.code)
            raise
        if fetched.status >= 500:
            TALLY.failed(url, HTTP_STATUS.code)
        return fetched

    def _exchange(
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
        start = self.clock.monotonic()
        with exchange(self.policy, start + self.limits.total_timeout, self.watchdog) as ex:
            visited: list[str] = []
            current = url
            while True:
                self._check(current)
                resp = self._send_with_retries(method, current, headers, ex)
                try:
                    if resp.status in REDIRECT_STATUSES and "location" in resp.headers:
                        target = urljoin(current, resp.headers["location"].strip())
                        visited.append(current)
                        if target in visited:
                            raise FetchError(
                                REDIRECT_LOOP.code, url, f"redirect loop: {target} visited twice"
                            )
                        if len(visited) > limit:
                            raise FetchError(
                                TOO_MANY_REDIRECTS.code,
                                url,
                                f"more than max_redirects ({limit}) redirects",
                            )
                        if resp.status == 303 and method != "HEAD":
                            method = "GET"
                        current = target
                        continue
                    try:
                        body, truncated = (
                            read_body(resp, current, cap, ex, self.limits, truncate)
                            if method != "HEAD" and cap > 0
                            else (b"", False)
                        )
                    except FetchError as exc:
                        exc.status = resp.status  # answered, the body could not be taken
                        raise
                    return Fetched(
                        url=url,
                        final_url=current,
                        status=resp.status,
                        # repeated fields joined with ", " (RFC 9110 5.3); Link kept apart below
                        headers={k.lower(): resp.headers[k] for k in resp.headers},
                        body=body,
                        redirects=tuple(visited),
                        elapsed=self.clock.monotonic() - start,
                        truncated=truncated,
                        link_headers=tuple(resp.headers.getlist("link")),
                    )
                finally:
                    resp.close()

    def _check(self, url: str) -> None:
        reason = self.policy.refusal(url, self.limits.max_url_length)
        if reason:
            raise FetchError(UNSAFE_URL.code, url, f"refused: {reason}")
        key = host_key(url)
        paused = self.health.paused(key)
        if paused:
            raise FetchError(HOST_PAUSED.code, url, f"host {key} is paused: {paused}")
        if self.gate is not None:
            why = self.gate(url)
            if why:  # a gate may name its own code (robots.txt unreachable is no "disallow")
                raise FetchError(str(getattr(why, "code", DISALLOWED.code)), url, str(why))

    # -- retries and host health --------------------------------------------

    def _send_with_retries(
        self, method: str, url: str, headers: dict[str, str], ex: Exchange
    ) -> urllib3.BaseHTTPResponse:
        return send_with_retries(
            self._send,
            (method, url, headers),
            ex,
            self.health,
            self.limits,
            self.retry_base_delay,
            self.pacer.hold,
            clock=self.clock,
        )

    # -- one request --------------------------------------------------------

    def _send(
        self, method: str, url: str, headers: dict[str, str], ex: Exchange
    ) -> urllib3.BaseHTTPResponse:
        remaining = ex.deadline - self.clock.monotonic()
        if remaining <= 0 or ex.expired:
            raise self._timeout(url)
        send_headers = {
            "User-Agent": self.user_agent,
            "Accept-Encoding": "gzip, deflate",
            **headers,
        }
        read = min(self.limits.read_timeout, remaining)
        timeout = urllib3.Timeout(connect=min(self.limits.connect_timeout, remaining), read=read)
        key = host_key(url)
        try:
            with self.pacer.slot(key):
                ex.on_sent = partial(self.pacer.sent, key)  # a request that left late moves
                # the next start on
                resp = self._pools.urlopen(
                    method,
                    url,
                    headers=send_headers,
                    timeout=timeout,
                    redirect=False,
                    retries=False,
                    preload_content=False,
                    decode_content=False,
                )
        except UnsafeAddress as exc:
            raise FetchError(UNSAFE_URL.code, url, f"refused: {exc}") from exc
        except (LocationValueError, ValueError, UnicodeError) as exc:
            raise FetchError(UNSAFE_URL.code, url, f"unusable URL: {short(exc)}") from exc
        except NewConnectionError as exc:  # a subclass of ConnectTimeoutError, yet no timeout
            raise (self._timeout(url) if ex.expired else transport_failure(exc, url)) from exc
        except urllib3.exceptions.TimeoutError as exc:
            raise FetchError(
                TIMEOUT.code, url, f"no answer within {read:.1f} s (read_timeout)"
            ) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise (self._timeout(url) if ex.expired else transport_failure(exc, url)) from exc
        if ex.expired:  # the headers were cut off by the watchdog: whatever parsed is partial
            resp.close()
            raise self._timeout(url)
        return resp

    def _timeout(self, url: str) -> FetchError:
        return timeout_error(url, self.limits)
