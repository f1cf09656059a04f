"""Framing an already expanded document to its Datasets, without expanding it again.

`pyld.jsonld.frame` re-expands its input and the frame on every call; our
input is already expanded (and its schema.org namespace unified), so that is
about half the cost of framing (measured: 3.6 ms -> 1.9 ms for a 5 KB
Dataset). `frame_expanded` runs the same steps as `JsonLdProcessor.frame`
after its expansion, with the frame expanded once. It uses pyld internals, so
it checks they exist and otherwise falls back to `jsonld.frame`; a test holds
both paths equal on every golden page.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pyld import jsonld
from pyld.context_resolver import ContextResolver
from pyld.identifier_issuer import IdentifierIssuer

from adapter.jsonld_loader import load_document

SCHEMA = "http://schema.org/"
FRAME_CONTEXT: dict[str, Any] = {"@vocab": SCHEMA, "spdx": "http://spdx.org/rdf/terms#"}
DATASET_FRAME: dict[str, Any] = {
    "@context": FRAME_CONTEXT,
    "@type": "Dataset",
    "@embed": "@always",
}
_INTERNALS = ("_frame", "_cleanup_preserve", "_cleanup_null", "compact", "expand")
FAST_PATH = all(hasattr(jsonld.JsonLdProcessor, name) for name in _INTERNALS)


def _options() -> dict[str, Any]:
    """The options `JsonLdProcessor.frame` would set for our frame (JSON-LD 1.1)."""
    return {
        "base": "",
        "compactArrays": True,
        "embed": "@once",  # the frame's own "@embed": "@always" wins
        "explicit": False,
        "omitDefault": False,
        "requireAll": False,
        "bnodesToClear": [],
        "documentLoader": load_document,
        "contextResolver": ContextResolver(jsonld._resolved_context_cache, load_document),
        "extractAllScripts": False,
        "processingMode": "json-ld-1.1",
        "identifierIssuer": IdentifierIssuer("_:b"),
        "omitGraph": False,
        "pruneBlankNodeIdentifiers": True,
    }


@cache
def _expanded_frame() -> Any:
    options = _options()
    options["isFrame"] = True
    options["keepFreeFloatingNodes"] = True
    return jsonld.JsonLdProcessor().expand(DATASET_FRAME, options)


def frame_with_pyld(expanded: list[Any]) -> dict[str, Any]:
    """The reference path: pyld's public `frame` (expands the input again)."""
    result: dict[str, Any] = jsonld.frame(
        expanded, DATASET_FRAME, {"documentLoader": load_document, "omitGraph": False}
    )
    return result


def frame_expanded(expanded: list[Any]) -> dict[str, Any]:
    """Frame an expanded document to its Datasets: `{"@context": ..., "@graph": [...]}`."""
    if not FAST_PATH:
        return frame_with_pyld(expanded)
    processor = jsonld.JsonLdProcessor()
    options = _options()
    options["merged"] = True  # the frame has no @graph key: frame the merged graph
    options["is11"] = True
    framed = processor._frame(expanded, _expanded_frame(), options)
    options["link"] = {}
    framed = processor._cleanup_preserve(framed, options)
    options.update({"graph": True, "skipExpansion": True, "framing": True, "link": {}})
    result = processor.compact(framed, FRAME_CONTEXT, options)
    options["link"] = {}
    cleaned: dict[str, Any] = processor._cleanup_null(result, options)
    return cleaned
