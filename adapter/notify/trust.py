"""Whom the inbox acts for: a configured origin, about a page of a node that trusts it.

Per node, `notify.origins` lists the services (`id` and `inbox`) that may ask for its pages;
the page must lie on one of the node's hosts (its start URLs', its `scope.allowed_hosts`)
and pass its scope patterns. Anything else is refused (403) before anything is fetched or
stored. The answers go only to the inbox the operator configured for the origin, so a
payload cannot aim the adapter's answers (or its retries) at a third party.

Every URL in the payload is looked at as written: http(s) or a URN, no user credentials, no
literal address that is not public unless its origin is the operator's (the addresses a name
resolves to are checked again when the adapter connects: adapter.http.addresses).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from adapter.config.settings import NodeSettings, NotifyOrigin
from adapter.http.addresses import non_public_reason, origin
from adapter.notify.patterns import UNDO_OFFER, Received

MAX_URLS = 200  # URLs looked at in one payload; a payload with more is refused


@dataclass(frozen=True, slots=True)
class Trusted:
    """The node (or, for an Undo, the nodes) the notification is acted on for."""

    nodes: tuple[NodeSettings, ...]
    origin: NotifyOrigin


@dataclass(frozen=True, slots=True)
class Refused:
    """Why the notification is not acted on, for the log and the 403's body."""

    reason: str


def _same(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def configured_origin(nodes: Sequence[NodeSettings], origin_id: str | None) -> NotifyOrigin | None:
    """The configured origin with this id (any node's), if any."""
    for node in nodes:
        for known in node.notify.origins:
            if origin_id is not None and _same(known.id, origin_id):
                return known
    return None


def decide(
    nodes: Sequence[NodeSettings], rec: Received, ours: Sequence[str] = ()
) -> Trusted | Refused:
    """Trusted (with the node of the page) or Refused (with the reason). `ours`: the
    adapter's own URLs (its inbox, the nodes' base URLs), which a payload names as target."""
    trusting = [n for n in nodes if any(_same(o.id, rec.origin_id) for o in n.notify.origins)]
    if not trusting:
        return Refused(f"origin {rec.origin_id} is not a trusted origin of any node")
    known = next(o for o in trusting[0].notify.origins if _same(o.id, rec.origin_id))
    if not _same(known.inbox, rec.origin_inbox):
        return Refused(
            f"origin.inbox {rec.origin_inbox} is not the inbox configured for {rec.origin_id}"
        )
    named = [*ours, *(u for n in trusting for u in trusted_urls(n))]
    bad = url_refusal(rec.doc, {origin(u) for u in named})
    if bad is not None:
        return Refused(bad)
    if rec.kind == UNDO_OFFER:
        return Trusted(tuple(trusting), known)
    page = rec.page or ""
    for node in trusting:
        if on_node(node, page):
            return Trusted((node,), known)
    return Refused(f"{page} is not a page of a node that trusts {rec.origin_id}")


def on_node(node: NodeSettings, url: str) -> bool:
    """Whether `url` lies on one of the node's hosts and passes its scope patterns."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        return False
    return (parts.hostname or "").lower() in node.hosts() and node.in_scope(url)


def trusted_urls(node: NodeSettings) -> list[str]:
    """The URLs the operator named for the node: its start, its origins' ids and inboxes."""
    named = list(node.trusted_origins())
    for o in node.notify.origins:
        named += [o.id, o.inbox]
    if node.notify.report_to:
        named.append(node.notify.report_to)
    return named


def url_refusal(doc: Any, trusted: set[str]) -> str | None:
    """Why a URL in the payload is refused (None: every URL may be named)."""
    for count, url in enumerate(_urls(doc)):
        if count >= MAX_URLS:
            return f"the payload names more than {MAX_URLS} URLs"
        why = _url_refusal(url, trusted)
        if why is not None:
            return f"{url[:200]}: {why}"
    return None


def _url_refusal(url: str, trusted: set[str]) -> str | None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return f"scheme {scheme or '(none)'!r} is not http or https"
    if parts.username is not None or parts.password is not None:
        return "the URL carries user credentials"
    host = (parts.hostname or "").strip("[]")
    if not host:
        return "the URL has no host"
    try:
        trusted_origin = origin(url) in trusted
    except ValueError:
        return "the URL has an invalid port"
    reason = None if trusted_origin else non_public_reason(host)
    if reason is not None and reason != "is not an IP address":
        return f"address {host} {reason}"
    return None


def _urls(doc: Any) -> Iterator[str]:
    """Every string value of the payload that is a URL with an authority (`scheme://`):
    ids, inboxes, links; not types (`coar-notify:IngestAction`) or URNs."""
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += [v for k, v in value.items() if k != "@context"]
        elif isinstance(value, list):
            stack += value
        elif isinstance(value, str) and "://" in value[:40] and not any(c.isspace() for c in value):
            yield value
