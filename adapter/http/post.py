"""One POST of a JSON-LD document to an inbox (COAR Notify, W3C LDN), under the address policy.

The only request the adapter sends with a body. It goes through the same guarded sockets as
every fetch (`adapter.http.connections`): the URL is refused unless its host resolves to
public addresses or its origin is one the operator named, and the whole exchange ends at
one deadline, so an inbox that trickles its answer cannot hold the sender. No redirect is
followed (an inbox that moved says so with its status) and the answer's body is not read.
"""

from __future__ import annotations

import urllib3
from urllib3.exceptions import LocationValueError, NewConnectionError

from adapter import USER_AGENT
from adapter.http.addresses import AddressPolicy, UnsafeAddress
from adapter.http.connections import WATCHDOG, Watchdog, exchange, guarded_pools

LDN_TYPE = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"'
MAX_URL_LENGTH = 2000


class PostFailed(Exception):
    """The POST got no HTTP answer: refused by the address policy, unreachable, timed out."""


def post_json(
    url: str,
    body: bytes,
    *,
    policy: AddressPolicy,
    timeout: float = 20.0,
    user_agent: str = USER_AGENT,
    content_type: str = LDN_TYPE,
    watchdog: Watchdog = WATCHDOG,
) -> int:
    """POST `body` to `url`; the HTTP status of the answer, or PostFailed saying why none."""
    refused = policy.refusal(url, MAX_URL_LENGTH)
    if refused:
        raise PostFailed(f"refused: {refused}")
    pools = guarded_pools()
    clock = watchdog.clock
    headers = {"Content-Type": content_type, "User-Agent": user_agent, "Accept": "*/*"}
    try:
        with exchange(policy, clock.monotonic() + timeout, watchdog) as ex:
            try:
                resp = pools.urlopen(
                    "POST",
                    url,
                    body=body,
                    headers=headers,
                    timeout=urllib3.Timeout(connect=timeout, read=timeout),
                    redirect=False,
                    retries=False,
                    preload_content=False,
                )
            except UnsafeAddress as exc:
                raise PostFailed(f"refused: {exc}") from exc
            except (LocationValueError, ValueError, UnicodeError) as exc:
                raise PostFailed(f"unusable URL: {exc}") from exc
            except NewConnectionError as exc:  # a ConnectTimeoutError to urllib3, yet no timeout
                raise PostFailed(_reason(exc)) from exc
            except urllib3.exceptions.TimeoutError as exc:
                raise PostFailed(f"no answer within {timeout:g} s") from exc
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                if ex.expired:
                    raise PostFailed(f"no answer within {timeout:g} s") from exc
                raise PostFailed(_reason(exc)) from exc
            resp.release_conn()
            return int(resp.status)
    finally:
        pools.clear()


def _reason(exc: BaseException) -> str:
    """The innermost cause of a connection error in a few words (urllib3 nests them)."""
    inner: BaseException = exc
    while getattr(inner, "reason", None) is not None and isinstance(inner.reason, BaseException):  # type: ignore[attr-defined]
        inner = inner.reason  # type: ignore[attr-defined]
    text = str(inner)
    if "Connection refused" in text:
        return "connection refused"
    return text[:200] or type(inner).__name__
