"""The signposting a landing page should carry, derived from its Dataset.

When links are missing or wrong, a repository manager gets the exact `Link`
header and HTML `<link>` elements to paste: cite-as from the DOI, type
Dataset + AboutPage, author from creator ORCIDs/IRIs, the license as an SPDX
URI, describedby for each metadata record and item for each download, with
types and profiles from encodingFormat.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from adapter.doi import doi_url
from adapter.findings import Finding, FindingType, Severity
from adapter.models import DatasetResult, Link
from adapter.signposting.datasetlinks import DatasetLinks, Resource, dataset_links
from adapter.signposting.identities import orcid, spdx_uri
from adapter.signposting.linkformat import format_link_header
from adapter.signposting.links import SCHEMA_ABOUTPAGE, SCHEMA_DATASET, same_url
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
    link_header: str  # the value of one Link header field, on one line
    html_links: str  # <link> elements for <head>, one per line
    links: tuple[Link, ...] = ()

    def as_text(self) -> str:
        return f"Link: {self.link_header}\n\n{self.html_links}"


def propose(
    dataset: DatasetResult, landing_url: str, facts: DatasetLinks | None = None
) -> Proposal:
    """`facts`: `dataset_links(dataset, landing_url)` when the caller has read them already."""
    if facts is None:
        facts = dataset_links(dataset, landing_url)
    links = _links(facts, landing_url)
    return Proposal(
        link_header=format_link_header(links, context=landing_url),
        html_links="\n".join(_html(link) for link in links),
        links=tuple(links),
    )


def proposal_finding(
    dataset: DatasetResult, landing_url: str, facts: DatasetLinks | None = None
) -> Finding:
    proposal = propose(dataset, landing_url, facts)
    return PROPOSAL.at(
        landing_url,
        "Proposed signposting for this page, derived from its Dataset (HTTP header, then "
        f"the same as HTML for <head>):\n{proposal.as_text()}",
        "signposting",
    )


def _links(facts: DatasetLinks, page: str) -> list[Link]:
    def link(rel: str, href: str, type_: str | None = None, profile: str | None = None) -> Link:
        return Link(href=href, rel=rel, anchor=page, source="header", type=type_, profile=profile)

    out: list[Link] = []
    cite = doi_url(facts.doi) if facts.doi else facts.id
    if cite and cite.startswith(("http://", "https://")) and not same_url(cite, page):
        out.append(link("cite-as", cite))
    out += [link("type", SCHEMA_DATASET), link("type", SCHEMA_ABOUTPAGE)]
    for person in facts.people:
        href = _person_href(person.ids)
        if href:
            out.append(link("author", href))
    if facts.licenses:
        first = facts.licenses[0].url
        out.append(link("license", spdx_uri(first) or first))
    for res in facts.metadata:
        type_, profile = _type_profile(res)
        out.append(link("describedby", res.url, type_, profile))
    for res in facts.parts:
        types = media_types(res.formats)
        out.append(link("item", res.url, types[0] if types else None))
    return list(dict.fromkeys(out))


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


def _html(link: Link) -> str:
    attrs = [f'rel="{escape(link.rel)}"', f'href="{escape(link.href)}"']
    if link.type:
        attrs.append(f'type="{escape(link.type)}"')
    if link.profile:
        attrs.append(f'profile="{escape(link.profile)}"')
    return f"<link {' '.join(attrs)}>"
