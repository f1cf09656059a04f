"""A `DatasetReport` as a repository manager reads it (text) and as programs read it (JSON).

JSON schema, ``schema_version`` 1 (stable: fields are only ever added; a
removal or a change of meaning bumps the version)::

    {
      "schema_version": 1,
      "url": str,                 # as given
      "final_url": str | null,    # after redirects (null: never answered)
      "status": int | null,       # HTTP status of the landing page
      "not_modified": bool,       # a conditional GET answered 304
      "harvestable": bool,        # no page-level error and at least one clean Dataset
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
        "encoding": [MediaObject],       # encoding and subjectOf metadata links
        "distributions": [MediaObject],
        "findings": [Finding]     # about this Dataset
      }],
      "signposts": [{"rel", "href", "type", "profile", "anchor", "source"}],
      "findings": [Finding]       # about the page (fetch, extract, normalize, links)
    }
    MediaObject = {"property": "encoding"|"subjectOf"|"distribution", "contentUrl": str|null,
                   "encodingFormat": [str], "identifier": str|null,
                   "dateModified": str|null, "where": str}
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

from adapter.jsonld.framed import first_literal
from adapter.models import DatasetReport, DatasetResult, Link, MediaObjectRef
from adapter.reporttext import render_text

SCHEMA_VERSION = 1

__all__ = ["SCHEMA_VERSION", "render_text", "to_json"]


def to_json(report: DatasetReport) -> dict[str, Any]:
    """The report as plain JSON values, in the documented schema."""
    every = report.all_findings()
    return {
        "schema_version": SCHEMA_VERSION,
        "url": report.url,
        "final_url": report.final_url,
        "status": report.status,
        "not_modified": report.not_modified,
        "harvestable": report.harvestable,
        "path": list(report.path),
        "summary": {
            "datasets": len(report.datasets),
            "errors": sum(f.severity == "error" for f in every),
            "warnings": sum(f.severity == "warning" for f in every),
            "info": sum(f.severity == "info" for f in every),
        },
        "datasets": [_dataset(d) for d in report.datasets],
        "signposts": [_link(link) for link in report.signposts],
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
        "encoding": _media(d.encoding),
        "distributions": _media(d.distributions),
        "findings": [f.as_dict() for f in d.findings],
    }


def _media(refs: Iterable[MediaObjectRef]) -> list[dict[str, Any]]:
    return [
        {
            "property": r.property,
            "contentUrl": r.content_url,
            "encodingFormat": list(r.encoding_format),
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
