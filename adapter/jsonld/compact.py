"""Compacting framed Datasets to `{"@vocab": "http://schema.org/"}` without pyld's search.

pyld compacts every IRI by searching the active context's inverse (term
selection for containers, languages, types), which is about a third of the
JSON-LD time of a landing page (~1.1 of 3.4 ms for a 5 KB Dataset). With the
frame's context (schema.org as `@vocab`, one `spdx` prefix, no coercions) the
result is fixed by a few rules: schema.org IRIs become their local names,
value objects with only `@value` become the bare value, one value is not
wrapped in an array. `compact_framed` applies exactly those rules and returns
None for anything outside them (lists, indexes, directions, the spdx prefix,
IRIs that look like compact IRIs), so the caller falls back to pyld; a test
holds both equal on every golden page.
"""

from __future__ import annotations

from typing import Any

SCHEMA = "http://schema.org/"
SPDX = "http://spdx.org/rdf/terms#"
_VALUE_KEYS = frozenset({"@value", "@type", "@language"})
_VOCAB: dict[str, str] = {}


class Unsupported(Exception):
    """A shape these rules do not cover: let pyld compact it."""


def handles(context: dict[str, Any]) -> bool:
    """Whether these rules are pyld's for `context` (the frame's)."""
    return set(context) == {"@vocab", "spdx"} and context["@vocab"] == SCHEMA


def compact_framed(framed: list[Any], context: dict[str, Any]) -> dict[str, Any] | None:
    """`{"@context": context, "@graph": [...]}` as pyld would compact `framed`; None if unsure."""
    if not handles(context):
        return None
    try:
        graph = [_node(n) for n in framed]
    except Unsupported:
        return None
    return {"@context": dict(context), "@graph": graph}


def compact_vocab(iri: Any) -> str:
    """A property or type IRI, relative to the vocabulary (memoized: a page repeats a few)."""
    found = _VOCAB.get(iri) if isinstance(iri, str) else None
    if found is None:
        found = _vocab(iri)
        if len(_VOCAB) > 10_000:
            _VOCAB.clear()
        _VOCAB[iri] = found
    return found


def _vocab(iri: Any) -> str:
    if not isinstance(iri, str) or iri.startswith(("spdx:", "_:", SPDX)):
        raise Unsupported
    if iri.startswith(SCHEMA) and len(iri) > len(SCHEMA):
        local = iri[len(SCHEMA) :]
        if local == "spdx" or ":" in local:
            raise Unsupported
        return local
    if ":" not in iri:
        raise Unsupported  # a relative IRI: pyld's rules differ, let it decide
    return iri


def compact_id(iri: Any) -> str:
    """A node identifier (not vocabulary-relative)."""
    if not isinstance(iri, str) or iri.startswith(("spdx:", SPDX)) or ":" not in iri:
        raise Unsupported
    return iri


def _node(node: Any) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise Unsupported
    out: dict[str, Any] = {}
    for key, value in sorted(node.items()):
        if key == "@id":
            out["@id"] = compact_id(value)
        elif key == "@type":
            if not isinstance(value, list) or not value:
                raise Unsupported
            kinds = [compact_vocab(k) for k in value]
            out["@type"] = kinds[0] if len(kinds) == 1 else kinds
        elif key.startswith("@") or not isinstance(value, list):
            raise Unsupported
        else:
            items = [compact_item(v) for v in value]
            out[compact_vocab(key)] = items[0] if len(items) == 1 else items
    return out


def compact_item(value: Any) -> Any:
    if not isinstance(value, dict):
        raise Unsupported
    if "@value" in value:
        keys = set(value)
        if not keys <= _VALUE_KEYS or keys == _VALUE_KEYS:
            raise Unsupported
        literal = value["@value"]
        if keys == {"@value"}:
            return literal
        if "@type" in value:
            return {"@type": compact_vocab(value["@type"]), "@value": literal}
        if not isinstance(value["@language"], str):
            raise Unsupported
        return {"@language": value["@language"], "@value": literal}
    if set(value) == {"@id"}:
        return {"@id": compact_id(value["@id"])}
    return _node(value)
