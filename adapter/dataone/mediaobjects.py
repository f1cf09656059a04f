"""DataONE's rules for a Dataset's metadata copies and downloads (`encoding`,
`subjectOf`, `distribution`), as findings on a framed Dataset.

DataONE can register a metadata record found through `encoding` (or the
science-on-schema.org `subjectOf` link) as its own object, but only under a
registered METADATA format id, so `encodingFormat` must name one. The schema.org
property names are case-sensitive: `contentURL` and `fileFormat` are read (so
the report still shows the values) and flagged with the right name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapter.findings import Finding, FindingType, Severity
from adapter.jsonld.framed import first_literal, literal, node_id, types, values
from adapter.jsonld.placeholders import not_a_url
from adapter.models import MediaObjectRef

# METADATA format ids of DataONE's object format list (DataONEorg/object-formats,
# objectFormatListV2.xml; specs.md 1.5). A metadata copy is only registered under one.
METADATA_FORMAT_IDS = frozenset(
    {
        "science-on-schema.org/Dataset;ld+json",
        "http://www.isotc211.org/2005/gmd",
        "http://www.isotc211.org/2005/gmd-noaa",
        "http://www.isotc211.org/2005/gmd-pangaea",
        "INCITS-453-2009",
        "eml://ecoinformatics.org/eml-2.0.0",
        "eml://ecoinformatics.org/eml-2.0.1",
        "eml://ecoinformatics.org/eml-2.1.0",
        "eml://ecoinformatics.org/eml-2.1.1",
        "https://eml.ecoinformatics.org/eml-2.2.0",
        "http://datacite.org/schema/kernel-3.0",
        "http://datacite.org/schema/kernel-3.1",
        "http://datacite.org/schema/kernel-4.0",
        "http://datacite.org/schema/kernel-4.1",
        "FGDC-STD-001-1998",
        "FGDC-STD-001.1-1999",
        "FGDC-STD-001.2-1999",
        "http://www.esri.com/metadata/esriprof80.dtd",
        "http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2",
        "http://www.loc.gov/METS/",
        "http://rs.tdwg.org/dwc/xsd/simpledarwincore/",
        "http://digir.net/schema/conceptual/darwin/2003/1.0/darwin2.xsd",
        "http://datadryad.org/profile/v3.1",
        "http://purl.org/dryad/terms/",
        "ddi:codebook:2_5",
        "http://www.icpsr.umich.edu/DDI",
        "http://purl.org/ornl/schema/mercury/terms/v1.0",
        "http://ns.dataone.org/metadata/schema/onedcx/v1.0",
        "http://www.openarchives.org/OAI/2.0/oai_dc/",
        "https://purl.dataone.org/collections-1.0.0",
        "https://purl.dataone.org/portals-1.0.0",
        "https://purl.dataone.org/collections-1.1.0",
        "https://purl.dataone.org/portals-1.1.0",
    }
)

WRONG_PROPERTY = FindingType(
    "dataone/wrong-property",
    Severity.WARNING,
    "A download or metadata link gives its file or format under another property than "
    "science-on-schema.org's contentUrl and encodingFormat: `url` (schema.org: a page about "
    "the item, not the file), `fileFormat` (defined by schema.org, but not what "
    "science-on-schema.org and DataONE read) or `contentURL` (schema.org names are "
    "case-sensitive). Harvesters that follow science-on-schema.org miss it.",
)
DANGLING_REFERENCE = FindingType(
    "dataone/dangling-reference",
    Severity.WARNING,
    "A distribution or encoding entry is only a reference (@id) to a node the page does not "
    "describe, so it gives no contentUrl or encodingFormat; describe the DataDownload or "
    "MediaObject on the page.",
)
ENCODING_MISSING = FindingType(
    "dataone/encoding-missing",
    Severity.WARNING,
    "The Dataset links no metadata record (no `encoding` MediaObject and no `subjectOf` "
    "DataDownload), so DataONE can only keep the JSON-LD itself.",
)
ENCODING_INCOMPLETE = FindingType(
    "dataone/encoding-incomplete",
    Severity.WARNING,
    "A metadata link lacks contentUrl, encodingFormat or dateModified, so DataONE cannot "
    "fetch it, register it under a format, or tell when it changed.",
)
ENCODING_FORMAT_UNKNOWN = FindingType(
    "dataone/encoding-format-unknown",
    Severity.WARNING,
    "A metadata link's encodingFormat is not a DataONE metadata format id "
    "(such as http://www.isotc211.org/2005/gmd), so DataONE cannot register that record.",
)
DISTRIBUTION_MISSING = FindingType(
    "dataone/distribution-missing",
    Severity.INFO,
    "The Dataset lists no `distribution`, so there is no data download to point to.",
)
NOT_A_URL = FindingType(
    "dataone/not-a-url",
    Severity.WARNING,
    "A value where a URL belongs (`contentUrl`, `url`, `@id`) is a placeholder such as "
    '"see landing page", "N/A" or "TBD", or a `javascript:` or `data:` address: it is no '
    "web address, so it meets no requirement and is never proposed as a link. Give the "
    "absolute http(s) URL, or leave the property out.",
)
DISTRIBUTION_INCOMPLETE = FindingType(
    "dataone/distribution-incomplete",
    Severity.WARNING,
    "A distribution entry is not a DataDownload with contentUrl and encodingFormat "
    "(and a usable identifier where one is given).",
)


def encoding_refs(
    dataset: Mapping[str, Any], url: str
) -> tuple[list[MediaObjectRef], list[Finding]]:
    """The metadata links of `encoding` and of `subjectOf` (metadata-like entries only)."""
    refs: list[MediaObjectRef] = []
    findings: list[Finding] = []
    for prop in ("encoding", "subjectOf"):
        items = values(dataset, prop)
        for i, item in enumerate(items):
            if prop == "subjectOf" and not _is_media(item):
                continue  # subjectOf also points at articles, events, ...
            where = _where(prop, i, len(items))
            ref, found = _read(item, prop, where, url)
            refs.append(ref)
            findings.extend(found)
            findings.extend(_check_metadata(ref, url))
    if not refs:
        findings.append(ENCODING_MISSING.at(url, where="$.encoding"))
    return refs, findings


def distribution_refs(
    dataset: Mapping[str, Any], url: str
) -> tuple[list[MediaObjectRef], list[Finding]]:
    """The `distribution` entries, each checked as a DataDownload."""
    items = values(dataset, "distribution")
    if not items:
        return [], [DISTRIBUTION_MISSING.at(url, where="$.distribution")]
    refs: list[MediaObjectRef] = []
    findings: list[Finding] = []
    for i, item in enumerate(items):
        where = _where("distribution", i, len(items))
        ref, found = _read(item, "distribution", where, url)
        refs.append(ref)
        findings.extend(found)
        missing = _missing(ref, ("contentUrl", "encodingFormat"))
        if (
            isinstance(item, Mapping)
            and ref.reference is None
            and "DataDownload" not in types(item)
        ):
            kind = ", ".join(types(item)) or "no @type"
            missing.append(f"@type DataDownload (it has {kind})")
        if isinstance(item, Mapping) and "identifier" in item and ref.identifier is None:
            missing.append("a usable identifier (the one given is empty)")
        if missing:
            findings.append(
                DISTRIBUTION_INCOMPLETE.at(
                    url, f"The distribution at {where} lacks {_and(missing)}.", where
                )
            )
    return refs, findings


def is_metadata_format(encoding_format: str) -> bool:
    return encoding_format.strip() in METADATA_FORMAT_IDS


def _check_metadata(ref: MediaObjectRef, url: str) -> list[Finding]:
    out: list[Finding] = []
    missing = _missing(ref, ("contentUrl", "encodingFormat", "dateModified"))
    if missing:
        out.append(
            ENCODING_INCOMPLETE.at(
                url, f"The metadata link at {ref.where} lacks {_and(missing)}.", ref.where
            )
        )
    if ref.encoding_format and not any(is_metadata_format(f) for f in ref.encoding_format):
        out.append(
            ENCODING_FORMAT_UNKNOWN.at(
                url,
                f"The metadata link at {ref.where} has encodingFormat "
                f"{', '.join(ref.encoding_format)}; none is a DataONE metadata format id "
                "(e.g. http://www.isotc211.org/2005/gmd or https://eml.ecoinformatics.org/"
                "eml-2.2.0), so DataONE cannot register that record.",
                f"{ref.where}.encodingFormat",
            )
        )
    return out


def _is_media(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    if {"DataDownload", "MediaObject"} & set(types(item)):
        return True
    return any(k in item for k in ("encodingFormat", "contentUrl", "contentURL"))


def _read(item: Any, prop: str, where: str, url: str) -> tuple[MediaObjectRef, list[Finding]]:
    """A MediaObjectRef from one entry, reading the other properties too (each is named)."""
    if not isinstance(item, Mapping):
        # a plain URL written as the value itself: only a target
        return MediaObjectRef(node_id(item), (), None, None, prop, where, link_property=prop), []
    if set(item) <= {"@id"}:
        # a node the page does not describe (framing embeds every node that it does)
        ref = MediaObjectRef(None, (), None, None, prop, where, reference=node_id(item))
        return ref, [_dangling(url, where, prop, node_id(item))]
    findings: list[Finding] = []
    content_url, link_property = _iri(item, "contentUrl"), "contentUrl"
    page_url = _iri(item, "url")
    for wrong in ("contentURL", "url"):
        if content_url is None and _iri(item, wrong):
            content_url, link_property = _iri(item, wrong), wrong
            findings.append(_wrong(url, where, wrong))
    placeholder = not_a_url(content_url, url)
    if placeholder is not None:
        findings.append(not_a_url_finding(url, f"{where}.{link_property}", placeholder))
        content_url = None  # not a link: the requirement it was meant for is not met
    formats = [f for f in (literal(v) for v in values(item, "encodingFormat")) if f]
    format_property = "encodingFormat"
    if not formats:
        formats = [f for f in (literal(v) or node_id(v) for v in values(item, "fileFormat")) if f]
        if formats:
            format_property = "fileFormat"
            findings.append(_wrong(url, where, "fileFormat"))
    ident = None
    for v in values(item, "identifier"):
        ident = literal(v) or (first_literal(v, "value") if isinstance(v, Mapping) else None)
        if ident and ident.strip():
            break
        ident = None
    ref = MediaObjectRef(
        content_url,
        tuple(formats),
        ident,
        first_literal(item, "dateModified"),
        prop,
        where,
        link_property=link_property,
        format_property=format_property,
        page_url=page_url,
    )
    return ref, findings


_WHY = {
    "url": "schema.org's `url` names a page about the file; science-on-schema.org and "
    "DataONE take the file itself from `contentUrl`",
    "fileFormat": "schema.org defines `fileFormat`, but science-on-schema.org and DataONE "
    "read the format from `encodingFormat`",
    "contentURL": "schema.org has no `contentURL`: the property is `contentUrl` (names are "
    "case-sensitive)",
}
_RIGHT = {"url": "contentUrl", "contentURL": "contentUrl", "fileFormat": "encodingFormat"}


def not_a_url_finding(url: str, where: str, value: str) -> Finding:
    return NOT_A_URL.at(
        url,
        f"{where} is {value[:120]!r}, which is not a URL (a placeholder or a non-web "
        "address): it meets no requirement and is not proposed as a link. Give the absolute "
        "http(s) URL, or leave the property out.",
        where,
    )


def _wrong(url: str, where: str, wrong: str) -> Finding:
    return WRONG_PROPERTY.at(
        url,
        f"The entry at {where} gives `{wrong}` and no `{_RIGHT[wrong]}`: {_WHY[wrong]}, so "
        f"harvesters that follow science-on-schema.org miss it. Add `{_RIGHT[wrong]}`.",
        f"{where}.{wrong}",
    )


def _dangling(url: str, where: str, prop: str, target: str | None) -> Finding:
    return DANGLING_REFERENCE.at(
        url,
        f"The {prop} entry at {where} is only a reference to {target}, a node the page does "
        "not describe, so it gives no contentUrl or encodingFormat; describe it on the page "
        "(a DataDownload with contentUrl and encodingFormat).",
        where,
    )


def _iri(item: Mapping[str, Any], prop: str) -> str | None:
    for v in values(item, prop):
        found = literal(v) or node_id(v)
        if found and found.strip():
            return found.strip()
    return None


def _missing(ref: MediaObjectRef, names: tuple[str, ...]) -> list[str]:
    have = {
        "contentUrl": ref.content_url,
        "encodingFormat": ref.encoding_format,
        "dateModified": ref.date_modified,
    }
    return [n for n in names if not have[n]]


def _where(prop: str, index: int, count: int) -> str:
    return f"$.{prop}[{index}]" if count > 1 else f"$.{prop}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
