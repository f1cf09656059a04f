"""The signposting a landing page should carry, derived from its Dataset.

When links are missing or wrong, a repository manager gets the exact `Link`
header and HTML `<link>` elements to paste: cite-as from the DOI, type
Dataset + AboutPage, author from creator ORCIDs/IRIs, the license as an SPDX
URI, describedby for each metadata record and item for each download, with
types and profiles from encodingFormat. Every target is a URI (RFC 8288 link
targets are URI references): an IRI or a URL with spaces is percent-encoded,
and a value that is no URL at all (a licence sentence) is left out, with a
line saying what to publish instead.

What the page already publishes is never dropped or rewritten: the proposal is
the page's own links as it spells them, plus only what its Dataset gives and the
page lacks. A page that already names its cite-as or licence keeps it (a
disagreement is a finding of its own, not a silent replacement), and a link
counts as published whatever the case of its DOI. When nothing is missing the
proposal says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from urllib.parse import quote, urlsplit

from adapter.doi import doi_url, normalize_doi
from adapter.findings import Finding, FindingType, Severity
from adapter.jsonld.placeholders import not_a_url
from adapter.models import DatasetResult, Link
from adapter.signposting.datasetlinks import DatasetLinks, Resource, dataset_links
from adapter.signposting.identities import orcid, spdx_uri
from adapter.signposting.linkformat import format_link_header
from adapter.signposting.links import (
    SCHEMA_ABOUTPAGE,
    SCHEMA_DATASET,
    SIGNPOSTING_RELS,
    media_type,
    same_url,
    url_key,
)
from adapter.signposting.resources import format_uris, media_types

PROPOSAL = FindingType(
    "signposting/proposal",
    Severity.INFO,
    "The Link header and HTML <link> elements this landing page should carry, derived from "
    "its Dataset; paste them to fix the signposting findings above.",
)

# Format URIs of XML metadata standards: their records are application/xml.
_XML_FORMATS = ("isotc211.org", "eml", "datacite.org/schema", "fgdc", "loc.gov/mets", "ddi")


@dataclass(frozen=True, slots=True)
class Proposal:
    link_header: str  # the value of one Link header field, on one line: kept + added
    html_links: str  # <link> elements for <head>, one per line
    links: tuple[Link, ...] = ()
    left_out: tuple[str, ...] = ()  # values that are no URI, with what to publish instead
    added: tuple[Link, ...] = ()  # the links the page lacks (the rest it publishes already)
    kept: int = 0  # links the page publishes, kept as they are

    @property
    def nothing_missing(self) -> bool:
        return self.kept > 0 and not self.added

    def as_text(self) -> str:
        if self.nothing_missing:
            return (
                f"Nothing is missing: the page already publishes the {self.kept} link(s) its "
                "Dataset gives; keep them as they are."
            )
        added = "\n".join(f"  {_html(link)}" for link in self.added)
        intro = (
            f"Add {len(self.added)} link(s) to the {self.kept} the page publishes (kept as "
            f"they are, below in full):\n{added}\n\n"
            if self.kept
            else ""
        )
        text = f"{intro}Link: {self.link_header}\n\n{self.html_links}"
        if self.left_out:
            text += "\n\nNot proposed (a link target must be a URI):\n" + "\n".join(
                f"- {note}" for note in self.left_out
            )
        return text


def propose(
    dataset: DatasetResult,
    landing_url: str,
    facts: DatasetLinks | None = None,
    published: Sequence[Link] = (),
) -> Proposal:
    """`facts`: `dataset_links(dataset, landing_url)` when the caller has read them already;
    `published`: the signposts the page already gives about itself, kept as they are."""
    if facts is None:
        facts = dataset_links(dataset, landing_url)
    wanted, left_out = _links(facts, landing_url)
    kept = _published(published, landing_url)
    added = [link for link in wanted if not _covered(link, kept)]
    links = [*kept, *added]
    return Proposal(
        link_header=format_link_header(links, context=landing_url),
        html_links="\n".join(_html(link) for link in links),
        links=tuple(links),
        left_out=tuple(left_out),
        added=tuple(added),
        kept=len(kept),
    )


# relations a page names once: the page's own value stands (a disagreement is a finding)
_SINGLE = frozenset({"cite-as", "license"})


def link_key(href: str) -> str:
    """A target as compared: any spelling of one DOI alike, else the URL's `url_key`."""
    doi = normalize_doi(href)
    return f"doi:{doi}" if doi else url_key(href)


