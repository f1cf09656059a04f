"""When two spellings name the same thing: ORCIDs, DOIs, licenses, other IRIs.

Signposting and the Dataset often name the same author, license or object in
different forms (`http://orcid.org/...` vs `https://orcid.org/...`, an SPDX
URI vs its `.html` page vs the short id vs the Creative Commons deed URL,
`doi:` vs `https://doi.org/`). These keys make such spellings compare equal.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote

from adapter.doi import normalize_doi
from adapter.signposting.links import URL_KEY_CACHE, url_key

_ORCID = re.compile(r"(?:^|orcid\.org/|orcid:)\s*(\d{4}-\d{4}-\d{4}-\d{3}[\dXx])/?$", re.I)
_SPDX_URI = re.compile(
    r"^https?://(?:www\.)?spdx\.org/licenses/([^/?#]+?)(?:\.html|\.json)?/?$", re.I
)
_DOI_PATH = re.compile(r"^https?://[^/]+/(?:doi[:/])?(10\.\d+(?:\.\d+)*/\S+)$", re.I)
_SPDX_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+\-]*$")
_CC = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/(licenses|publicdomain)/([a-z\-]+)/(\d\.\d)", re.I
)
_OSI = re.compile(
    r"^https?://(?:www\.)?opensource\.org/licenses?/([A-Za-z0-9.+\-]+?)(?:\.php)?/?$", re.I
)


def orcid(text: str) -> str | None:
    """The bare ORCID iD (`0000-0002-1825-0097`) of any spelling of it, else None."""
    found = _ORCID.search(text.strip())
    return found.group(1).upper() if found else None


def doi_of(text: str) -> str | None:
    """The DOI a cite-as target names: any DOI spelling, or a resolver URL whose path is one.

    Besides doi.org, DOIs resolve through other proxies (`https://hdl.handle.net/10.x/y`,
    `https://identifiers.org/doi:10.x/y`), so the path of any http(s) URL counts.
    """
    found = normalize_doi(text)
    if found:
        return found
    found_path = _DOI_PATH.match(text.strip())
    return normalize_doi(unquote(found_path.group(1))) if found_path else None


@lru_cache(maxsize=URL_KEY_CACHE)
def iri_key(iri: str) -> str:
    """Identifier IRIs: the same under http and https and with or without a trailing slash.

    Memoized like `url_key` (pure, and asked ~10 times a page for the same few IRIs);
    `iri_key.__wrapped__` is the uncached reference.
    """
    found = orcid(iri)
    if found:
        return f"orcid:{found}"
    doi = doi_of(iri)
    if doi:
        return f"doi:{doi}"
    key = url_key(iri)
    for scheme in ("https://", "http://"):
        if key.startswith(scheme):
            key = "//" + key[len(scheme) :]
    return key.rstrip("/")


@lru_cache(maxsize=URL_KEY_CACHE)
def license_key(text: str) -> str:
    """SPDX id for the usual spellings of a license (SPDX URI, .html, short id, CC deed).

    Memoized (pure); `license_key.__wrapped__` is the uncached reference.
    """
    value = text.strip()
    found = _SPDX_URI.match(value)
    if found:
        return "spdx:" + found.group(1).lower()
    found = _CC.match(value)
    if found:
        kind, name, version = found.group(1).lower(), found.group(2).lower(), found.group(3)
        if kind == "publicdomain":
            return "spdx:cc0-" + version if name == "zero" else f"cc-pd-{name}-{version}"
        return f"spdx:cc-{name}-{version}"
    found = _OSI.match(value)
    if found:
        return "spdx:" + found.group(1).lower()
    if _SPDX_ID.match(value) and "://" not in value:
        return "spdx:" + value.lower()
    return iri_key(value)


def spdx_uri(text: str) -> str | None:
    """The canonical SPDX license URI FAIR Signposting asks for, when one is known."""
    key = license_key(text)
    if not key.startswith("spdx:"):
        return None
    found = _SPDX_URI.match(text.strip())
    name = found.group(1) if found else None
    if name is None and _SPDX_ID.match(text.strip()):
        name = text.strip()
    if name is None:
        name = _spdx_case(key[len("spdx:") :])
    return f"https://spdx.org/licenses/{name}"


def _spdx_case(lower: str) -> str:
    """The usual SPDX spelling of the ids this module maps to (CC-BY-4.0, CC0-1.0, MIT)."""
    return lower.upper()
