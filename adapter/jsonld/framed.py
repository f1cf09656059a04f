"""Accessors for framed Dataset nodes, so checks never guess at JSON-LD shapes.

A framed node (see `adapter.jsonld.normalize`) has compact keys under
`{"@vocab": "http://schema.org/"}`: a property holds one value or a list of
values; a value is a plain string/number/bool, a value object with a language
(`{"@value": "x", "@language": "en"}`), an `{"@list": [...]}`, a node
reference `{"@id": ...}` or an embedded node. These helpers flatten all that.

A framed node is a dict: `type(x) is dict` is asked before the `Mapping` ABC's
isinstance, ten times slower, on the few hundred values a page's checks read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SCHEMA = "http://schema.org/"


def values(node: Mapping[str, Any], prop: str) -> list[Any]:
    """The values of `prop` as a list (empty if absent); `@list`s are unwrapped."""
    raw = node.get(prop)
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    out: list[Any] = []
    for item in items:
        if (type(item) is dict or isinstance(item, Mapping)) and "@list" in item:
            inner = item["@list"]
            out.extend(inner if isinstance(inner, list) else [inner])
        elif item is not None:
            out.append(item)
    return out


def literal(value: Any) -> str | None:
    """The text of a literal: `"x"` and `{"@value": "x"}` give "x"; numbers as text; nodes None."""
    if type(value) is str:  # most literals: no ABC check
        return value
    if type(value) is dict or isinstance(value, Mapping):
        if "@value" not in value:
            return None
        value = value["@value"]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def node_id(value: Any) -> str | None:
    """The IRI of a node reference or embedded node, or an IRI-valued string itself."""
    if type(value) is dict or isinstance(value, Mapping):
        found = value.get("@id")
        return found if isinstance(found, str) else None
    if isinstance(value, str):
        return value
    return None


def types(node: Mapping[str, Any]) -> list[str]:
    """Compact type names: "Dataset" for http://schema.org/Dataset; other IRIs unchanged."""
    raw = node.get("@type")
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item.removeprefix(SCHEMA))
    return out


def first_literal(node: Mapping[str, Any], prop: str) -> str | None:
    """The first non-empty literal of `prop`, or None."""
    for value in values(node, prop):
        text = literal(value)
        if text is not None and text.strip():
            return text
    return None
