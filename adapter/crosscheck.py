"""The landing page's signposts held against its schema.org Dataset.

FAIR Signposting is the repository's own statement of what the object is
(cite-as), who made it (author), under which license, of which type and in
which collection; the Dataset says the same in schema.org. Where they
disagree, DataONE cannot tell which to trust. Pure: links and a Dataset in,
findings out (resource links are in `adapter.resourcecheck`).
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.datasetlinks import DatasetLinks, dataset_links
from adapter.doi import normalize_doi
from adapter.findings import Finding, FindingType, Severity
from adapter.framed import node_id, values
from adapter.identities import doi_of, iri_key, license_key, orcid, spdx_uri
from adapter.models import DatasetResult, Link
from adapter.resourcecheck import DESCRIBEDBY, ITEM, check_links, compare
from adapter.signposts import (
    SCHEMA_ABOUTPAGE,
    SCHEMA_DATASET,
    SIGNPOSTING_RELS,
    anchored_at,
    same_url,
    url_key,
)

ABSENT = FindingType(
    "signposting/absent",
    Severity.WARNING,
    "The landing page has no FAIR Signposting links (HTTP Link header, HTML <link> or link "
    "set); harvesters must guess its identifier, metadata and files. The report proposes them.",
)
SEVERAL_DATASETS = FindingType(
    "signposting/several-datasets",
    Severity.INFO,
    "The page holds several Datasets; its signposting was checked against the one named here.",
)
CITE_AS_MISSING = FindingType(
    "signposting/cite-as-missing",
    Severity.WARNING,
    "The landing page has signposting but no 'cite-as' link to its persistent identifier.",
)
CITE_AS_SEVERAL = FindingType(
    "signposting/cite-as-several",
    Severity.WARNING,
    "The landing page gives several different 'cite-as' targets; FAIR-SP allows exactly one.",
)
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
TYPE_MISSING = FindingType(
    "signposting/type-missing",
    Severity.WARNING,
    "The landing page has signposting but no 'type' link (https://schema.org/Dataset).",
)
TYPE_NOT_DATASET = FindingType(
    "signposting/type-not-dataset",
    Severity.WARNING,
    "The 'type' links do not include https://schema.org/Dataset, so the object is not "
    "announced as a dataset.",
)
TYPE_NO_ABOUTPAGE = FindingType(
    "signposting/type-aboutpage-missing",
    Severity.INFO,
    "The 'type' links do not include https://schema.org/AboutPage, which FAIR Signposting "
    "and COAR Notify use to mark a landing page.",
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
LICENSE_SEVERAL = FindingType(
    "signposting/license-several",
    Severity.WARNING,
    "The landing page gives several 'license' links; FAIR-SP allows at most one.",
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


def primary_dataset(
    datasets: Sequence[DatasetResult], links: Sequence[Link], pages: Sequence[str]
) -> tuple[DatasetResult | None, Finding | None]:
    """The Dataset the page's links are about.

    The one cite-as names; else the one whose url or @id is the page; else the first
    that is not a record about another Dataset (a CDIF catalog record has `about`).
    """
    if len(datasets) <= 1:
        return (datasets[0] if datasets else None), None
    cites = [x.href for x in anchored_at(links, pages) if x.rel == "cite-as"]

    def rank(d: DatasetResult) -> int:
        if any(_names(d, href) for href in cites):
            return 0
        own = [d.id, *(node_id(v) for v in values(d.framed, "url"))]
        if any(same_url(u, p) for u in own for p in pages):
            return 1
        return 3 if values(d.framed, "about") else 2

    chosen = min(datasets, key=rank)  # min keeps the first of equals
    label = chosen.doi or chosen.id or "the first Dataset"
    return chosen, SEVERAL_DATASETS.at(
        pages[-1], f"{len(datasets)} Datasets on the page; signposting checked against {label}"
    )


def _names(d: DatasetResult, href: str) -> bool:
    doi = doi_of(href)
    return bool((doi and doi == d.doi) or same_url(href, d.id))


def check_dataset(
    dataset: DatasetResult | None, links: Sequence[Link], pages: Sequence[str]
) -> tuple[list[Finding], list[Finding]]:
    """(page-level findings, findings about the Dataset)."""
    page = pages[-1]
    mine = [x for x in anchored_at(links, pages) if x.rel in SIGNPOSTING_RELS]
    if not [x for x in mine if x.rel != "linkset"]:
        return [ABSENT.at(page, where="signposting")], []
    page_findings = [*_cardinality(mine, page), *check_links(mine, page)]
    if dataset is None:
        return page_findings, []
    facts = dataset_links(dataset, page)
    found = [
        *_cite_as(mine, facts, page),
        *_types(mine, facts, page),
        *_authors(mine, facts, page),
        *_licenses(mine, facts, page),
        *_collections(mine, facts, page),
        *_describes(links, facts, pages),
        *compare(mine, facts.metadata, DESCRIBEDBY, page),
        *compare(mine, facts.parts, ITEM, page),
    ]
    return page_findings, found


def _hrefs(links: Sequence[Link], rel: str) -> list[str]:
    return list({url_key(x.href): x.href for x in links if x.rel == rel}.values())


def _cardinality(links: Sequence[Link], page: str) -> list[Finding]:
    out = []
    cites = _hrefs(links, "cite-as")
    if not cites:
        out.append(CITE_AS_MISSING.at(page, where="rel=cite-as"))
    elif len(cites) > 1:
        said = "; ".join(f"{h} ({_sources(links, 'cite-as', h)})" for h in cites)
        out.append(CITE_AS_SEVERAL.at(page, f"several cite-as targets: {said}", "rel=cite-as"))
    type_links = _hrefs(links, "type")
    if not type_links:
        out.append(TYPE_MISSING.at(page, where="rel=type"))
    else:
        keys = {iri_key(t) for t in type_links}
        if iri_key(SCHEMA_DATASET) not in keys:
            shown = ", ".join(type_links)
            out.append(TYPE_NOT_DATASET.at(page, f"type links are {shown}", "rel=type"))
        if iri_key(SCHEMA_ABOUTPAGE) not in keys:
            out.append(TYPE_NO_ABOUTPAGE.at(page, where="rel=type"))
    licenses = _hrefs(links, "license")
    if len({license_key(h) for h in licenses}) > 1:
        shown = ", ".join(licenses)
        out.append(LICENSE_SEVERAL.at(page, f"license links: {shown}", "rel=license"))
    return out


def _sources(links: Sequence[Link], rel: str, href: str) -> str:
    key = url_key(href)
    return ", ".join(
        dict.fromkeys(x.source for x in links if x.rel == rel and url_key(x.href) == key)
    )


def _cite_as(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    out = []
    for href in _hrefs(links, "cite-as"):
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


def _types(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    known = {iri_key(t) for t in [*facts.types, *facts.additional_types, SCHEMA_ABOUTPAGE]}
    return [
        TYPE_NOT_IN_DATASET.at(
            page, f"type {href} is not the Dataset's @type or additionalType", "$.additionalType"
        )
        for href in _hrefs(links, "type")
        if iri_key(href) not in known
    ]


def _authors(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    linked = {iri_key(h): h for h in _hrefs(links, "author")}
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


def _licenses(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    hrefs = _hrefs(links, "license")
    out = []
    mine = {license_key(r.url) for r in facts.licenses}
    for href in hrefs:
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
    if facts.licenses and not hrefs:
        out.append(
            LICENSE_NOT_LINKED.at(
                page,
                f"the Dataset's license {facts.licenses[0].url} has no license link",
                "$.license",
            )
        )
    return out


def _collections(links: Sequence[Link], facts: DatasetLinks, page: str) -> list[Finding]:
    known = {iri_key(r.url) for r in facts.collections}
    shown = ", ".join(r.url for r in facts.collections) or "none"
    return [
        COLLECTION_MISMATCH.at(
            page,
            f"collection {href} is not among the Dataset's collections ({shown})",
            "$.includedInDataCatalog",
        )
        for href in _hrefs(links, "collection")
        if iri_key(href) not in known
    ]


def _describes(links: Sequence[Link], facts: DatasetLinks, pages: Sequence[str]) -> list[Finding]:
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
