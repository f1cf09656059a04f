"""Which framed Datasets are the page's own, and which only describe one of them.

CDIF gives a Dataset's metadata record as a node typed Dataset with
`additionalType` dcat:CatalogRecord whose `about` names the Dataset it
describes, usually placed in that Dataset's `subjectOf`. Framing the page for
every Dataset makes such a record a second top-level Dataset, which then fails
every DataONE check although the publisher described one Dataset. Likewise a
Dataset the publisher wrote only nested inside another Dataset, under any
property (`subjectOf`, `license` -- Harvard Dataverse types its licence
`Dataset` --, `citation`, `isBasedOn`, `hasPart`, ...), is a reference from
that Dataset, not one of the page's own: the page's Datasets are those written
at the top of a block, in its `@graph`, or inside a node that is not a
Dataset (a WebPage's `mainEntity`, a DataCatalog's `dataset`).

Works on pyld's framed graph before blank-node ids are dropped: a node that
framing also embeds elsewhere keeps its `_:b` id there, so it can be matched.
Each dropped node names the Dataset it belongs to, and that one is kept, so at
least one Dataset always remains.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from adapter.jsonld.framed import SCHEMA, node_id, values

_LOCAL_NAME = re.compile(r"[#/:]")


@dataclass(frozen=True, slots=True)
class Secondary:
    """A framed Dataset that belongs to another Dataset of the page."""

    index: int  # its position in the framed graph
    primary: int  # position of the Dataset it describes / is nested in
    how: str  # "catalog-record", or the property it is nested under ("subjectOf", "license")


def is_catalog_record(node: Mapping[str, Any]) -> bool:
    """Typed dcat:CatalogRecord, by additionalType or @type, in any spelling of the IRI."""
    for value in [*values(node, "additionalType"), *values(node, "@type")]:
        text = value.get("@id", value.get("@value")) if isinstance(value, Mapping) else value
        if isinstance(text, str) and _LOCAL_NAME.split(text.strip())[-1].lower() == (
            "catalogrecord"
        ):
            return True
    return False


def _ids(graph: Sequence[Mapping[str, Any]]) -> list[str | None]:
    return [n["@id"] if isinstance(n.get("@id"), str) else None for n in graph]


def _refs(node: Mapping[str, Any], prop: str, base: str) -> set[str]:
    out: set[str] = set()
    for value in values(node, prop):
        ref = node_id(value)
        if ref:
            out.add(ref if ref.startswith("_:") else urljoin(base, ref.strip()))
    return out


def standalone_ids(expanded: Any) -> set[str]:
    """@ids of the nodes an expanded block describes outside every Dataset node.

    A Dataset the publisher wrote at the top of the block, in its @graph or
    inside a node that is not a Dataset is one of the page's own, even when
    another Dataset also refers to it or embeds it.
    """
    out: set[str] = set()
    stack: list[tuple[Any, bool]] = [(expanded, False)]
    while stack:
        value, inside = stack.pop()
        if isinstance(value, list):
            stack.extend((v, inside) for v in value)
        elif isinstance(value, dict) and "@value" not in value:
            ident = value.get("@id")
            if isinstance(ident, str) and len(value) > 1 and not inside:
                out.add(ident)
            below = inside or _typed_dataset(value.get("@type"))
            stack.extend((v, below) for k, v in value.items() if k not in ("@id", "@type"))
    return out


def _typed_dataset(kinds: Any) -> bool:
    return isinstance(kinds, list) and SCHEMA + "Dataset" in kinds


def _embedded(node: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(@id, top-level property) of every node embedded anywhere below a framed node."""
    out: list[tuple[str, str]] = []
    for prop, raw in node.items():
        if prop.startswith("@"):
            continue
        stack = [raw]
        while stack:
            value = stack.pop()
            if isinstance(value, list):
                stack.extend(value)
            elif isinstance(value, Mapping) and "@value" not in value:
                ident = value.get("@id")
                if isinstance(ident, str):
                    out.append((ident, prop))
                stack.extend(v for k, v in value.items() if k not in ("@id", "@type"))
    return out


def secondary_datasets(
    graph: Sequence[Mapping[str, Any]],
    standalone: set[str] | Callable[[], set[str]],
    base: str,
) -> list[Secondary]:
    """The framed Datasets (by position) that describe, or are nested in, another one.

    `standalone` is `standalone_ids` of the block the graph was framed from, or
    a function giving it: it is only needed when a Dataset is embedded in
    another, so most pages never walk the block for it. Linear in the framed
    graph (whose size `adapter.jsonld.frame.embedded_size` bounds): a page may
    frame thousands of Datasets.
    """
    ids = _ids(graph)
    first = {ident: j for j, ident in reversed(list(enumerate(ids))) if ident}
    records = [is_catalog_record(node) for node in graph]
    found: dict[int, Secondary] = {}
    for i, node in enumerate(graph):
        if records[i]:
            targets = [first.get(ref) for ref in _refs(node, "about", base)]
            owners = sorted(j for j in targets if j is not None and j != i and not records[j])
            if owners:
                found[i] = Secondary(i, owners[0], "catalog-record")
    containers: dict[str, list[tuple[int, str]]] = {}
    # a Dataset is nested only in another one: a graph of one has none to walk for (and
    # most pages frame one Dataset, whose walk and `standalone` were most of this cost)
    for j, node in enumerate(graph if len(graph) > 1 else ()):
        for ref, prop in _embedded(node):
            if ref in first:
                containers.setdefault(ref, []).append((j, prop))
    for i, own in enumerate(ids):
        if i in found or own is None or own not in containers:
            continue
        if callable(standalone):
            standalone = standalone()
        if own in standalone:
            continue
        for j, prop in containers[own]:
            if j != i and j not in found:
                found[i] = Secondary(i, j, prop)
                break
    return sorted(found.values(), key=lambda s: s.index)


def explain(graph: Sequence[Mapping[str, Any]], found: Secondary) -> str:
    """Why the node is not a Dataset of its own, for the repository manager."""
    what, owner = _name(graph[found.index]), _name(graph[found.primary])
    if found.how == "catalog-record":
        why = f"is a catalog record (additionalType dcat:CatalogRecord) about {owner}"
    else:
        why = f"is given only inside {owner} (its {found.how})"
    return f"{what} {why}; it is read as part of that Dataset, not as a Dataset of its own"


def _name(node: Mapping[str, Any]) -> str:
    ident = node.get("@id")
    if isinstance(ident, str) and not ident.startswith("_:"):
        return f"the Dataset {ident}"
    return "a Dataset without @id"
