"""The offline JSON-LD document loader: schema.org from a bundled file, nothing else.

pyld calls its document loader for every remote `@context`. Ours answers every
spelling of the schema.org context (http/https, with or without a trailing
slash, the `docs/jsonldcontext.json(ld)` URLs) from `contexts/schemaorg.jsonld`,
the project's own context (`@vocab` http://schema.org/ plus the IRI coercions
the checks rely on), tagged `{"tag": "static"}` so pyld caches the processed
context across calls instead of re-processing it every time. Any other URL is
refused with `RemoteContextRefused`: never a fetch, never a hang.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

SCHEMA_ORG_CONTEXT_URLS = frozenset(
    f"{scheme}://schema.org{path}"
    for scheme in ("http", "https")
    for path in ("", "/", "/docs/jsonldcontext.json", "/docs/jsonldcontext.jsonld")
)


class RemoteContextRefused(Exception):
    """A document asked for a context we do not fetch."""

    def __init__(self, url: str) -> None:
        super().__init__(f"remote context not loaded: {url}")
        self.url = url


@cache
def bundled_context() -> dict[str, Any]:
    """The project's schema.org context document, read once from package data."""
    text = resources.files("adapter").joinpath("contexts/schemaorg.jsonld").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


@cache
def _remote_document(url: str) -> dict[str, Any]:
    """The RemoteDocument for one spelling; cached so pyld gets the same object each time."""
    return {
        "contentType": "application/ld+json",
        "contextUrl": None,
        "documentUrl": url,
        "document": bundled_context(),
        "tag": "static",
    }


def load_document(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """pyld document loader: the bundled schema.org context, or `RemoteContextRefused`."""
    spelled = url.strip()
    if spelled in SCHEMA_ORG_CONTEXT_URLS:
        return _remote_document(spelled)
    raise RemoteContextRefused(spelled)


def refused_url(exc: BaseException) -> str | None:
    """The URL we refused, if `exc` (a pyld error) was caused by our refusal."""
    seen: BaseException | None = exc
    depth = 0
    while seen is not None and depth < 20:
        if isinstance(seen, RemoteContextRefused):
            return seen.url
        details = getattr(seen, "details", None)
        if isinstance(details, dict) and isinstance(details.get("cause"), BaseException):
            seen = details["cause"]
        else:
            seen = seen.__cause__ or seen.__context__
        depth += 1
    return None