def _published(links: Sequence[Link], page: str) -> list[Link]:
    """The page's own signposts, each once, as the page spells them, about the page."""
    seen: set[tuple[str, str, str | None]] = set()
    out: list[Link] = []
    for link in links:
        key = (link.rel, link_key(link.href), media_type(link.type))
        if link.rel in SIGNPOSTING_RELS and key not in seen:
            seen.add(key)
            out.append(
                Link(href=link.href, rel=link.rel, anchor=page, source="header",
                     type=link.type, profile=link.profile)
            )  # fmt: skip
    return out


def _covered(link: Link, kept: Sequence[Link]) -> bool:
    same_rel = [k for k in kept if k.rel == link.rel]
    if link.rel in _SINGLE and same_rel:
        return True
    return any(link_key(k.href) == link_key(link.href) for k in same_rel)


def proposal_finding(
    dataset: DatasetResult,
    landing_url: str,
    facts: DatasetLinks | None = None,
    published: Sequence[Link] = (),
) -> Finding:
    proposal = propose(dataset, landing_url, facts, published)
    return PROPOSAL.at(
        landing_url,
        "Proposed signposting for this page, derived from its Dataset (HTTP header, then "
        f"the same as HTML for <head>):\n{proposal.as_text()}",
        "signposting",
    )


# What to publish instead of a value that is no URI, per relation.
_INSTEAD = {
    "license": "publish the licence as a URI in the Dataset's `license` (an SPDX or "
    "Creative Commons URI, e.g. https://spdx.org/licenses/CC-BY-4.0)",
    "describedby": "give the metadata record's `contentUrl` as an absolute URL",
    "item": "give the download's `contentUrl` as an absolute URL",
}
# RFC 3986 characters a URI may hold as they are (plus % of existing escapes)
_URI_SAFE = ":/?#[]@!$&'()*+,;=%~-._"
_NOT_URI = re.compile(r"[\s<>\"{}|\\^`]")


@lru_cache(maxsize=4096)
def as_uri(href: str) -> str | None:
    """`href` as an absolute http(s) URI (spaces and non-ASCII percent-encoded), or None.

    Remembered (pure): quote and the host's parse were most of the proposal's links."""
    text = href.strip()
    if not text.lower().startswith(("http://", "https://")):
        return None
    uri = quote(text, safe=_URI_SAFE)
    try:
        host = urlsplit(uri).hostname
    except ValueError:
        return None
    return uri if host and not _NOT_URI.search(uri) else None


def _links(facts: DatasetLinks, page: str) -> tuple[list[Link], list[str]]:
    out: list[Link] = []
    left_out: list[str] = []

    def link(rel: str, href: str, type_: str | None = None, profile: str | None = None) -> None:
        uri = None if not_a_url(href, page) else as_uri(href)
        if uri is None:
            instead = _INSTEAD.get(rel, "publish it as an absolute URL")
            left_out.append(f"rel={rel}: {href!r:.120} is not a URI; {instead}.")
            return
        out.append(
            Link(href=uri, rel=rel, anchor=page, source="header", type=type_, profile=profile)
        )

    cite = doi_url(facts.doi) if facts.doi else facts.id
    if cite and as_uri(cite) and not same_url(cite, page) and not not_a_url(cite, page):
        link("cite-as", cite)
    link("type", SCHEMA_DATASET)
    link("type", SCHEMA_ABOUTPAGE)
    for person in facts.people:
        href = _person_href(person.ids)
        if href and as_uri(href):
            link("author", href)
    if facts.licenses:
        first = facts.licenses[0].url
        link("license", spdx_uri(first) or first)
    for res in facts.metadata:
        type_, profile = _type_profile(res)
        link("describedby", res.url, type_, profile and as_uri(profile))
    for res in facts.parts:
        types = media_types(res.formats)
        link("item", res.url, types[0] if types else None)
    return list(dict.fromkeys(out)), list(dict.fromkeys(left_out))


def _person_href(ids: tuple[str, ...]) -> str | None:
    for value in ids:
        found = orcid(value)
        if found:
            return f"https://orcid.org/{found}"
    return next((v for v in ids if v.startswith(("http://", "https://"))), None)


def _type_profile(res: Resource) -> tuple[str | None, str | None]:
    types = media_types(res.formats)
    uris = format_uris(res.formats)
    type_ = types[0] if types else None
    if type_ is None and any(m in u.lower() for u in uris for m in _XML_FORMATS):
        type_ = "application/xml"
    return type_, uris[0] if uris else None


def html_link(link: Link) -> str:
    """One `<link>` element for `<head>`."""
    return _html(link)


def _html(link: Link) -> str:
    attrs = [f'rel="{escape(link.rel)}"', f'href="{escape(link.href)}"']
    if link.type:
        attrs.append(f'type="{escape(link.type)}"')
    if link.profile:
        attrs.append(f'profile="{escape(link.profile)}"')
    return f"<link {' '.join(attrs)}>"
