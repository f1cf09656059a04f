"""Framing an expanded block to its Datasets without pyld's general framing algorithm.

`adapter.jsonld.frame.frame_expanded` runs pyld's `_frame` (node map, merged
graph, `_match_frame` with flags and state dicts per node), ~2.5 ms for a
5 KB Dataset. For our one frame (`@type` Dataset, `@embed @always`, no
property patterns) the result is fixed by a few rules this module applies
directly, in pyld's order:

- node map: nodes with the same @id merge; a property's values lose
  duplicates (pyld's `compare_values`: same @id, or same @value, @type,
  @language, with booleans distinct from numbers); blank nodes are relabeled
  `_:b0`, `_:b1`, ... in pyld's walk (keys sorted, a node before its values);
  empty properties vanish in the merged graph;
- the Datasets, sorted by @id, each embed every node they reference, in full,
  properties sorted; a node already embedded above the current parent is
  written as a reference (pyld's circularity check skips the parent itself,
  so a node that references itself is embedded once more);
- a blank node written once loses its @id; each node is written compacted by
  `adapter.jsonld.compact`'s rules as it is embedded (its `compact_framed`
  would give the same from pyld's shape, one more walk).

Lists, @reverse, @graph, @index, blank-node types or properties, and the
string "@null" (pyld drops it after compaction) make `frame` return None, so
the caller uses pyld; a test holds both equal on fixtures and generated input.
"""

from __future__ import annotations

import math
from typing import Any

from adapter.jsonld.compact import Unsupported, compact_id, compact_item, compact_vocab, handles

SCHEMA = "http://schema.org/"
DATASET = SCHEMA + "Dataset"
_NULL_TYPE = SCHEMA + "@null"
_VALUE_KEYS = frozenset({"@value", "@type", "@language"})


class _Decline(Exception):
    pass


def _value_key(value: dict[str, Any]) -> tuple[Any, ...]:
    """pyld's `compare_values` for value objects, as a hashable key."""
    if not set(value) <= _VALUE_KEYS:
        raise _Decline
    literal = value["@value"]
    kind = value.get("@type")
    if kind is not None and (not isinstance(kind, str) or kind.startswith("_:")):
        raise _Decline
    if kind == _NULL_TYPE or "@null" in (literal, value.get("@language")):
        raise _Decline
    if isinstance(literal, float) and not math.isfinite(literal):
        raise _Decline
    if not isinstance(literal, (str, int, float)):
        raise _Decline
    return ("v", isinstance(literal, bool), literal, kind, value.get("@language"))


class _NodeMap:
    """pyld's `_create_node_map` + `_merge_node_map_graphs` for the default graph."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, list[Any]]] = {}
        self.keys: dict[str, dict[str, set[Any]]] = {}
        self.labels: dict[str, str] = {}
        self.counter = 0

    def label(self, old: str | None) -> str:
        if old and old in self.labels:
            return self.labels[old]
        new = f"_:b{self.counter}"
        self.counter += 1
        if old is not None:
            self.labels[old] = new
        return new

    def add(self, subject: str, prop: str, value: Any, key: Any) -> None:
        seen = self.keys[subject].setdefault(prop, set())
        if key not in seen:
            seen.add(key)
            self.nodes[subject].setdefault(prop, []).append(value)

    def visit(self, element: Any, subject: str | None, prop: str | None) -> None:
        if not isinstance(element, dict):
            raise _Decline
        if "@value" in element:
            key = _value_key(element)
            if subject is not None and prop is not None:
                self.add(subject, prop, element, key)
            return
        ident = element.get("@id") if "@id" in element else None
        if "@id" in element and (not isinstance(ident, str) or ident.startswith("@")):
            raise _Decline  # e.g. None for "@null": pyld fails on it
        if ident is None or ident.startswith("_:"):
            ident = self.label(ident)
        if ident not in self.nodes:
            self.nodes[ident] = {}
            self.keys[ident] = {}
        if subject is not None and prop is not None:
            self.add(subject, prop, {"@id": ident}, ("i", ident))
        for key in sorted(element):
            objects = element[key]
            if key == "@id":
                continue
            if not isinstance(objects, list) or key.startswith("_:"):
                raise _Decline
            if key == "@type":
                for kind in objects:
                    bad = not isinstance(kind, str) or kind.startswith(("_:", "@"))
                    if bad or kind == _NULL_TYPE:
                        raise _Decline
                    self.add(ident, "@type", kind, kind)
            elif key.startswith("@"):
                raise _Decline  # @list, @set, @graph, @reverse, @index, @included...
            else:
                for one in objects:
                    self.visit(one, ident, key)


class _Framer:
    """The embedding with `@embed @always`, written compacted as `compact_framed` would."""

    def __init__(self, nodes: dict[str, dict[str, list[Any]]]) -> None:
        self.nodes = nodes
        self.blank_outputs: dict[str, list[dict[str, Any]]] = {}
        self.plans: dict[str, list[tuple[str | None, list[Any]]]] = {}

    def plan(self, ident: str) -> list[tuple[str | None, list[Any]]]:
        """A node's properties, sorted and compacted once however often it is embedded:
        (None, types) or (key, [(True, compacted value) or (False, referenced id)])."""
        found = self.plans.get(ident)
        if found is None:
            node = self.nodes[ident]
            found = []
            for prop in sorted(node):
                objects = node[prop]
                if prop == "@type":
                    found.append((None, [compact_vocab(k) for k in objects]))
                else:
                    items = [
                        (True, compact_item(one)) if "@value" in one else (False, one["@id"])
                        for one in objects
                    ]
                    found.append((compact_vocab(prop), items))
            self.plans[ident] = found
        return found

    def embed(self, ident: str, stack: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"@id": compact_id(ident)}
        if ident.startswith("_:"):
            self.blank_outputs.setdefault(ident, []).append(out)
        if ident in stack[:-1]:
            return out  # circular: a reference
        stack.append(ident)
        for key, items in self.plan(ident):
            if key is None:
                out["@type"] = items[0] if len(items) == 1 else list(items)
                continue
            written = [
                (dict(v) if isinstance(v, dict) else v) if literal else self.embed(v, stack)
                for literal, v in items
            ]
            out[key] = written[0] if len(written) == 1 else written
        stack.pop()
        return out

    def frame(self) -> list[dict[str, Any]]:
        graph = []
        for ident in sorted(self.nodes):
            if DATASET in self.nodes[ident].get("@type", ()):
                graph.append(self.embed(ident, []))
        for outputs in self.blank_outputs.values():
            if len(outputs) == 1:
                del outputs[0]["@id"]
        return graph


def frame(expanded: Any, context: dict[str, Any]) -> dict[str, Any] | None:
    """What `framing.frame_expanded(expanded)` returns, or None if unsure."""
    if not isinstance(expanded, list) or not handles(context):
        return None
    try:
        node_map = _NodeMap()
        for element in expanded:
            node_map.visit(element, None, None)
        graph = _Framer(node_map.nodes).frame()
    except (_Decline, Unsupported, RecursionError):
        return None
    return {"@context": dict(context), "@graph": graph}
