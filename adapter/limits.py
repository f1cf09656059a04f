"""Every cap on size, time and depth, in one place.

Defaults suit real repositories; a node's configuration may override any of
them (`limits:` in the YAML). A breach is a finding that names the limit and
the URL, never a hang or a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    # HTTP
    connect_timeout: float = 10.0  # seconds to open a connection
    read_timeout: float = 20.0  # seconds of silence tolerated while reading
    total_timeout: float = 60.0  # seconds for one fetch, headers to last byte
    max_redirects: int = 10  # hops per fetch (robots.txt: 5, RFC 9309)
    max_url_length: int = 2048  # characters, the sitemap protocol's limit
    max_page_bytes: int = 10 * MiB  # a landing page, linkset or JSON-LD document
    max_metadata_bytes: int = 50 * MiB  # a metadata copy synced as its own object
    max_sitemap_bytes: int = 50 * MiB  # one sitemap, uncompressed (protocol limit)
    max_robots_bytes: int = 512_000  # robots.txt parsed (RFC 9309: at least 500 KiB)
    # sitemaps
    max_sitemap_entries: int = 50_000  # <url> per sitemap file (protocol limit)
    max_sitemap_depth: int = 5  # index -> index -> ... nesting
    max_sitemaps: int = 1_000  # sitemap files per discovery
    # documents
    max_json_depth: int = 64  # nesting of a JSON-LD document
    max_json_nodes: int = 20_000  # objects + arrays + values in one JSON-LD document
    max_jsonld_blocks: int = 50  # <script type="application/ld+json"> per page
    max_links: int = 500  # typed links per page, all sources together
    max_follow: int = 25  # signposting targets visited by --follow
    # retries
    max_retries: int = 3  # for 429/503/connection failures
    max_retry_after: float = 120.0  # a Retry-After longer than this pauses the host
    host_failures_before_pause: int = 5  # consecutive failures before a host is paused

    def with_overrides(self, values: dict[str, Any]) -> Limits:
        known = {f.name for f in fields(self)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown limits: {', '.join(sorted(unknown))}")
        return replace(self, **values)


DEFAULT_LIMITS = Limits()
