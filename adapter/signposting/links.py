"""The signposts of one page as a whole: relations, URL identity, grouping by source.

`report.signposts` keeps one `Link` per source (header, html, linkset,
signmap), so the JSON report shows who said what. `group` folds them into one
`Signpost` per (anchor, rel, href) with every source that stated it; that is
what the human report prints and what the cross-checks count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from adapter.models import Link

# FAIR Signposting relations (FAIR-SP § 1.3) plus linkset discovery (RFC 9264).
SIGNPOSTING_RELS = frozenset(
    {
        "author",
        "cite-as",
        "collection",
        "describedby",
        "describes",
        "item",
        "license",
        "type",
        "linkset",
    }
)
SOURCE_ORDER = ("header", "html", "linkset", "signmap")

SCHEMA_DATASET = "https://schema.org/Dataset"
SCHEMA_ABOUTPAGE = "https://schema.org/AboutPage"
URL_KEY_CACHE = 8192  # distinct URLs remembered: a few pages' worth, bounded memory


@dataclass(frozen=True, slots=True)
class Signpost:
    """One statement (anchor, rel, href) and every source that made it."""

    anchor: str
    rel: str
    href: str
    type: str | None
    profile: str | None
    sources: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "anchor": self.anchor,
            "rel": self.rel,
            "href": self.href,
            "type": self.type,
            "profile": self.profile,
            "sources": list(self.sources),
        }


@lru_cache(maxsize=URL_KEY_CACHE)
def url_key(url: str) -> str:
    """A URL in a form where trivially different spellings compare equal.

    Scheme and host lower-cased, default port dropped, empty path made "/",
    fragment dropped. http and https stay different: they are different URLs.
    Memoized (a pure function of a str): the checks of one page ask for the
    same few URLs' keys some 60 times, and urlsplit/urlunsplit dominate them.
    `url_key.__wrapped__` is the uncached reference.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip()
    host = (parts.hostname or "").lower()
    scheme = parts.scheme.lower()
    if port is not None and not (
        (scheme == "http" and port == 80) or (scheme == "https" and port == 443)
    ):
        host = f"{host}:{port}"
    path = parts.path or ("/" if host else "")
    return urlunsplit((scheme, host, path, parts.query, ""))


def same_url(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and url_key(a) == url_key(b)


def media_type(value: str | None) -> str | None:
    """`type/subtype` without parameters, lower-cased."""
    if not value:
        return None
    return value.split(";", 1)[0].strip().lower() or None


def anchored_at(links: Iterable[Link], urls: Iterable[str]) -> list[Link]:
    """The links whose context is one of `urls` (the landing page and its spellings)."""
    keys = {url_key(u) for u in urls if u}
    return [link for link in links if url_key(link.anchor) in keys]


def group(links: Sequence[Link]) -> list[Signpost]:
    """One `Signpost` per (anchor, rel, href), sources in a fixed order, first type wins."""
    order: list[tuple[str, str, str]] = []
    members: dict[tuple[str, str, str], list[Link]] = {}
    for link in links:
        key = (url_key(link.anchor), link.rel, url_key(link.href))
        if key not in members:
            order.append(key)
            members[key] = []
        members[key].append(link)
    out = []
    for key in order:
        same = sorted(members[key], key=lambda link: _source_rank(link.source))
        first = same[0]
        sources = tuple(dict.fromkeys(link.source for link in same))
        out.append(
            Signpost(
                anchor=first.anchor,
                rel=first.rel,
                href=first.href,
                type=next((link.type for link in same if link.type), None),
                profile=next((link.profile for link in same if link.profile), None),
                sources=sources,
            )
        )
    return out


def dedupe(links: Iterable[Link]) -> list[Link]:
    """Drop exact repeats of a link from the same source (a header sent twice)."""
    return list(dict.fromkeys(links))


def _source_rank(source: str) -> int:
    return SOURCE_ORDER.index(source) if source in SOURCE_ORDER else len(SOURCE_ORDER)
