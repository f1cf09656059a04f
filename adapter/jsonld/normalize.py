"""Normalize stage: JSON-LD blocks -> each schema.org Dataset, framed, offline.

Per block: expand with pyld (base = the page URL, so relative `@id`s resolve;
the bundled schema.org context from `adapter.jsonld.loader`, no network) --
or, for the common plain shape, with `adapter.jsonld.expand` and
`adapter.jsonld.frame_fast`, which give exactly pyld's results ~5x faster and leave
anything else to pyld (`FAST_PATHS = False` forces pyld; tests compare);
rewrite https://schema.org/ IRIs to http://schema.org/ (SOSO: harvesters treat
both as one; an info finding says so); frame the EXPANDED document with the
small context `{"@vocab": "http://schema.org/"}` and `"@embed": "@always"`
(`adapter.jsonld.frame`: framing against the full schema.org context costs ~20 ms
against ~3 ms; `@once` would embed a node shared by two properties in only
one of them). A block whose shared references would embed past
`max_json_nodes` is refused before pyld sees it. A Dataset that only describes
another Dataset of the block (a CDIF catalog record), or is only written
inside another Dataset (a licence, citation or isBasedOn typed Dataset, a
subjectOf), stays embedded where it is and is not a Dataset of the page
(`adapter.jsonld.catalogrecords`).

The framed shape (what `NormalizedDataset.framed` holds), kept simple for checks:
- `@context` first (`{"@vocab": "http://schema.org/", "spdx": ...}` plus the
  IRI coercions below), so the framed Dataset is a standalone JSON-LD document;
- keys are schema.org terms (`name`, `identifier`), types compact (`Dataset`);
  other vocabularies keep full IRIs, except the `spdx:` prefix;
- one value is a scalar, several are a list (read them with
  `adapter.jsonld.framed.values`, which also unwraps `@list`);
- literals are plain strings/numbers/booleans; a typed literal
  (`{"@value": "2024-01-02", "@type": "Date"}`) is given as its plain value;
  language-tagged strings stay `{"@value", "@language"}`;
- `url`, `contentUrl`, `sameAs`, `embedUrl`, `thumbnailUrl` are plain IRI
  strings whether the publisher's context made them IRIs or literals (the
  framed `@context` declares them `@id`, so the document stays valid JSON-LD);
  relative ones are resolved against the page;
- other node references are `{"@id": ...}`, nodes present in the block are
  embedded in full wherever referenced; blank-node ids are pruned;
- the Dataset's own `@id` is absolute (resolved against the page).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyld import jsonld

from adapter.findings import Finding, FindingType, Severity
from adapter.jsonld import expand as fastexpand
from adapter.jsonld import frame_fast as fastframe
from adapter.jsonld.catalogrecords import explain, secondary_datasets, standalone_ids
from adapter.jsonld.context import PYLD_LOCK
from adapter.jsonld.frame import FRAME_CONTEXT, SCHEMA, embedded_size, frame_expanded
from adapter.jsonld.loader import load_document, refused_url
from adapter.jsonld.locate import (
    dataset_candidates,
    has_type,
    locate_datasets,
    near_misses,
    no_dataset_message,
)
from adapter.jsonld.normalforms import IRI_PROPERTIES, simplify, to_http
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.page.extract import JsonLdBlock

# pyld keeps its context caches in module-level LRU caches that are not thread-safe;
# its work holds the GIL anyway, so serializing it costs threads nothing.
_PYLD_LOCK = PYLD_LOCK
# False forces pyld for every block (the reference the fast paths are tested against).
FAST_PATHS = True
DATASET = SCHEMA + "Dataset"
OUTPUT_CONTEXT: dict[str, Any] = {
    **FRAME_CONTEXT,
    **{name: {"@type": "@id"} for name in IRI_PROPERTIES},
}

NO_DATASET = FindingType(
    "normalize/no-dataset",
    Severity.ERROR,
    "No schema.org Dataset (type http://schema.org/Dataset) was found in the page's JSON-LD, "
    "so there is nothing for DataONE to harvest.",
)
REMOTE_CONTEXT = FindingType(
    "normalize/remote-context",
    Severity.WARNING,
    "A JSON-LD block uses a remote @context other than schema.org's; the adapter does not "
    "fetch contexts (slow, fragile, unsafe), so the block is skipped. Use the schema.org "
    "context and put extra terms in an inline context.",
)
INVALID_JSONLD = FindingType(
    "normalize/invalid-jsonld",
    Severity.WARNING,
    "A JSON-LD block is valid JSON but not valid JSON-LD (e.g. a malformed @context or @id); "
    "it is skipped.",
)
NO_CONTEXT = FindingType(
    "normalize/no-context",
    Severity.WARNING,
    "A JSON-LD block has no @context, so its terms mean nothing to a JSON-LD reader. Add "
    '"@context": "https://schema.org/".',
)
EMBEDDING_TOO_LARGE = FindingType(
    "normalize/embedding-too-large",
    Severity.WARNING,
    "Writing out the Dataset with every node it refers to embedded in full would produce more "
    "values than the adapter's limit (max_json_nodes): nodes refer to each other many times "
    "over. The block is skipped.",
)
OVER_LIMIT = FindingType(
    "normalize/dataset-over-limit",
    Severity.ERROR,
    "The page's JSON-LD could not be read within one of the adapter's limits (the message "
    "names the `limits` field), so no Dataset was read -- not because the page has none. "
    "Raise that limit for the node (`limits:` in its configuration; ADAPTER_LIMITS for "
    "check-dataset) or publish fewer values per JSON-LD block.",
)
EMBEDDED_DATASET = FindingType(
    "normalize/embedded-dataset",
    Severity.INFO,
    "A node typed Dataset describes, or is only written inside, another Dataset of the page "
    "(a CDIF catalog record, a licence, citation, isBasedOn or subjectOf value typed "
    "Dataset); it is read as part of that Dataset, not as a Dataset of its own.",
)
HTTPS_DATASET_TYPE = FindingType(
    "normalize/https-dataset-type",
    Severity.WARNING,
    "The Dataset's @type is https://schema.org/Dataset (an https @vocab or prefix, or the IRI "
    "written out). The adapter reads it as http://schema.org/Dataset, but DataONE's "
    'slender-node software does not and drops the page: write "@type": "Dataset" with '
    '"@context": "https://schema.org/" (its @vocab is http://schema.org/).',
)
HTTPS_NAMESPACE = FindingType(
    "normalize/https-namespace",
    Severity.INFO,
    "The block uses the https://schema.org/ namespace; the adapter read it as http://schema.org/ "
    "(science-on-schema.org recommends http://schema.org/; harvesters treat both as one).",
)


@dataclass(slots=True)
class NormalizedDataset:
    id: str | None  # the Dataset's @id (absolute, resolved against the page)
    framed: dict[str, Any]  # the Dataset framed; see the module docstring for its shape
    original: dict[str, Any]  # the publisher's JSON-LD for this Dataset, with its @context
    block_index: int
    where: str  # where the Dataset is, e.g. "block 2 $['@graph'][1]"
    path: str = "$"  # its JSON path in the block, e.g. "$['@graph'][1]"


def _expand(
    block: JsonLdBlock, base_url: str, page: str, findings: list[Finding]
) -> list[Any] | None:
    """The block expanded, https://schema.org/ read as http, or None with a finding.

    `adapter.jsonld.expand` when it is sure (it also does `to_http`'s rewriting), else pyld.
    """
    where = f"block {block.index}"
    fast = _fast_expand(block, base_url)
    if fast is not None:
        expanded, https = fast
        _https_finding(block, https, page, findings)
        return expanded
    options = {"base": base_url, "documentLoader": load_document}
    try:
        with _PYLD_LOCK:
            expanded = jsonld.expand(block.data, options)
    except jsonld.JsonLdError as exc:
        remote = refused_url(exc)
        if remote is not None:
            message = (
                f"JSON-LD block {block.index} uses the remote context {remote}; the adapter "
                "does not fetch contexts other than schema.org's, so the block is skipped."
            )
            findings.append(REMOTE_CONTEXT.at(page, message, where))
        else:
            message = f"JSON-LD block {block.index} is not valid JSON-LD: {_reason(exc)}."
            findings.append(INVALID_JSONLD.at(page, message, where))
        return None
    except Exception as exc:  # pyld is a third-party parser: any failure is this block's
        message = f"JSON-LD block {block.index} could not be read as JSON-LD ({exc!r:.200})."
        findings.append(INVALID_JSONLD.at(page, message, where))
        return None
    counter = [0]
    unified: list[Any] = to_http(expanded, counter)
    _https_finding(block, counter[0], page, findings)
    return unified


def _fast_expand(block: JsonLdBlock, base_url: str) -> tuple[list[Any], int] | None:
    if not FAST_PATHS:
        return None
    try:
        return fastexpand.expand(block.data, base_url)
    except Exception:  # a shape the fast path mishandles: pyld decides
        return None


def _https_finding(block: JsonLdBlock, count: int, page: str, findings: list[Finding]) -> None:
    if count:
        message = (
            f"JSON-LD block {block.index} uses https://schema.org/ ({count} terms); "
            "read as http://schema.org/."
        )
        findings.append(HTTPS_NAMESPACE.at(page, message, f"block {block.index}"))


def _reason(exc: jsonld.JsonLdError) -> str:
    code = getattr(exc, "code", None)
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{code}: {text}"[:300] if code else text[:300]


def _frame(expanded: list[Any]) -> list[dict[str, Any]]:
    """pyld's framed Datasets, blank-node ids still on (see `adapter.jsonld.catalogrecords`)."""
    framed = _fast_frame(expanded)
    if framed is None:
        with _PYLD_LOCK:
            framed = frame_expanded(expanded)
    graph = framed.get("@graph", [])
    return [n for n in (graph if isinstance(graph, list) else [graph]) if isinstance(n, dict)]


def _fast_frame(expanded: list[Any]) -> dict[str, Any] | None:
    if not FAST_PATHS:
        return None
    try:
        return fastframe.frame(expanded, FRAME_CONTEXT)
    except Exception:  # as in _fast_expand
        return None


def _output(node: dict[str, Any], base: str) -> dict[str, Any]:
    body = simplify({k: v for k, v in node.items() if k != "@context"}, base)
    return {"@context": OUTPUT_CONTEXT, **body}


def _own_datasets(
    expanded: list[Any], block: JsonLdBlock, base: str, findings: list[Finding]
) -> list[dict[str, Any]]:
    """The block's framed Datasets without those that only describe another one."""
    graph = _frame(expanded)
    secondary = secondary_datasets(graph, lambda: standalone_ids(expanded), base)
    for s in secondary:
        message = f"In JSON-LD block {block.index}, {explain(graph, s)}."
        findings.append(EMBEDDED_DATASET.at(base, message, f"block {block.index}"))
    dropped = {s.index for s in secondary}
    return [_output(n, base) for i, n in enumerate(graph) if i not in dropped]


HTTPS_DATASET = "https://schema.org/Dataset"


def https_dataset_types(data: Any, base_url: str) -> list[str]:
    """JSON paths of the block's own Datasets whose @type expands to the https IRI.

    Expanded JSON-LD has lost it (`to_http`), so each Dataset's types are expanded
    again with its nearest @context: only for blocks that used https://schema.org/.
    """
    out: list[str] = []
    seen: dict[str, bool] = {}  # an array of 200 Datasets shares one context and type
    for path, node, context, inside in dataset_candidates(data):
        kinds = node.get("@type", node.get("type"))
        if inside or kinds is None:
            continue
        probe = {"@context": context, "@type": kinds} if context is not None else {"@type": kinds}
        key = json.dumps(probe, sort_keys=True, default=str)
        if key not in seen:
            seen[key] = _https_type(probe, base_url)
        if seen[key]:
            out.append(path)
    return out


def _https_type(probe: dict[str, Any], base_url: str) -> bool:
    try:
        with _PYLD_LOCK:
            expanded = jsonld.expand(probe, {"base": base_url, "documentLoader": load_document})
    except Exception:  # the block expanded before; a probe that cannot is no finding
        return False
    return any(HTTPS_DATASET in (n.get("@type") or []) for n in expanded if isinstance(n, dict))


def _no_context(block: JsonLdBlock) -> bool:
    """A block that needs a @context and has none (expanded JSON-LD, whose every term is
    already an IRI or a keyword, needs none)."""
    items = block.data if isinstance(block.data, list) else [block.data]
    return (
        block.syntax != "rdfa"
        and not any(isinstance(i, dict) and "@context" in i for i in items)
        and not _expanded(items)
    )


def _expanded(items: list[Any]) -> bool:
    """Whether every node's keys are IRIs or keywords: JSON-LD in expanded form."""
    nodes = [i for i in items if isinstance(i, dict)]
    return bool(nodes) and all(
        key.startswith("@") or "://" in key for node in nodes for key in node
    )


def normalize(
    blocks: Sequence[JsonLdBlock], *, base_url: str, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[NormalizedDataset], list[Finding]]:
    """Every schema.org Dataset in `blocks`, framed, with the findings on the way."""
    datasets: list[NormalizedDataset] = []
    findings: list[Finding] = []
    seen_types: list[tuple[int, str]] = []
    skipped = 0
    capped: list[int] = []  # blocks with a Dataset skipped by max_json_nodes
    for block in blocks:
        if _no_context(block):
            message = f"JSON-LD block {block.index} has no @context; its terms are ignored."
            findings.append(NO_CONTEXT.at(base_url, message, f"block {block.index}"))
        said = len(findings)
        expanded = _expand(block, base_url, base_url, findings)
        if expanded is None:
            skipped += 1
            continue
        if not has_type(expanded, DATASET):
            seen_types.extend((block.index, t) for t in near_misses(expanded))
            continue
        if any(f.code == HTTPS_NAMESPACE.code for f in findings[said:]):  # this block's
            for path in https_dataset_types(block.data, base_url):
                message = (
                    f"The Dataset at block {block.index} {path} has the @type "
                    "https://schema.org/Dataset; DataONE's slender-node software drops such "
                    'pages. Write "@type": "Dataset" with "@context": "https://schema.org/".'
                )
                where = f"block {block.index} {path}"
                findings.append(HTTPS_DATASET_TYPE.at(base_url, message, where))
        if embedded_size(expanded, limits.max_json_nodes) > limits.max_json_nodes:
            message = (
                f"JSON-LD block {block.index} would frame to more than {limits.max_json_nodes} "
                "values (limit max_json_nodes) or 200 levels of embedded nodes, because its "
                "nodes refer to each other many times over or in long chains; it is skipped."
            )
            findings.append(EMBEDDING_TOO_LARGE.at(base_url, message, f"block {block.index}"))
            skipped += 1
            capped.append(block.index)
            continue
        try:
            framed = _own_datasets(expanded, block, base_url, findings)
        except Exception as exc:  # as in _expand: a bad block never stops the page
            message = f"JSON-LD block {block.index} could not be framed ({exc!s:.200})."
            findings.append(INVALID_JSONLD.at(base_url, message, f"block {block.index}"))
            skipped += 1
            continue
        places = locate_datasets(block.data, base_url, [d.get("@id") for d in framed])
        for node, (path, original) in zip(framed, places, strict=True):
            node_iri = node.get("@id")
            iri = node_iri if isinstance(node_iri, str) and not node_iri.startswith("_:") else None
            where = f"block {block.index} {path}"
            datasets.append(NormalizedDataset(iri, node, original, block.index, where, path))
    if capped and not datasets:
        blocks_ = [f"block {i}" for i in capped]
        cap = limits.max_json_nodes
        findings.append(over_limit(base_url, blocks_, "max_json_nodes", cap, sure=True))
    elif not datasets:
        findings.append(NO_DATASET.at(base_url, no_dataset_message(seen_types, skipped)))
    return datasets, findings


def over_limit(url: str, blocks: Sequence[str], limit: str, value: object, sure: bool) -> Finding:
    """The finding that says a cap, not the page, left no Dataset to read."""
    holds = "holds a Dataset" if sure else "may hold the Dataset"
    message = (
        f"The page's JSON-LD ({', '.join(blocks)}) {holds}, but reading it would pass the "
        f"adapter's limit `{limit}` (now {value}), so no Dataset was read. Raise "
        f"`limits.{limit}` for this node, or publish fewer values per JSON-LD block."
    )
    return OVER_LIMIT.at(url, message, blocks[0] if len(blocks) == 1 else None)
