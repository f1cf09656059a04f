"""Two rewritings of normalize's JSON-LD: https://schema.org/ read as http, and the framed shape.

`to_http` is applied to pyld's expansion (`adapter.jsonld.expand` does the same
rewriting while it expands); `simplify` gives a framed Dataset the stable
shape `adapter.jsonld.normalize`'s docstring describes.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from urllib.parse import urljoin

SCHEMA = "http://schema.org/"
SCHEMA_HTTPS = "https://schema.org/"
IRI_PROPERTIES = ("url", "contentUrl", "sameAs", "embedUrl", "thumbnailUrl")
_IRI_KEYS = frozenset(IRI_PROPERTIES)
_NESTED = (dict, list)


@lru_cache(maxsize=4096)
def resolve_iri(base: str, iri: str) -> str:
    """urljoin, remembered: a framed Dataset repeats its IRIs (pure, so safe to share);
    none for an IRI that urljoin would give back as it is, whatever the base (most of
    them: a urljoin was 20-40 us on a slow machine, a dozen a page)."""
    return iri if unchanged_by_urljoin(iri) else urljoin(base, iri)


def unchanged_by_urljoin(iri: str) -> bool:
    """True when `urljoin(base, iri) == iri` for every base: an http(s) URL with a host,
    of printable ASCII without spaces, brackets or ";", and no empty query or fragment;
    so urlparse reads it whole and urlunparse writes it back as it was (a relative one,
    or one urlparse would rewrite, says False: urljoin decides)."""
    if not iri.startswith(("http://", "https://")) or not iri.isascii():
        return False
    rest = iri[iri.index("//") + 2 :]
    if not rest.isprintable() or any(c in rest for c in " ;[]"):
        return False
    head, hashed, fragment = rest.partition("#")
    head, asked, query = head.partition("?")
    if (hashed and not fragment) or (asked and not query):
        return False
    return not head.startswith("/") and bool(head)


def to_http(value: Any, counter: list[int]) -> Any:
    """Expanded JSON-LD with https://schema.org/ keys and types rewritten to http."""
    if isinstance(value, list):
        return [to_http(v, counter) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, inner in value.items():
        if key.startswith(SCHEMA_HTTPS):
            counter[0] += 1
            key = SCHEMA + key[len(SCHEMA_HTTPS) :]
        if key == "@type":
            inner = _http_types(inner, counter)
        out[key] = to_http(inner, counter)
    return out


def _http_types(kinds: Any, counter: list[int]) -> Any:
    if isinstance(kinds, str) and kinds.startswith(SCHEMA_HTTPS):
        counter[0] += 1
        return SCHEMA + kinds[len(SCHEMA_HTTPS) :]
    if isinstance(kinds, list):
        return [_http_types(k, counter) for k in kinds]
    return kinds


def simplify(value: Any, base: str, key: str | None = None) -> Any:
    """The framed output in the stable shape normalize's docstring describes."""
    if isinstance(value, list):
        return [simplify(v, base, key) for v in value]
    if key in _IRI_KEYS:
        iri = value.get("@id", value.get("@value")) if isinstance(value, dict) else value
        if isinstance(iri, str) and not (isinstance(value, dict) and "@language" in value):
            return resolve_iri(base, iri.strip())
    if not isinstance(value, dict):
        return value
    if "@value" in value and "@language" not in value:
        return value["@value"]
    blank = str(value.get("@id", "")).startswith("_:") and len(value) > 1
    out: dict[str, Any] = {}
    for k, v in value.items():
        if blank and k == "@id":
            continue
        # a scalar under any other key is kept as it is: no call for it
        if k != "@context" and (k in _IRI_KEYS or isinstance(v, _NESTED)):
            v = simplify(v, base, k)
        out[k] = v
    return out
