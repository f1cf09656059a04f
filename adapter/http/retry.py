"""Retries, host health and the mapping of transport errors to findings, for `adapter.http.fetcher`.

A request is retried on a connection failure or a 429/502/503/504, after an
exponential backoff or the Retry-After the server asked for, but never past
the exchange's one deadline; a Retry-After longer than `max_retry_after`
pauses the host instead. Each outcome is told to the host's `HostHealth`, so
a host that keeps failing is paused for the rest of the run. Split from
`adapter.http.fetcher` (which re-exports these names) to keep each module short.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Callable

import urllib3

from adapter.errors import FetchError
from adapter.http.addresses import host_key
from adapter.http.body import caused_by, short
from adapter.http.clock import SYSTEM_CLOCK, Clock
from adapter.http.connections import Exchange
from adapter.http.findings import (
    CONNECTION,
    HEADERS_TOO_LARGE,
    HOST_PAUSED,
    RATE_LIMITED,
    TIMEOUT,
    UNSAFE_URL,
)
from adapter.http.politeness import HostHealth, backoff_delay, retry_after_seconds
from adapter.http.tally import TALLY
from adapter.limits import Limits

RETRY_STATUSES = frozenset({429, 502, 503, 504})

# send(method, url, headers, exchange) -> the response, or FetchError
Send = Callable[[str, str, dict[str, str], Exchange], urllib3.BaseHTTPResponse]


class NotTransient(FetchError):
    """A connection failure that retrying cannot fix (the host name does not resolve)."""


def headers_too_large(exc: BaseException) -> bool:
    found = caused_by(exc, (http.client.HTTPException,))
    if found is None:
        return False
    return isinstance(found, http.client.LineTooLong) or "more than" in str(found)


def transport_failure(exc: BaseException, url: str) -> FetchError:
    """The FetchError for a requests/urllib3/socket failure that is not a timeout."""
    if headers_too_large(exc):
        return FetchError(HEADERS_TOO_LARGE.code, url, f"response headers too large: {short(exc)}")
    if caused_by(exc, (socket.gaierror, urllib3.exceptions.NameResolutionError)):
        return NotTransient(CONNECTION.code, url, "the host name does not resolve (DNS)")
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return FetchError(CONNECTION.code, url, f"connection failed: {short(exc)}")
    return FetchError(UNSAFE_URL.code, url, f"unusable URL: {short(exc)}")


def send_with_retries(
    send: Send,
    request: tuple[str, str, dict[str, str]],
    ex: Exchange,
    health: HostHealth,
    limits: Limits,
    base_delay: float,
    hold: Callable[[str, float], None] | None = None,
    *,
    clock: Clock = SYSTEM_CLOCK,
) -> urllib3.BaseHTTPResponse:
    """`send(method, url, headers, ex)`, retried while it may help and time allows.

    `hold(host, seconds)`: a Retry-After holds the whole host, not only this
    request's retry, so other threads and processes wait it out too. `clock`
    times the waits (`ex.deadline` is on it).
    """
    method, url, headers = request
    key = host_key(url)
    attempt = 0
    while True:
        try:
            resp = send(method, url, headers, ex)
        except FetchError as exc:
            if (
                exc.code != CONNECTION.code
                or isinstance(exc, NotTransient)
                or attempt >= limits.max_retries
            ):
                if exc.code in (CONNECTION.code, TIMEOUT.code):
                    health.failed(key, exc.message)
                raise
            wait = backoff_delay(base_delay, attempt)
            what = exc.message
        else:
            if resp.status not in RETRY_STATUSES:
                health.succeeded(key)
                return resp
            what = f"HTTP {resp.status}"
            if attempt >= limits.max_retries:
                health.failed(key, f"{what} after {attempt} retries")
                return resp
            asked = retry_after_seconds(resp.headers.get("retry-after"), clock.time())
            resp.close()
            if asked is not None and asked > limits.max_retry_after:
                reason = (
                    f"{what} with Retry-After {asked:.0f} s, past max_retry_after "
                    f"({limits.max_retry_after:.0f} s)"
                )
                health.pause(key, reason)
                raise FetchError(HOST_PAUSED.code, url, f"host {key} paused: {reason}")
            if asked is not None and hold is not None:
                hold(key, asked)
            wait = asked if asked is not None else backoff_delay(base_delay, attempt)
        if clock.monotonic() + wait > ex.deadline:
            code = RATE_LIMITED.code if what.startswith("HTTP") else CONNECTION.code
            raise FetchError(
                code,
                url,
                f"{what}; {attempt} retries, and waiting {wait:.1f} s more would pass "
                f"total_timeout ({limits.total_timeout:g} s)",
            )
        TALLY.retried(url, what if what.startswith("HTTP") else "connection")
        clock.sleep(wait)
        attempt += 1
