"""Persistent identifiers beyond DOI: ARK, Handle, URN, and an HTTP IRI the publisher controls.

DataONE accepts any unique series id, and repositories such as BCO-DMO, CIOOS
or HydroShare publish ARKs, Handles or their own IRIs rather than DOIs. A
profile that allows them (`adapter.dataone.profiles`) needs to know which
scheme an `identifier` value is in, and one spelling of it to file a series
under, whatever form the page used:

- DOI: every spelling `adapter.doi` knows -> ``doi:10.x/y``;
- ARK: ``ark:/12345/x``, ``ark:12345/x``, ``https://n2t.net/ark:/12345/x`` (any resolver
  host) -> ``ark:/12345/x`` (the NAAN lowercased: NAANs are case-insensitive);
- Handle: ``hdl:20.500.1/x``, ``info:hdl/...``, ``https://hdl.handle.net/20.500.1/x``
  -> ``hdl:20.500.1/x``;
- URN: ``urn:nid:nss`` (RFC 8141) -> the NID lowercased, the NSS as written;
- HTTP IRI: an ``http(s)`` IRI with a path on the landing page's own host (``www.``
  aside), as written: an IRI on another host is a link, not the publisher's identifier.

Pure functions; `recognise` never raises, whatever text it is given.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from adapter.doi import MAX_LENGTH, doi_uri, is_placeholder, normalize_doi
from adapter.models import Identifier

SCHEMES = ("doi", "ark", "handle", "urn", "http")
SCHEME_NAMES = {"doi": "DOI", "ark": "ARK", "handle": "Handle", "urn": "URN", "http": "HTTP IRI"}

# NAAN: five or more betanumeric characters (ARK spec, section 2.3), then the name
_ARK = re.compile(r"ark:/?([0-9a-z]{5,})/(\S+)", re.IGNORECASE)
_HANDLE_PREFIXES = ("https://hdl.handle.net/", "http://hdl.handle.net/", "info:hdl/", "hdl:")
_HANDLE = re.compile(r"([0-9][0-9a-z.]*)/(\S+)", re.IGNORECASE)
_URN = re.compile(r"urn:([a-z0-9][a-z0-9-]{0,31}):(\S+)", re.IGNORECASE)


def recognise(text: object, page_url: str | None = None) -> Identifier | None:
    """The scheme and series form of one identifier value, or None for a local id."""
    if not isinstance(text, str) or len(text) > MAX_LENGTH:
        return None
    value = text.strip()
    if not value or is_placeholder(value) or any(c.isspace() for c in value):
        return None
    doi = normalize_doi(value)
    if doi is not None:
        return Identifier("doi", doi_uri(doi), text)
    for find in (_ark, _handle, _urn):
        found = find(value)
        if found is not None:
            return Identifier(found[0], found[1], text)
    if page_url is not None and _own_iri(value, page_url):
        return Identifier("http", value, text)
    return None


def _ark(value: str) -> tuple[str, str] | None:
    at = value.lower().find("ark:")
    if at < 0 or (at > 0 and not value.lower().startswith(("http://", "https://"))):
        return None
    match = _ARK.fullmatch(value[at:])
    if match is None:
        return None
    return "ark", f"ark:/{match.group(1).lower()}/{match.group(2)}"


def _handle(value: str) -> tuple[str, str] | None:
    lowered = value.lower()
    prefix = next((p for p in _HANDLE_PREFIXES if lowered.startswith(p)), None)
    if prefix is None:
        return None
    match = _HANDLE.fullmatch(value[len(prefix) :])
    if match is None:
        return None
    return "handle", f"hdl:{match.group(1).lower()}/{match.group(2)}"


def _urn(value: str) -> tuple[str, str] | None:
    match = _URN.fullmatch(value)
    if match is None or match.group(1).lower() in ("doi", "hdl"):
        return None
    return "urn", f"urn:{match.group(1).lower()}:{match.group(2)}"


def _own_iri(value: str, page_url: str) -> bool:
    """An http(s) IRI with a path, on the landing page's host."""
    try:
        iri, page = urlsplit(value), urlsplit(page_url)
    except ValueError:
        return False
    if iri.scheme.lower() not in ("http", "https") or iri.path in ("", "/"):
        return False
    return iri.hostname is not None and _host(iri.hostname) == _host(page.hostname or "")


def _host(name: str) -> str:
    return name.lower().removeprefix("www.")
