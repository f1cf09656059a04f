"""A `DatasetReport` as programs read it: JSON, in a schema that only grows.

JSON schema, ``schema_version`` 1 (stable: fields are only ever added; a
removal or a change of meaning bumps the version)::

    {
      "schema_version": 1,
      "url": str,                 # as given
      "final_url": str | null,    # after redirects (null: never answered)
      "status": int | null,       # HTTP status of the landing page
      "not_modified": bool,       # a conditional GET answered 304
      "rendered": bool,           # read from the DOM a browser rendered (its JavaScript
                                  # run: --render, rendering.mode); render/ findings say how
      "harvestable": bool,        # no page-level error and at least one clean Dataset
      "verdict": str,             # "harvestable" | "not-harvestable" | "could-not-check"
                                  # (the landing page never answered: nothing was checked)
      "profile": str,             # the requirement profile that decided `harvestable`:
                                  # "dataone" | "soso" | "mnlite" | "custom"
      "path": [str],              # every URL visited to reach the Dataset, in order
      "summary": {"datasets": int, "errors": int, "warnings": int, "info": int},
      "datasets": [{
        "id": str | null,         # the Dataset's @id
        "name": str | null,
        "block": int | null,      # the page's JSON-LD block it came from (1-based)
        "where": str | null,      # where in that block: "block 2 $['@graph'][1]"
        "doi": str | null,        # canonical lowercase 10.x/y
        "harvestable": bool,
        "identifiers": [str],     # every identifier as published
        "persistent_identifiers": [{"scheme": "doi"|"ark"|"handle"|"urn"|"http",
                                    "value": str,      # its series form: doi:10.x/y,
                                                       # ark:/12345/x, hdl:p/s, ...
                                    "published": str}],
        "encoding": [MediaObject],       # encoding and subjectOf metadata links
        "distributions": [MediaObject],
        "checklist": [CheckItem], # the profile's requirements, in the profile's order
        "dataone_index": {str: str | [str]},  # the Solr fields DataONE's indexer would fill
                                  # ("title", "abstract", "author", "origin", "pubDate",
                                  # "keywords", "licenseUrl", "northBoundCoord", ...): a string
                                  # where it keeps one value, a list where it keeps every
                                  # value; absent where the index would be empty
        "findings": [Finding]     # about this Dataset
      }],
      "signposts": [Link],        # FAIR Signposting relations only (cite-as, describedby,
                                  # item, license, type, author, collection, describes,
                                  # linkset), from every source
      "other_links": [Link],      # every other typed link (stylesheet, icon, canonical,
                                  # alternate, schema.DC, ...), kept apart
      "findings": [Finding]       # about the page (fetch, extract, normalize, links)
    }
    MediaObject = {"property": "encoding"|"subjectOf"|"distribution",
                   "contentUrl": str|null,     # the entry's contentUrl, as published
                   "encodingFormat": [str],    # the entry's encodingFormat, as published
                   "url": str|null,            # the entry's url (a page about the file)
                   "fileFormat": [str],        # the entry's fileFormat, when it has no
                                               # encodingFormat
                   "link": str|null,           # the URL the adapter reads the entry by
                   "linkProperty": str|null,   # where `link` came from: "contentUrl",
                                               # "contentURL", "url", or the property
                                               # itself (a plain URL as the value)
                   "reference": str|null,      # the @id of a node the page does not
                                               # describe (a dataone/dangling-reference)
                   "identifier": str|null, "dateModified": str|null, "where": str}
    CheckItem = {"requirement": str,   # its name: doi-identifier, encoding, license, ...
                 "label": str,         # what it asks, in words
                 "blocking": bool,     # unmet, the Dataset is not harvestable (else advice)
                 "met": bool,
                 "codes": [str]}       # finding codes that explain it (unmet: why; met:
                                       # advice beside it); dataone/profile-unmet where the
                                       # Dataset itself lacks it
    Link = {"rel", "href", "type", "profile", "anchor", "source"}  (strings; type/profile
            may be null)
    Finding = {"code": str, "severity": "error"|"warning"|"info", "message": str,
               "where": str|null, "url": str}

A finding's or MediaObject's `where` is a JSON path into the framed Dataset
(``$.identifier[1].value``), a block of the page (``block 2``) or a link; a
Dataset's `where` is its block and the JSON path of the Dataset in the
publisher's block; one read from the JSON-LD document the page links to says
``document <url> $`` (its `block` is 1, the document itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from adapter.dataone.profiles import as_json as checklist_json
from adapter.jsonld.framed import first_literal
from adapter.models import DatasetReport, DatasetResult, Link, MediaObjectRef
from adapter.report.verdicts import verdict
from adapter.signposting.links import SIGNPOSTING_RELS

SCHEMA_VERSION = 1


def to_json(report: DatasetReport) -> dict[str, Any]:
    """The report as plain JSON values, in the documented schema."""
    every = report.all_findings()
    return {
        "schema_version": SCHEMA_VERSION,
        "url": report.url,
        "final_url": report.final_url,
        "status": report.status,
        "not_modified": report.not_modified,
        "rendered": report.rendered,
        "harvestable": report.harvestable,
        "verdict": verdict(report),
        "profile": report.profile,
        "path": list(report.path),
        "summary": {
            "datasets": len(report.datasets),
            "errors": sum(f.severity == "error" for f in every),
            "warnings": sum(f.severity == "warning" for f in every),
            "info": sum(f.severity == "info" for f in every),
        },
        "datasets": [_dataset(d) for d in report.datasets],
        "signposts": [_link(x) for x in report.signposts if x.rel in SIGNPOSTING_RELS],
        "other_links": [_link(x) for x in report.signposts if x.rel not in SIGNPOSTING_RELS],
        "findings": [f.as_dict() for f in report.findings],
    }


def _dataset(d: DatasetResult) -> dict[str, Any]:
    return {
        "id": d.id,
        "name": first_literal(d.framed, "name"),
        "block": d.block,
        "where": d.where,
        "doi": d.doi,
        "harvestable": d.harvestable,
        "identifiers": list(d.identifiers),
        "persistent_identifiers": [
            {"scheme": p.scheme, "value": p.value, "published": p.published} for p in d.pids
        ],
        "encoding": _media(d.encoding),
        "distributions": _media(d.distributions),
        "checklist": checklist_json(d.checklist),
        "dataone_index": {
            k: v if isinstance(v, str) else list(v) for k, v in d.dataone_index.items()
        },
        "findings": [f.as_dict() for f in d.findings],
    }


def _media(refs: Iterable[MediaObjectRef]) -> list[dict[str, Any]]:
    """Each value under the property the page used: a `url` is never shown as a contentUrl."""
    return [
        {
            "property": r.property,
            "contentUrl": r.content_url if r.link_property == "contentUrl" else None,
            "encodingFormat": list(r.encoding_format)
            if r.format_property == "encodingFormat"
            else [],
            "url": r.page_url,
            "fileFormat": list(r.encoding_format) if r.format_property == "fileFormat" else [],
            "link": r.content_url,
            "linkProperty": r.link_property if r.content_url else None,
            "reference": r.reference,
            "identifier": r.identifier,
            "dateModified": r.date_modified,
            "where": r.where,
        }
        for r in refs
    ]


def _link(link: Link) -> dict[str, Any]:
    return {
        "rel": link.rel,
        "href": link.href,
        "type": link.type,
        "profile": link.profile,
        "anchor": link.anchor,
        "source": link.source,
    }
