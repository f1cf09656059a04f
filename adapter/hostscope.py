"""Host scope helpers for discovery: URL origins and the allowed-hosts set."""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import urlsplit


def _prefix(url: str) -> str:
    """scheme://netloc of an http(s) URL, lower-cased (fast path of urlsplit)."""
    start = url.find("//") + 2
    end = url.find("/", start)
    return (url[:end] if end > 0 else url).lower()


def _hosts(allowed: Collection[str]) -> frozenset[str]:
    """Allowed hosts as host names and host:port, from names, origins or URLs."""
    out: set[str] = set()
    for item in allowed:
        parts = urlsplit(item if "//" in item else "//" + item)
        if parts.hostname:
            out.add(parts.hostname.lower())
            out.add(parts.netloc.lower())
    return frozenset(out)
