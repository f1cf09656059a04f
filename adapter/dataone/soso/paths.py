"""Paths and shown values in the soso/ messages: `creator[2].identifier`, 'text...'."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapter.jsonld.framed import literal, node_id, values


def at(prop: str, i: int, count: int) -> str:
    """`prop[i]` when the property has several values, else `prop` (as requirements.py does)."""
    return f"{prop}[{i}]" if count > 1 else prop


def show(text: str | None, width: int = 70) -> str:
    """A published value quoted on one line, cut to `width` characters."""
    if text is None:
        return "(none)"
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 3] + "...")


def first_text(node: Mapping[str, Any], prop: str) -> str | None:
    """The first literal or IRI of `prop`."""
    for value in values(node, prop):
        found = literal(value) or node_id(value)
        if found:
            return found
    return None
