"""The landing page's signposts held against its schema.org Dataset.

FAIR Signposting is the repository's own statement of what the object is
(cite-as), who made it (author), under which license, of which type and in
which collection; the Dataset says the same in schema.org. Where they
disagree, DataONE cannot tell which to trust. Pure: links and a Dataset in,
findings out (each relation's comparison is in `adapter.signposting.relations`, resource
links in `adapter.signposting.resources`).
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.findings import Finding, FindingType, Severity
from adapter.jsonld.framed import node_id, values
from adapter.models import DatasetResult, Link
from adapter.signposting import relations as relationchecks
from adapter.signposting.datasetlinks import DatasetLinks, dataset_links
from adapter.signposting.identities import doi_of, iri_key, license_key
from adapter.signposting.links import (
    SCHEMA_ABOUTPAGE,
    SCHEMA_DATASET,
    SIGNPOSTING_RELS,
    anchored_at,
    same_url,
    url_key,
)
from adapter.signposting.relations import hrefs
from adapter.signposting.resources import DESCRIBEDBY, ITEM, check_links, compare

ABSENT = FindingType(
    "signposting/absent",
    Severity.WARNING,
    "The landing page has no FAIR Signposting links (HTTP Link header, HTML <link> or link "
    "set); harvesters must guess its identifier, metadata and files. When the page has a "
    "Dataset, the report proposes the links (signposting/proposal).",
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
LICENSE_SEVERAL = FindingType(
    "signposting/license-several",
    Severity.WARNING,
    "The landing page gives several 'license' links; FAIR-SP allows at most one.",
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


def crosscheck_dataset(
    dataset: DatasetResult | None,
    links: Sequence[Link],
    pages: Sequence[str],
    facts: DatasetLinks | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """(page-level findings, findings about the Dataset).

    `facts` is `dataset_links(dataset, pages[-1])` when the caller has it already
    (the proposal needs the same), so it is read once per page.
    """
    page = pages[-1]
    mine = [x for x in anchored_at(links, pages) if x.rel in SIGNPOSTING_RELS]
    if not [x for x in mine if x.rel != "linkset"]:
        said = "The landing page has no FAIR Signposting links (HTTP Link header, HTML <link> "
        said += "or link set); harvesters must guess its identifier, metadata and files."
        if dataset is not None:
            said += " The proposal below, derived from its Dataset, gives the links to add."
        return [ABSENT.at(page, said, "signposting")], []
    page_findings = [*_cardinality(mine, page), *check_links(mine, page)]
    if dataset is None:
        return page_findings, []
    if facts is None:
        facts = dataset_links(dataset, page)
    found = [
        *relationchecks.cite_as(mine, facts, page),
        *relationchecks.types(mine, facts, page),
        *relationchecks.authors(mine, facts, page),
        *relationchecks.licenses(mine, facts, page),
        *relationchecks.collections(mine, facts, page),
        *relationchecks.describes(links, facts, pages),
        *compare(mine, facts.metadata, DESCRIBEDBY, page),
        *compare(mine, facts.parts, ITEM, page),
    ]
    return page_findings, found


def _cardinality(links: Sequence[Link], page: str) -> list[Finding]:
    out = []
    cites = hrefs(links, "cite-as")
    if not cites:
        out.append(CITE_AS_MISSING.at(page, where="rel=cite-as"))
    elif len(cites) > 1:
        said = "; ".join(f"{h} ({_sources(links, 'cite-as', h)})" for h in cites)
        out.append(CITE_AS_SEVERAL.at(page, f"several cite-as targets: {said}", "rel=cite-as"))
    type_links = hrefs(links, "type")
    if not type_links:
        out.append(TYPE_MISSING.at(page, where="rel=type"))
    else:
        keys = {iri_key(t) for t in type_links}
        if keys == {iri_key(SCHEMA_ABOUTPAGE)}:  # the landing page marked: Dataset not said
            out.append(
                TYPE_MISSING.at(
                    page,
                    "The page's only 'type' link is AboutPage (right for a landing page); add "
                    f'<{SCHEMA_DATASET}>; rel="type" beside it for the object it describes.',
                    "rel=type",
                )
            )
        elif iri_key(SCHEMA_DATASET) not in keys:
            shown = ", ".join(type_links)
            out.append(TYPE_NOT_DATASET.at(page, f"type links are {shown}", "rel=type"))
        if iri_key(SCHEMA_ABOUTPAGE) not in keys:
            out.append(TYPE_NO_ABOUTPAGE.at(page, where="rel=type"))
    licenses = hrefs(links, "license")
    if len({license_key(h) for h in licenses}) > 1:
        shown = ", ".join(licenses)
        out.append(LICENSE_SEVERAL.at(page, f"license links: {shown}", "rel=license"))
    return out


def _sources(links: Sequence[Link], rel: str, href: str) -> str:
    key = url_key(href)
    return ", ".join(
        dict.fromkeys(x.source for x in links if x.rel == rel and url_key(x.href) == key)
    )
