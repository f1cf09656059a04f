"""Each signposting relation held against what the Dataset says of it.

One comparison per relation family: cite-as, type, author, license, collection and
describes. Pure: the page's own links and the Dataset's `DatasetLinks` in, findings out;
`adapter.signposting.crosscheck` decides which links and which Dataset.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.doi import normalize_doi
from adapter.findings import Finding, FindingType, Severity
from adapter.models import Link
from adapter.signposting.datasetlinks import DatasetLinks
from adapter.signposting.identities import doi_of, iri_key, license_key, orcid, spdx_uri
from adapter.signposting.links import SCHEMA_ABOUTPAGE, url_key

CITE_AS_MISMATCH = FindingType(
    "signposting/cite-as-mismatch",
    Severity.WARNING,
    "The 'cite-as' link names a different identifier than the Dataset (its DOI or @id).",
)
CITE_AS_DOI_ONLY = FindingType(
    "signposting/cite-as-doi-only",
    Severity.WARNING,
    "The 'cite-as' link gives a DOI that the Dataset's JSON-LD does not carry; put it in "
    "the Dataset's identifier so DataONE can use it.",
)
CITE_AS_FORM = FindingType(
    "signposting/cite-as-form",
    Severity.INFO,
    "The 'cite-as' DOI is not written as its resolvable https://doi.org/ URL.",
)
TYPE_NOT_IN_DATASET = FindingType(
    "signposting/type-not-in-dataset",
    Severity.INFO,
    "A 'type' link names a class the Dataset has neither as @type nor as additionalType.",
)
AUTHOR_NOT_IN_DATASET = FindingType(
    "signposting/author-not-in-dataset",
    Severity.WARNING,
    "An 'author' link names someone who is not among the Dataset's creators/authors "
    "(compared by ORCID or IRI).",
)
AUTHOR_NOT_LINKED = FindingType(
    "signposting/author-not-linked",
    Severity.INFO,
    "A creator of the Dataset has an identifier (ORCID or other IRI) but no 'author' link.",
)
LICENSE_MISMATCH = FindingType(
    "signposting/license-mismatch",
    Severity.WARNING,
    "The 'license' link names a different license than the Dataset's license.",
)
LICENSE_NOT_LINKED = FindingType(
    "signposting/license-not-linked",
    Severity.INFO,
    "The Dataset has a license but the landing page has no 'license' link.",
)
LICENSE_FORM = FindingType(
    "signposting/license-form",
    Severity.INFO,
    "The 'license' link is not the SPDX license URI (https://spdx.org/licenses/<id>, without "
    ".html) that FAIR-SP recommends.",
)
COLLECTION_MISMATCH = FindingType(
    "signposting/collection-mismatch",
    Severity.WARNING,
    "A 'collection' link names a collection the Dataset does not (includedInDataCatalog, "
    "isPartOf, relatedLink IsPartOf).",
)
DESCRIBES_MISMATCH = FindingType(
    "signposting/describes-mismatch",
    Severity.WARNING,
    "A 'describes' link does not point back at this Dataset (its landing page or @id).",
)


def hrefs(links: Sequence[Link], rel: str) -> list[str]:
    return list({url_key(x.href): x.href for x in links if x.rel == rel}.values())


def cite_as(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    out = []
    for href in hrefs(links, "cite-as"):
        doi = doi_of(href)
        if doi and not href.startswith("https://doi.org/"):
            out.append(
                CITE_AS_FORM.at(
                    page, f"cite-as {href}: write it as https://doi.org/{doi}", "rel=cite-as"
                )
            )
        if facts.doi and doi != facts.doi:
            out.append(
                CITE_AS_MISMATCH.at(
                    page, f"cite-as {href} is not the Dataset's DOI {facts.doi}", "$.identifier"
                )
            )
        elif doi and facts.doi is None:
            out.append(
                CITE_AS_DOI_ONLY.at(
                    page,
                    f"cite-as gives DOI {doi}; the Dataset's identifier has no DOI",
                    "$.identifier",
                )
            )
        id_doi = normalize_doi(facts.id) if facts.id else None
        if facts.id and id_doi and id_doi != doi and id_doi != facts.doi:
            out.append(
                CITE_AS_MISMATCH.at(
                    page, f"cite-as {href} is not the Dataset's @id {facts.id}", "$['@id']"
                )
            )
        elif facts.id and not id_doi and not doi and not facts.doi:
            known = [facts.id, *facts.identifier_urls, *facts.same_as]
            if not any(iri_key(k) == iri_key(href) for k in known):
                out.append(
                    CITE_AS_MISMATCH.at(
                        page,
                        f"cite-as {href} is neither the Dataset's @id {facts.id} nor one of "
                        "its identifiers",
                        "$['@id']",
                    )
                )
    return out


def types(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    known = {iri_key(t) for t in [*facts.types, *facts.additional_types, SCHEMA_ABOUTPAGE]}
    return [
        TYPE_NOT_IN_DATASET.at(
            page, f"type {href} is not the Dataset's @type or additionalType", "$.additionalType"
        )
        for href in hrefs(links, "type")
        if iri_key(href) not in known
    ]


def authors(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    linked = {iri_key(h): h for h in hrefs(links, "author")}
    people = {iri_key(i): p for p in facts.people for i in p.ids}
    out = [
        AUTHOR_NOT_IN_DATASET.at(
            page, f"author {href} is not a creator of the Dataset" + _orcid_hint(href), "$.creator"
        )
        for key, href in linked.items()
        if key not in people
    ]
    for person in facts.people:
        if person.ids and not any(iri_key(i) in linked for i in person.ids):
            name = person.name or person.ids[0]
            out.append(
                AUTHOR_NOT_LINKED.at(
                    page,
                    f"{name} ({person.ids[0]}, {person.where}) has no author link",
                    person.where,
                )
            )
    return out


def _orcid_hint(href: str) -> str:
    found = orcid(href)
    return f" (ORCID {found})" if found else ""


def licenses(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    given = hrefs(links, "license")
    out = []
    mine = {license_key(r.url) for r in facts.licenses}
    for href in given:
        better = spdx_uri(href)
        if better and better != href:
            out.append(LICENSE_FORM.at(page, f"license {href}: use {better}", "rel=license"))
        if mine and license_key(href) not in mine:
            shown = ", ".join(r.url for r in facts.licenses)
            out.append(
                LICENSE_MISMATCH.at(
                    page, f"license link {href}; the Dataset's license is {shown}", "$.license"
                )
            )
    if facts.licenses and not given:
        out.append(
            LICENSE_NOT_LINKED.at(
                page,
                f"the Dataset's license {facts.licenses[0].url} has no license link",
                "$.license",
            )
        )
    return out


def collections(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    known = {iri_key(r.url) for r in facts.collections}
    shown = ", ".join(r.url for r in facts.collections) or "none"
    return [
        COLLECTION_MISMATCH.at(
            page,
            f"collection {href} is not among the Dataset's collections ({shown})",
            "$.includedInDataCatalog",
        )
        for href in hrefs(links, "collection")
        if iri_key(href) not in known
    ]


def describes(links: Sequence[Link], facts: DatasetLinks, pages: Sequence[str]) -> list[Finding]:
    """`describes` from the page or from its metadata records must name this Dataset."""
    page = pages[-1]
    targets = {iri_key(u) for u in [*pages, *facts.urls, *facts.about] if u}
    if facts.id:
        targets.add(iri_key(facts.id))
    if facts.doi:
        targets.add(f"doi:{facts.doi}")
    records = {url_key(u) for u in [*(r.url for r in facts.metadata), *facts.metadata_ids]}
    records |= {url_key(p) for p in pages}
    out = []
    for link in links:
        if link.rel != "describes" or url_key(link.anchor) not in records:
            continue
        if iri_key(link.href) not in targets:
            out.append(
                DESCRIBES_MISMATCH.at(
                    page,
                    f"{link.anchor} says it describes {link.href}, which is not this Dataset "
                    f"({facts.id or page})",
                    f"{link.source} rel=describes",
                )
            )
    return list(dict.fromkeys(out))
