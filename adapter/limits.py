"""Every cap on size, time and depth, in one place.

Defaults suit real repositories; a node's configuration may override any of
them (`limits:` in the YAML), and `ADAPTER_LIMITS="total_timeout=5,max_links=100"`
overrides the defaults (under a node's own `limits:`; alone for commands run
without a configuration file: `check-dataset`, `discover`, `web`). The
environment is read when a command starts (`Limits.from_env`), never at
import: `DEFAULT_LIMITS` is the defaults alone. A breach is a finding that
names the limit and the URL, never a hang or a crash.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

from adapter.errors import ConfigError

MiB = 1024 * 1024
ENV_VAR = "ADAPTER_LIMITS"
ZERO_ALLOWED = frozenset({"max_retries", "max_follow"})  # 0 turns the feature off


def _cap(default: float, unit: str, doc: str) -> Any:
    return field(default=default, metadata={"unit": unit, "doc": doc})


@dataclass(frozen=True, slots=True)
class Limits:
    # HTTP
    connect_timeout: float = _cap(10.0, "s", "to open a connection")
    read_timeout: float = _cap(20.0, "s", "of silence tolerated between two reads")
    total_timeout: float = _cap(
        60.0,
        "s",
        "for one fetch, connect to last byte, redirects and retries included; "
        "a watchdog closes the socket at the deadline, so trickling headers or bodies end too",
    )
    max_redirects: int = _cap(10, "hops", "redirects followed per fetch (robots.txt: 5)")
    max_url_length: int = _cap(2048, "chars", "longest URL fetched (the sitemap protocol's limit)")
    max_page_bytes: int = _cap(
        10 * MiB, "bytes", "a landing page, linkset or JSON-LD document, after decompression"
    )
    max_metadata_bytes: int = _cap(
        50 * MiB, "bytes", "a metadata file synced as its own object, after decompression"
    )
    max_sitemap_bytes: int = _cap(
        50 * MiB, "bytes", "one sitemap after decompression (the protocol's 50 MiB), .gz included"
    )
    max_sitegraph_bytes: int = _cap(
        50 * MiB, "bytes", "one sitegraph (one JSON-LD document of many Datasets), decompressed"
    )
    max_robots_bytes: int = _cap(
        512_000, "bytes", "robots.txt read and parsed (RFC 9309: at least 500 KiB)"
    )
    # sitemaps
    max_sitemap_entries: int = _cap(50_000, "entries", "<url> or <sitemap> per sitemap file")
    max_sitemap_depth: int = _cap(5, "levels", "sitemap index nesting (index -> index -> ...)")
    max_sitemaps: int = _cap(1_000, "files", "sitemap files read per discovery")
    max_sitegraph_datasets: int = _cap(50_000, "Datasets", "read from one sitegraph")
    # documents
    max_json_depth: int = _cap(64, "levels", "nesting of one JSON-LD document")
    max_json_nodes: int = _cap(
        20_000, "nodes", "objects, arrays and values in one JSON-LD document"
    )
    max_jsonld_blocks: int = _cap(50, "blocks", '<script type="application/ld+json"> per page')
    max_links: int = _cap(500, "links", "typed links per page, all sources together")
    max_follow: int = _cap(25, "targets", "signposting targets visited by --follow")
    # rendering (`rendering.mode`: a page's JavaScript run in a browser, `adapter.render`)
    render_budget: float = _cap(
        10.0,
        "s",
        "to render one page, load to last script; the page is read as it stands when it ends",
    )
    render_max_bytes: int = _cap(
        8 * MiB, "bytes", "fetched for one rendered page's scripts and data, all requests together"
    )
    render_max_requests: int = _cap(
        64,
        "requests",
        "a rendered page's scripts may make (images, fonts, media are never fetched)",
    )
    render_heap_mb: int = _cap(
        256, "MiB", "JavaScript heap of each browser page process (chromium's max-old-space-size)"
    )
    # retries
    max_retries: int = _cap(3, "retries", "per fetch, for 429/502/503/504 and broken connections")
    max_retry_after: float = _cap(
        120.0, "s", "longest Retry-After honoured; a longer one pauses the host"
    )
    host_failures_before_pause: int = _cap(
        5, "failures", "failed fetches in a row before a host is paused for the run"
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            lowest = 0 if f.name in ZERO_ALLOWED else 1e-9
            if isinstance(value, bool) or not isinstance(value, int | float) or value < lowest:
                raise ValueError(f"limit {f.name} must be a positive number, not {value!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults with `ADAPTER_LIMITS`'s overrides (environ: `os.environ`), for a
        command as it starts; ConfigError when the variable cannot be read."""
        return _from_text((os.environ if environ is None else environ).get(ENV_VAR, ""))

    def with_overrides(self, values: Mapping[str, Any]) -> Limits:
        known = {f.name for f in fields(self)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown limits: {', '.join(sorted(unknown))}")
        return replace(self, **values)


def documented() -> list[tuple[str, object, str, str]]:
    """(name, default, unit, what it bounds) for every limit, in declaration order."""
    out = []
    for f in fields(Limits):
        default = f.default if f.default is not MISSING else None
        out.append((f.name, default, str(f.metadata["unit"]), str(f.metadata["doc"])))
    return out


def parse_overrides(text: str) -> dict[str, float | int]:
    """`name=value,name=value` (as in ADAPTER_LIMITS) -> typed overrides."""
    kinds = {f.name: f.type for f in fields(Limits)}
    out: dict[str, float | int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or name not in kinds:
            raise ValueError(f"{item!r} is not name=value with a known limit name")
        out[name] = int(raw) if kinds[name] in (int, "int") else float(raw)
    return out


@lru_cache(maxsize=8)  # a sync asks for a node's limits per page; the text rarely changes
def _from_text(text: str) -> Limits:
    if not text.strip():
        return Limits()
    try:
        return Limits().with_overrides(parse_overrides(text))
    except ValueError as exc:
        raise ConfigError(f"{ENV_VAR}: {exc}") from exc


DEFAULT_LIMITS = Limits()  # the defaults alone: ADAPTER_LIMITS is `Limits.from_env()`
