"""Where each framed Dataset sits in the publisher's own block.

Framing loses positions, but a repository manager needs them ("block 2
$['@graph'][1]") and DataONE wants the publisher's own JSON-LD for the
Dataset. Candidates are the block's objects typed like a Dataset; a framed
Dataset is matched by its resolved `@id`, else by order. Iterative walks: the
block may be as deep as the limits allow. Also what the types of a block with
no Dataset say about the publisher's probable intent (near misses).
"""

from __future__ import annotations

from typing import Any

from adapter.jsonld.normalforms import resolve_iri


def _path(parent: str, key: str | int) -> str:
    return f"{parent}[{key}]" if isinstance(key, int) else f"{parent}[{key!r}]"


def _is_dataset_type(kinds: Any) -> bool:
    for kind in kinds if isinstance(kinds, list) else [kinds]:
        if isinstance(kind, str):
            local = kind.replace("#", "/").replace(":", "/").rsplit("/", 1)[-1]
            if local == "Dataset":
                return True
    return False


# A JSON path kept as (parent, key) links, written out only for the objects found.
_Link = tuple[Any, str | int] | None


def _write(link: _Link) -> str:
    keys: list[str | int] = []
    while link is not None:
        link, key = link
        keys.append(key)
    path = "$"
    for key in reversed(keys):
        path = _path(path, key)
    return path


def _candidates(data: Any) -> list[tuple[str, dict[str, Any], Any, bool]]:
    """(JSON path, object, nearest @context, inside another Dataset) for objects typed
    Dataset, in document order.

    One written inside another Dataset (a licence typed Dataset, a cited Dataset)
    is a reference (`adapter.jsonld.catalogrecords`): it is matched by its @id
    only, never by order.
    """
    found: list[tuple[str, dict[str, Any], Any, bool]] = []
    stack: list[tuple[Any, _Link, Any, bool]] = [(data, None, None, False)]
    while stack:
        value, link, context, inside = stack.pop()
        if isinstance(value, dict):
            context = value.get("@context", context)
            dataset = _is_dataset_type(value.get("@type", value.get("type")))
            if dataset:
                found.append((_write(link), value, context, inside))
            below = inside or dataset
            children = [(v, (link, k), context, below) for k, v in value.items() if k != "@context"]
            stack.extend(reversed(children))
        elif isinstance(value, list):
            items = [(v, (link, i), context, inside) for i, v in enumerate(value)]
            stack.extend(reversed(items))
    return found


def dataset_candidates(data: Any) -> list[tuple[str, dict[str, Any], Any, bool]]:
    """`_candidates`, for other readers of the publisher's own Dataset nodes."""
    return _candidates(data)


def _original(data: Any, path: str, node: dict[str, Any], context: Any) -> dict[str, Any]:
    if path == "$" and isinstance(data, dict):
        return data
    if context is None or "@context" in node:
        return dict(node)
    return {"@context": context, **node}


def locate_datasets(data: Any, base_url: str, ids: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """For each framed Dataset id (in order): its JSON path and standalone original."""
    candidates = _candidates(data)
    used: set[int] = set()
    out: list[tuple[str, dict[str, Any]]] = []
    for wanted in ids:
        chosen = None
        if isinstance(wanted, str) and not wanted.startswith("_:"):
            for n, (_, node, _, _) in enumerate(candidates):
                raw = node.get("@id", node.get("id"))
                if n not in used and isinstance(raw, str) and resolve_iri(base_url, raw) == wanted:
                    chosen = n
                    break
        if chosen is None:
            free = [n for n in range(len(candidates)) if n not in used]
            chosen = next((n for n in free if not candidates[n][3]), free[0] if free else None)
        if chosen is None:
            out.append(("$", data if isinstance(data, dict) else {"@graph": data}))
            continue
        used.add(chosen)
        path, node, context, _ = candidates[chosen]
        out.append((path, _original(data, path, node, context)))
    return out


def has_type(expanded: Any, iri: str) -> bool:
    """Whether `iri` is among `near_misses(expanded)`, stopping at the first node that has it."""
    stack = [expanded]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            kinds = value.get("@type")
            if "@value" not in value and (
                kinds == iri or (isinstance(kinds, list) and iri in kinds)
            ):
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def near_misses(expanded: Any) -> list[str]:
    """Every type IRI in an expanded document, in order, without repeats."""
    seen: dict[str, None] = {}
    stack = [expanded]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            kinds = value.get("@type")
            for kind in kinds if isinstance(kinds, list) else [kinds]:
                if isinstance(kind, str) and not value.keys() & {"@value"}:
                    seen.setdefault(kind, None)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return list(seen)


def no_dataset_message(seen: list[tuple[int, str]], skipped: int) -> str:
    """Why no Dataset was found: the types seen, with a hint for near misses."""
    parts = ["No schema.org Dataset was found in the page's JSON-LD."]
    for index, kind in seen[:5]:
        hint = _near_miss_hint(kind)
        if hint:
            parts.append(f"Block {index} has type {kind}: {hint}")
    others = sorted({k for _, k in seen if not _near_miss_hint(k)})
    if others:
        parts.append(f"Types found: {', '.join(others[:8])}.")
    if skipped:
        parts.append(f"{skipped} block(s) could not be read (see the findings above).")
    return " ".join(parts)


def _near_miss_hint(kind: str) -> str | None:
    """What is wrong with a type that was probably meant to be schema.org's Dataset."""
    local = kind.replace("#", "/").rsplit("/", 1)[-1]
    if kind.lower().endswith("schema.orgdataset"):
        return 'the @vocab lacks its trailing slash; write "@vocab": "http://schema.org/".'
    if local.lower() != "dataset":
        return None
    if local != "Dataset":
        return 'schema.org types are case-sensitive; write "@type": "Dataset".'
    return (
        "not http://schema.org/Dataset: the block's @context does not map Dataset to "
        'schema.org; use "@context": "https://schema.org/".'
    )
