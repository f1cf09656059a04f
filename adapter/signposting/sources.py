"""Do the sources of a page's links agree with each other?

The same page can state its links four ways (HTTP headers, HTML, a link set,
the sitemap's Signmap). FAIR Signposting lets a page use any of them, but when
two say different things a client gets a different answer depending on where
it looks (a2a-fair-metrics cases 17-22: HTTP vs HTML cite-as). Pure functions
over the landing page's links.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from adapter.findings import Finding, FindingType, Severity
from adapter.models import Link
from adapter.signposting.links import SIGNPOSTING_RELS, url_key

CONFLICT = FindingType(
    "signposting/conflicting-attributes",
    Severity.WARNING,
    "The same link is given by several sources (HTTP header, HTML, link set, Signmap) with "
    "different type or profile; clients will disagree about what the target is.",
)
DISAGREE = FindingType(
    "signposting/sources-disagree",
    Severity.WARNING,
    "The HTTP Link header, the HTML <link> elements and the link set give different targets "
    "for the same relation; a client sees a different answer depending on where it looks.",
)
SIGNMAP_MISSING = FindingType(
    "signposting/signmap-missing-on-page",
    Severity.WARNING,
    "The sitemap's Signmap gives a link for this page that the page itself (headers, HTML, "
    "link set) does not carry.",
)
SIGNMAP_DIFFERS = FindingType(
    "signposting/signmap-differs",
    Severity.WARNING,
    "The sitemap's Signmap and the page itself give different targets for the same relation.",
)

PAGE_SOURCES = ("header", "html", "linkset")
# Relations with one target: another target is a contradiction, not an addition.
_SINGLE = frozenset({"cite-as", "license"})
# Level 1 may carry fewer authors and items than the link set (FAIR-SP § 2.1.1).
_TRUNCATABLE = frozenset({"author", "item"})


def check_sources(links: Sequence[Link], page_url: str) -> list[Finding]:
    """Findings where the sources of the landing page's links contradict each other."""
    return [
        *_attribute_conflicts(links, page_url),
        *_page_sources_disagree(links, page_url),
        *_signmap_vs_page(links, page_url),
    ]


def _attribute_conflicts(links: Sequence[Link], page_url: str) -> list[Finding]:
    by_key: dict[tuple[str, str, str], list[Link]] = defaultdict(list)
    for link in links:
        by_key[(url_key(link.anchor), link.rel, url_key(link.href))].append(link)
    out = []
    for same in by_key.values():
        for attr in ("type", "profile"):
            if not _sources_disagree(same, attr):
                continue
            first = same[0]
            detail = "; ".join(
                f"{link.source} says {getattr(link, attr)!r}"
                for link in same
                if getattr(link, attr)
            )
            out.append(
                CONFLICT.at(
                    page_url,
                    f"rel={first.rel} {first.href}: {attr} differs between sources ({detail})",
                    f"rel={first.rel}",
                )
            )
    return out


def _sources_disagree(same: Sequence[Link], attr: str) -> bool:
    """Whether two sources give one link's `attr` with no value in common.

    One source may list a target several times with different types (a record offered
    as XML and as JSON-LD): that is content negotiation, not a disagreement."""
    by_source: dict[str, set[str]] = defaultdict(set)
    for link in same:
        value = getattr(link, attr)
        if value:
            by_source[link.source].add(value)
    said = list(by_source.values())
    return any(not (a & b) for i, a in enumerate(said) for b in said[i + 1 :])


def _hrefs(links: Sequence[Link], source: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for link in links:
        if link.source == source and link.rel in SIGNPOSTING_RELS:
            out[link.rel].add(url_key(link.href))
    return out


def _page_sources_disagree(links: Sequence[Link], page_url: str) -> list[Finding]:
    per_source = {s: _hrefs(links, s) for s in PAGE_SOURCES}
    out = []
    for i, a in enumerate(PAGE_SOURCES):
        for b in PAGE_SOURCES[i + 1 :]:
            for rel in sorted(set(per_source[a]) & set(per_source[b])):
                if rel == "linkset":
                    continue
                left, right = per_source[a][rel], per_source[b][rel]
                if b == "linkset" and rel in _TRUNCATABLE:
                    differ = not left <= right
                else:
                    differ = left != right
                if differ:
                    out.append(
                        DISAGREE.at(
                            page_url,
                            f"rel={rel}: {a} gives {_list(left)}, {b} gives {_list(right)}",
                            f"rel={rel}",
                        )
                    )
    return out


def _signmap_vs_page(links: Sequence[Link], page_url: str) -> list[Finding]:
    signmap = _hrefs(links, "signmap")
    page: dict[str, set[str]] = defaultdict(set)
    for source in PAGE_SOURCES:
        for rel, hrefs in _hrefs(links, source).items():
            page[rel] |= hrefs
    out = []
    for rel in sorted(signmap):
        missing = signmap[rel] - page[rel]
        if not missing:
            continue
        if page[rel] and rel in _SINGLE:
            out.append(
                SIGNMAP_DIFFERS.at(
                    page_url,
                    f"rel={rel}: the Signmap gives {_list(signmap[rel])}, the page gives "
                    f"{_list(page[rel])}",
                    f"rel={rel}",
                )
            )
        else:
            out.extend(
                SIGNMAP_MISSING.at(
                    page_url,
                    f"rel={rel} {href} is in the Signmap but not on the page",
                    f"rel={rel}",
                )
                for href in sorted(missing)
            )
    return out


def _list(hrefs: set[str]) -> str:
    items = sorted(hrefs)
    shown = ", ".join(items[:3]) + (f" (+{len(items) - 3} more)" if len(items) > 3 else "")
    return shown or "nothing"
