"""Worked JSON-LD for the two errors that block most pages, filled from the page's links.

`dataone/encoding-missing` and `dataone/distribution-missing` say what is
missing; a repository manager also needs what to write. Where the page already
links an ISO (or other metadata) record (`describedby`, a `?format=iso19139`
link) the example proposes it as the `encoding` MediaObject with its
`encodingFormat`; where it links data files (`item`) it proposes the
DataDownloads. With nothing on the page to go by, the example says so and
shows the shape with a placeholder address to replace. Pure: links in, text out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from adapter.dataone.mediaobjects import DISTRIBUTION_MISSING, ENCODING_MISSING
from adapter.jsonld.framed import first_literal
from adapter.models import DatasetResult, Link

ISO_FORMAT = "http://www.isotc211.org/2005/gmd"
_ISO_HINTS = ("iso19139", "iso19115", "isotc211", "iso-19139", "iso_19139", "gmd")
_XML_TYPES = ("application/xml", "text/xml", "application/vnd.iso19139+xml")
_MAX_FILES = 5


def example_for(code: str, dataset: DatasetResult | None, links: Sequence[Link]) -> str | None:
    """The worked example for a finding with `code`, or None for any other code.

    `links`: the signposts about the landing page (and its other links)."""
    if code == ENCODING_MISSING.code:
        return encoding_example(dataset, links)
    if code == DISTRIBUTION_MISSING.code:
        return distribution_example(links)
    return None


def encoding_example(dataset: DatasetResult | None, links: Sequence[Link]) -> str:
    record = _metadata_record(links)
    modified = (first_literal(dataset.framed, "dateModified") if dataset else None) or "YYYY-MM-DD"
    if record is None:
        head = (
            "The page links no metadata record to use; publish its ISO 19139 XML and add it "
            "to the Dataset, for example:"
        )
        href, fmt = "https://repository.example/metadata/RECORD.xml", ISO_FORMAT
    else:
        href, fmt = record
        head = "The page already links its metadata record; add it to the Dataset as:"
    media = {
        "@type": "MediaObject",
        "contentUrl": href,
        "encodingFormat": fmt,
        "dateModified": modified,
    }
    return f"{head}\n{_snippet({'encoding': media})}"


def distribution_example(links: Sequence[Link]) -> str:
    files = [x for x in links if x.rel == "item"][:_MAX_FILES]
    if not files:
        head = "The page links no data file to use; add each download to the Dataset, for example:"
        downloads: list[dict[str, Any]] = [
            {
                "@type": "DataDownload",
                "contentUrl": "https://repository.example/files/DATA.csv",
                "encodingFormat": "text/csv",
            }
        ]
    else:
        head = "The page already links its data files (rel=item); add them to the Dataset as:"
        downloads = [
            {
                "@type": "DataDownload",
                "contentUrl": x.href,
                "encodingFormat": x.type or "application/octet-stream",
            }
            for x in files
        ]
    value: Any = downloads[0] if len(downloads) == 1 else downloads
    return f"{head}\n{_snippet({'distribution': value})}"


def _metadata_record(links: Sequence[Link]) -> tuple[str, str] | None:
    """(href, encodingFormat) of the metadata record the page links, ISO first."""
    described = [x for x in links if x.rel == "describedby"]
    for x in [*described, *links]:
        text = f"{x.href} {x.profile or ''}".lower()
        if any(h in text for h in _ISO_HINTS):
            return x.href, ISO_FORMAT
    for x in described:
        if x.profile and (x.type or "").lower() in _XML_TYPES:
            return x.href, x.profile
    return None


def _snippet(value: dict[str, Any]) -> str:
    """`"property": {...}` as it goes inside the Dataset's JSON-LD object."""
    body = json.dumps(value, indent=2, ensure_ascii=False)
    return "\n".join(body.splitlines()[1:-1])
