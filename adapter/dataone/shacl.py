"""SHACL validation of a Dataset: the onboarding view, against our shapes or an operator's.

Opt-in (`check-dataset --shacl [FILE]`, a node's `checks.shacl`): DataONE's
onboarding runs pyshacl over the SOSO shapes, and an operator may have shapes
of their own. The data graph is the framed Dataset the adapter already has (its
context is inline, so nothing is fetched); each validation result becomes a
finding that names the property, the shape's message and the value. pyshacl
and rdflib's SHACL machinery are imported only here, on first use: a plain
`check-dataset` does not pay for them.

The default shapes (`shapes/soso.ttl`) are ours, written from the
science-on-schema.org guidelines, each naming its section. A result's severity
maps down one step (sh:Violation -> warning, sh:Warning and sh:Info -> info):
the onboarding view advises, the DataONE checks decide what is harvestable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from adapter.extras import install_hint, installed
from adapter.findings import Finding, FindingType, Severity

SOSO = "soso"  # the name of the bundled shapes
SCHEMA = "http://schema.org/"
MAX_RESULTS = 50  # findings per Dataset; a broken graph can fail a shape per node

VIOLATION = FindingType(
    "shacl/violation",
    Severity.WARNING,
    "The Dataset fails a required constraint of the SHACL shapes in use (the adapter's "
    "science-on-schema.org shapes, or the operator's file); the message names the property.",
)
ADVICE = FindingType(
    "shacl/advice",
    Severity.INFO,
    "The Dataset does not meet a recommendation (sh:Warning or sh:Info) of the SHACL shapes "
    "in use; the message names the property.",
)
UNREADABLE = FindingType(
    "shacl/unreadable",
    Severity.WARNING,
    "The Dataset could not be turned into RDF for SHACL validation, so it was not validated.",
)
SHAPES_UNREADABLE = FindingType(
    "shacl/shapes-unreadable",
    Severity.WARNING,
    "The SHACL shapes file the node names could not be read or parsed, so no Dataset was "
    "validated against it; fix the file (the message names it and the parser's complaint).",
)
MORE = FindingType(
    "shacl/more-results",
    Severity.INFO,
    "SHACL validation gave more results than are listed one by one; the rest were dropped.",
)


class ShapesError(ValueError):
    """The shapes file cannot be read or parsed (an operator's mistake, said with its path)."""


def load_shapes(source: str | Path) -> Any:
    """The shapes graph: `soso` (bundled) or a Turtle file; cached per source.

    Without pyshacl (the `shacl` extra) nothing could validate against them: said here, so
    `check-dataset --shacl` stops before fetching and a node's `checks.shacl` says it per page.
    """
    if not installed("pyshacl"):
        raise ShapesError(
            f"SHACL shapes need pyshacl, which is not installed: {install_hint('pyshacl')}"
        )
    return _load(str(source))


@cache
def _load(source: str) -> Any:
    from rdflib import Graph  # lazy: only the onboarding view needs RDF graphs

    graph = Graph()
    try:
        if source == SOSO:
            text = resources.files("adapter.dataone").joinpath("shapes/soso.ttl").read_text()
            graph.parse(data=text, format="turtle")
        else:
            graph.parse(source, format="turtle")
    except Exception as exc:  # rdflib raises many kinds for a bad file
        raise ShapesError(f"SHACL shapes {source}: {type(exc).__name__}: {exc}") from None
    return graph


def shacl_findings(framed: Mapping[str, Any], url: str, shapes: Any) -> list[Finding]:
    """Validate one framed Dataset against `shapes` (from `load_shapes`)."""
    from pyshacl import validate  # lazy: ~0.4 s to import, only for the onboarding view
    from rdflib import Graph

    data = Graph()
    try:
        data.parse(data=json.dumps(_local_context(framed)), format="json-ld")
    except Exception as exc:  # rdflib's JSON-LD parser raises many kinds
        return [UNREADABLE.at(url, f"The Dataset could not be read as RDF: {exc}")]
    _conforms, results, _text = validate(
        data, shacl_graph=shapes, inference="none", allow_warnings=True, advanced=False
    )
    from rdflib import RDF, URIRef

    datasets = set(data.subjects(RDF.type, URIRef(SCHEMA + "Dataset")))
    return _findings(results, url, datasets)


def _local_context(framed: Mapping[str, Any]) -> dict[str, Any]:
    """The framed Dataset with only its inline context (never a remote one)."""
    context = framed.get("@context")
    if not isinstance(context, Mapping):
        context = {"@vocab": SCHEMA}
    return {**framed, "@context": context}


def _findings(results: Any, url: str, datasets: set[Any]) -> list[Finding]:
    from rdflib import RDF, BNode, Namespace

    sh = Namespace("http://www.w3.org/ns/shacl#")
    top = [  # a sh:node failure's nested details are not results of their own
        r
        for report in results.subjects(RDF.type, sh.ValidationReport)
        for r in results.objects(report, sh.result)
    ]
    out: list[Finding] = []
    rows = sorted(
        (
            (
                str(results.value(r, sh.resultSeverity)),
                _path(results.value(r, sh.resultPath)),
                results.value(r, sh.focusNode) in datasets,
                str(results.value(r, sh.resultMessage) or "does not meet the shape"),
                results.value(r, sh.value),
            )
            for r in top
        ),
        key=lambda row: (row[0] != str(sh.Violation), row[1], str(row[3])),
    )
    for severity, path, on_dataset, message, value in rows[:MAX_RESULTS]:
        kind = VIOLATION if severity == str(sh.Violation) else ADVICE
        literal = value is not None and not isinstance(value, BNode)
        shown = f" (value: {_short(value)})" if literal and path else ""
        # a node inside the Dataset (a Place's geo, a distribution): where, by JSONPath descent
        where = (f"$.{path}" if on_dataset else f"$..{path}") if path else "$"
        out.append(kind.at(url, f"{path or 'the Dataset'}: {message}{shown}", where))
    if len(rows) > MAX_RESULTS:
        out.append(MORE.at(url, f"{len(rows) - MAX_RESULTS} more SHACL results were not listed."))
    return out


def _path(node: Any) -> str:
    text = str(node) if node is not None else ""
    return text.removeprefix(SCHEMA) if text.startswith("http") else ""


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."
