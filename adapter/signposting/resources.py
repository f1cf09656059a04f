"""`describedby` and `item` links against the Dataset's metadata records and parts.

Both relations point at resources the Dataset lists too: `describedby` at the
metadata records of `encoding`/`subjectOf`, `item` at the `distribution`
downloads (and CDIF `relatedLink` hasPart targets). Each link needs a media
type; the two sets of URLs must agree, reported both ways; and where both say
a type, they must say the same one. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from adapter.findings import Finding, FindingType, Severity
from adapter.models import Link
from adapter.signposting.datasetlinks import Resource
from adapter.signposting.links import media_type, url_key

# Types too generic to say what the metadata is: FAIR-SP asks for a profile beside them.
GENERIC_TYPES = frozenset(
    {"application/xml", "text/xml", "application/json", "application/ld+json", "text/plain"}
)
_MEDIA = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+\-]*/[a-z0-9][a-z0-9!#$&^_.+\-]*$")

DESCRIBEDBY_MISSING = FindingType(
    "signposting/describedby-missing",
    Severity.WARNING,
    "The landing page has signposting but no 'describedby' link to its metadata "
    "(FAIR-SP requires at least one).",
)
DESCRIBEDBY_TYPE_MISSING = FindingType(
    "signposting/describedby-type-missing",
    Severity.WARNING,
    "A 'describedby' link has no type attribute; FAIR-SP asks for the metadata's media type "
    "on each link.",
)
DESCRIBEDBY_PROFILE_MISSING = FindingType(
    "signposting/describedby-profile-missing",
    Severity.WARNING,
    "A 'describedby' link has a generic type (XML, JSON, JSON-LD, plain text) but no profile "
    "saying which metadata standard it follows (e.g. the XML namespace).",
)
DESCRIBEDBY_NOT_LINKED = FindingType(
    "signposting/describedby-not-linked",
    Severity.WARNING,
    "A metadata record the Dataset lists in encoding/subjectOf has no 'describedby' link.",
)
DESCRIBEDBY_NOT_IN_DATASET = FindingType(
    "signposting/describedby-not-in-dataset",
    Severity.INFO,
    "A 'describedby' link points at metadata the Dataset does not list in encoding or "
    "subjectOf, so DataONE will not harvest that record.",
)
DESCRIBEDBY_TYPE_MISMATCH = FindingType(
    "signposting/describedby-type-mismatch",
    Severity.WARNING,
    "A 'describedby' link and the Dataset's encodingFormat give different media types for "
    "the same metadata record.",
)
PROFILE_MISMATCH = FindingType(
    "signposting/describedby-profile-mismatch",
    Severity.INFO,
    "A 'describedby' link's profile is none of the format URIs the Dataset's encodingFormat "
    "gives for that record.",
)
ITEM_TYPE_MISSING = FindingType(
    "signposting/item-type-missing",
    Severity.WARNING,
    "An 'item' link has no type attribute; FAIR-SP asks for the media type on each link.",
)
ITEM_NOT_LINKED = FindingType(
    "signposting/item-not-linked",
    Severity.WARNING,
    "A download the Dataset lists (distribution contentUrl, or a relatedLink hasPart) has no "
    "'item' link.",
)
ITEM_NOT_IN_DATASET = FindingType(
    "signposting/item-not-in-dataset",
    Severity.WARNING,
    "An 'item' link points at content the Dataset does not list as a distribution contentUrl.",
)
ITEM_TYPE_MISMATCH = FindingType(
    "signposting/item-type-mismatch",
    Severity.WARNING,
    "An 'item' link and the Dataset's encodingFormat give different media types for the same file.",
)


@dataclass(frozen=True, slots=True)
class _Codes:
    rel: str
    type_missing: FindingType
    not_linked: FindingType
    not_in_dataset: FindingType
    type_mismatch: FindingType
    prop: str  # how the Dataset names them


DESCRIBEDBY = _Codes(
    "describedby",
    DESCRIBEDBY_TYPE_MISSING,
    DESCRIBEDBY_NOT_LINKED,
    DESCRIBEDBY_NOT_IN_DATASET,
    DESCRIBEDBY_TYPE_MISMATCH,
    "encoding/subjectOf",
)
ITEM = _Codes(
    "item",
    ITEM_TYPE_MISSING,
    ITEM_NOT_LINKED,
    ITEM_NOT_IN_DATASET,
    ITEM_TYPE_MISMATCH,
    "distribution",
)


def media_types(formats: Sequence[str]) -> list[str]:
    """The encodingFormat values that are media types (not format URIs)."""
    out = []
    for f in formats:
        value = media_type(f)
        if value and "://" not in f and _MEDIA.match(value):
            out.append(value)
    return out


def format_uris(formats: Sequence[str]) -> list[str]:
    return [f.strip() for f in formats if ":" in f and not _MEDIA.match(f.strip().lower())]


def check_links(links: Sequence[Link], page: str) -> list[Finding]:
    """Page-level rules: describedby present, each describedby/item typed, profiles given."""
    described = [x for x in links if x.rel == "describedby"]
    out: list[Finding] = []
    if not described:
        out.append(DESCRIBEDBY_MISSING.at(page, where="rel=describedby"))
    for codes in (DESCRIBEDBY, ITEM):
        for href, group in _by_href([x for x in links if x.rel == codes.rel]).items():
            untyped = list(dict.fromkeys(x.source for x in group if not x.type))
            if untyped:
                out.append(
                    codes.type_missing.at(
                        page,
                        f"rel={codes.rel} {href} has no type (in {', '.join(untyped)})",
                        f"rel={codes.rel}",
                    )
                )
    for group in _by_href(described).values():
        link = next((x for x in group if x.type), group[0])
        if media_type(link.type) in GENERIC_TYPES and not any(x.profile for x in group):
            out.append(
                DESCRIBEDBY_PROFILE_MISSING.at(
                    page,
                    f"rel=describedby {link.href} has type {link.type} but no profile",
                    "rel=describedby",
                )
            )
    return out


def compare(
    links: Sequence[Link], resources: Sequence[Resource], codes: _Codes, page: str
) -> list[Finding]:
    """The rel's links against the Dataset's resources: both ways, then their types."""
    mine = [x for x in links if x.rel == codes.rel]
    linked = _by_href(mine)
    listed = {url_key(r.url): r for r in resources}
    out: list[Finding] = []
    for key, res in listed.items():
        if key not in linked:
            out.append(
                codes.not_linked.at(
                    page, f"{res.url} ({res.where}) has no rel={codes.rel} link", res.where
                )
            )
    for key, group in _by_href(mine).items():
        if key not in listed:
            out.append(
                codes.not_in_dataset.at(
                    page,
                    f"rel={codes.rel} {key} is not in the Dataset's {codes.prop}",
                    f"rel={codes.rel}",
                )
            )
            continue
        found = [f for link in group for f in _agree(link, listed[key], codes, page)]
        out.extend(dict.fromkeys(found))
    return out


def _agree(link: Link, res: Resource, codes: _Codes, page: str) -> list[Finding]:
    out = []
    said = media_type(link.type)
    expected = media_types(res.formats)
    if said and expected and said not in expected:
        out.append(
            codes.type_mismatch.at(
                page,
                f"rel={codes.rel} {link.href} has type {said}; the Dataset's encodingFormat at "
                f"{res.where} says {', '.join(expected)}",
                f"{res.where}.encodingFormat",
            )
        )
    uris = format_uris(res.formats)
    if codes is DESCRIBEDBY and link.profile and uris:
        profiles = {p.rstrip("/") for p in link.profile.split()}
        if not profiles & {u.rstrip("/") for u in uris}:
            out.append(
                PROFILE_MISMATCH.at(
                    page,
                    f"rel=describedby {link.href} has profile {link.profile}; the Dataset's "
                    f"encodingFormat at {res.where} names {', '.join(uris)}",
                    f"{res.where}.encodingFormat",
                )
            )
    return out


def _by_href(links: Sequence[Link]) -> dict[str, list[Link]]:
    out: dict[str, list[Link]] = {}
    for link in links:
        out.setdefault(url_key(link.href), []).append(link)
    return out
