"""JSON-LD expansion of plain schema.org documents without pyld's general machinery.

`pyld.jsonld.expand` costs ~2 ms for a 5 KB Dataset, most of it spent on what
a landing page never uses (scoped contexts, containers, @nest, @reverse, a
deep copy of the input). `expand` gives exactly what pyld gives for the
common shape: one top-level `@context` made of schema.org's URL and/or flat
term maps, nodes nested as a tree, plain values, typed/language value
objects. IRIs are expanded by pyld's own `_expand_iri` against the context
pyld processed, memoized, so term and IRI rules cannot drift. Anything
outside that shape raises `Decline` inside and returns None, and the caller
runs pyld: a test holds both equal on every fixture and on generated input.
"""

from __future__ import annotations

from typing import Any

from adapter.jsonld.context import PROC, Context, Decline, absolute, context

_SCALARS = (str, int, float)  # bool is an int
SCHEMA = "http://schema.org/"
SCHEMA_HTTPS = "https://schema.org/"
_CUT = len(SCHEMA_HTTPS)


class _Expander:
    """One document's expansion: the context and the base for its @ids."""

    def __init__(self, ctx: Context, base: str) -> None:
        self.ctx = ctx
        self.base = base
        self.ids: dict[str, str] = {}
        self.https = 0  # https://schema.org/ keys and types read as http (normalize._to_http)

    def iri(self, value: Any) -> str:
        """A node identifier, resolved against the base as pyld does."""
        if not isinstance(value, str):
            raise Decline
        found = self.ids.get(value)
        if found is None:
            iri = PROC._expand_iri(self.ctx.ctx, value, base=self.base)
            if not isinstance(iri, str) or iri.startswith("@"):
                raise Decline
            self.ids[value] = found = iri
        return found

    def scalar(self, value: Any, coercion: Any) -> dict[str, Any]:
        if coercion == "@id" and isinstance(value, str):
            return {"@id": self.iri(value)}
        if isinstance(value, float) and value != value:  # NaN: never equal to itself
            raise Decline
        if coercion is not None and coercion != "@id":
            if coercion.startswith(SCHEMA_HTTPS):
                self.https += 1
                coercion = SCHEMA + coercion[_CUT:]
            return {"@type": coercion, "@value": value}
        return {"@value": value}

    def values(self, value: Any, coercion: Any) -> list[Any]:
        out: list[Any] = []
        for item in value if isinstance(value, list) else [value]:
            if item is None:
                continue
            if isinstance(item, dict):
                if "@context" in item:
                    raise Decline
                node = self.finish(*self.node(item), top=False)
                if node is not None:
                    out.append(node)
            elif isinstance(item, _SCALARS):
                out.append(self.scalar(item, coercion))
            else:
                raise Decline  # nested arrays
        return out

    def node(self, element: dict[str, Any]) -> tuple[dict[str, Any], bool, int]:
        """The expanded object (before pyld's final checks), whether @type was an array,
        and how many of its keys and types were https://schema.org/ (read as http)."""
        out: dict[str, Any] = {}
        type_array = False
        https_types = 0
        rewritten: dict[str, bool] = {}
        for key in sorted(element):
            if key == "@context":
                continue
            iri, coercion = self.ctx.key(key)
            if iri is None:
                continue
            value = element[key]
            if iri[0] != "@":
                https = iri.startswith(SCHEMA_HTTPS)
                if https:
                    iri = SCHEMA + iri[_CUT:]
                if rewritten.setdefault(iri, https) != https:
                    raise Decline  # _to_http would let one key overwrite the other
                expanded = self.values(value, coercion)
                if isinstance(value, list) or expanded:  # [] stays, a lone null does not
                    out.setdefault(iri, []).extend(expanded)
                continue
            if iri in out:
                raise Decline  # colliding keywords: pyld's error
            if iri == "@id":
                out["@id"] = self.iri(value)
            elif iri == "@type":
                type_array = isinstance(value, list)
                kinds = [self.ctx.type(v, self.base) for v in (value if type_array else [value])]
                if kinds:
                    out["@type"] = [
                        SCHEMA + k[_CUT:] if k.startswith(SCHEMA_HTTPS) else k for k in kinds
                    ]
                    https_types = sum(k.startswith(SCHEMA_HTTPS) for k in kinds)
            elif iri == "@value":
                if not isinstance(value, _SCALARS) or (isinstance(value, float) and value != value):
                    raise Decline
                out["@value"] = value
            elif iri == "@language":
                if value is None:
                    continue
                if not isinstance(value, str):
                    raise Decline
                out["@language"] = value.lower()
            else:
                raise Decline
        https_keys = sum(1 for iri, https in rewritten.items() if https and iri in out)
        return out, type_array, https_keys + (https_types if "@type" in out else 0)

    def finish(
        self, out: dict[str, Any], type_array: bool, https: int, *, top: bool
    ) -> dict[str, Any] | None:
        """pyld's checks at the end of expanding an object, and its dropping rules."""
        count = len(out)
        if "@value" in out:
            if not set(out) <= {"@value", "@type", "@language"} or type_array:
                raise Decline
            if "@type" in out:
                if "@language" in out:
                    raise Decline
                kind = out["@type"][0]
                if not absolute(kind) or kind.startswith("_:"):
                    raise Decline
                out["@type"] = kind
            elif "@language" in out and not isinstance(out["@value"], str):
                raise Decline
        elif "@language" in out:
            if count == 1:
                return None
            raise Decline
        if top and (count == 0 or "@value" in out or (count == 1 and "@id" in out)):
            return None
        self.https += https
        return out


def _top(element: Any, base: str, *, in_array: bool = False) -> tuple[list[Any], int]:
    """One top-level element (the document, or an item of a top-level array), expanded,
    and how many https://schema.org/ keys and types it had."""
    if not isinstance(element, dict):
        if isinstance(element, list):
            raise Decline
        return [], 0  # free-floating scalars are dropped
    if "@context" not in element:
        raise Decline
    expander = _Expander(context(element["@context"]), base)
    graph_keys = [k for k in element if expander.ctx.key(k)[0] == "@graph"]
    out: list[Any] = []
    if not graph_keys:
        items: Any = [element]
    elif in_array or len(graph_keys) > 1 or set(element) != {"@context", graph_keys[0]}:
        raise Decline
    else:
        items = element[graph_keys[0]]
        if not isinstance(items, (list, dict)):
            raise Decline
    for item in items if isinstance(items, list) else [items]:
        if isinstance(item, dict):
            if "@context" in item and item is not element:
                raise Decline
            node = expander.finish(*expander.node(item), top=True)
            if node is not None:
                out.append(node)
        elif isinstance(item, list):
            raise Decline
    return out, expander.https


def expand(data: Any, base: str) -> tuple[list[Any], int] | None:
    """`normalize`'s expansion without pyld: what `jsonld.expand(data, {"base": base, ...})`
    returns with https://schema.org/ read as http (`normalize._to_http`), and how many
    keys and types that changed; None if unsure."""
    try:
        if not isinstance(data, list):
            return _top(data, base)
        out: list[Any] = []
        https = 0
        for element in data:
            nodes, count = _top(element, base, in_array=True)
            out.extend(nodes)
            https += count
        return out, https
    except (Decline, RecursionError):
        return None
