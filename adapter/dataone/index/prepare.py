"""The Dataset JSON-LD as DataONE's indexer prepares it, loaded as RDF.

DataONE's coordinating node indexes a `science-on-schema.org/Dataset;ld+json`
object (its JsonLdSubprocessor) in three JSON-LD steps before any query:
expand the document, compact it to the schema.org context, expand it again
with a schema.org context in which `creator` and `description` are ordered
lists (`@container: @list`). So a plain array of creators is read in document
order and a plain `description` string is a list of one. The result is loaded
as RDF and queried with SPARQL (`adapter.dataone.index.queries`).

Here the same three steps run in pyld, offline: every spelling of the
schema.org context is the project's bundled one (`adapter.jsonld.loader`,
http://schema.org/ vocabulary, as the indexer forces http for both spellings),
and the last expansion uses that context plus the two list containers. The
RDF comes from pyld's own conversion (N-Quads) read by rdflib.

Jena's `list:index` property function (position and member of an RDF list)
has no SPARQL 1.1 equivalent, so `annotate_lists` writes each list cell's
position as a triple (`INDEX`) that the queries read; a list longer than
`MAX_LIST` keeps only its first cells' positions, which bounds the work.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from pyld import jsonld
from pyld.identifier_issuer import IdentifierIssuer
from pyld.jsonld import _is_absolute_iri
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

from adapter.jsonld.context import PYLD_LOCK
from adapter.jsonld.loader import SCHEMA_ORG_CONTEXT_URLS, RemoteContextRefused, bundled_context

SCHEMA = "http://schema.org/"
HTTPS = "https://schema.org/"
# the position of a list cell, as Jena's list:index gives it (0-based)
INDEX = URIRef("urn:adapter:dataone-index:position")
MAX_LIST = 1000  # list cells given a position; the rest are never an author
MAX_TRIPLES = 50_000  # a bigger document is not indexed here (the pipeline caps it well below)
LISTED = ("creator", "description")  # the indexer's context: these two are ordered lists


class TooLarge(Exception):
    """The document's RDF has more triples than `MAX_TRIPLES`."""


@cache
def _list_context() -> dict[str, Any]:
    """The bundled schema.org context with `creator` and `description` as `@list`s."""
    document = copy.deepcopy(bundled_context())
    ctx = document["@context"]
    for term in LISTED:
        ctx[term] = {"@id": f"schema:{term}", "@container": "@list"}
    return document


def _remote(url: str, document: dict[str, Any]) -> dict[str, Any]:
    return {"contentUrl": None, "contextUrl": None, "documentUrl": url, "document": document}


def _load(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The bundled schema.org context for any of its spellings; nothing else is fetched."""
    spelled = url.strip()
    if spelled not in SCHEMA_ORG_CONTEXT_URLS:
        raise RemoteContextRefused(spelled)
    return _remote(spelled, bundled_context())


@cache
def _https_context() -> dict[str, Any]:
    """The bundled context with the https://schema.org/ vocabulary (the indexer's https file)."""
    ctx: dict[str, Any] = copy.deepcopy(bundled_context()["@context"])
    ctx["@vocab"] = HTTPS
    ctx["schema"] = HTTPS
    return ctx


def is_https(expanded: list[Any]) -> bool:
    """Whether a top-level node of the expanded document uses the https://schema.org/ terms."""
    for node in expanded:
        if not isinstance(node, dict):
            continue
        kinds = node.get("@type", [])
        if any(k.startswith(HTTPS) for k in node if isinstance(k, str)) or any(
            isinstance(t, str) and t.startswith(HTTPS) for t in kinds
        ):
            return True
    return False


def prepared(document: Any) -> list[Any]:
    """expand -> compact to schema.org -> expand with the list context, as the indexer does.

    A document in the https://schema.org/ vocabulary is compacted to the https context, as
    the indexer does, so its terms come out the same; the last expansion reads the compacted
    document with the http list context. Both are given inline: pyld caches a context
    fetched by URL process-wide, so one URL cannot mean two contexts."""
    plain = {"documentLoader": _load}
    with PYLD_LOCK:
        # pyld's expand works on its own deep copy of the document; compaction is given the
        # expanded form as it is (expanding it again, as compact does by default, gives it back
        # unchanged and was a quarter of the preparation)
        expanded = jsonld.expand(document, plain)
        ctx = _https_context() if is_https(expanded) else bundled_context()["@context"]
        compacted = jsonld.compact(expanded, ctx, {**plain, "skipExpansion": True})
        compacted["@context"] = _list_context()["@context"]
        result: list[Any] = jsonld.expand(compacted, plain)
    return result


def _to_rdf(expanded: list[Any]) -> dict[str, list[dict[str, Any]]]:
    """pyld's `to_rdf` of an already expanded document, without the expansion `to_rdf` runs
    first (of a document expanded already: the same document, for a fifth of the preparation's
    CPU). The rest of `JsonLdProcessor.to_rdf` as it is: the node map, then each graph's
    triples; a graph named by a relative IRI left out."""
    processor = jsonld.JsonLdProcessor()
    options = {"base": "", "produceGeneralizedRdf": False, "processingMode": "json-ld-1.1"}
    issuer = IdentifierIssuer("_:b")
    node_map: dict[str, Any] = {"@default": {}}
    processor._create_node_map(expanded, node_map, "@default", issuer)
    return {
        name: processor._graph_to_rdf(graph, issuer, options)
        for name, graph in sorted(node_map.items())
        if name == "@default" or _is_absolute_iri(name)
    }


def to_graph(expanded: list[Any]) -> Graph:
    """The expanded document as an rdflib graph (every graph of it merged, as the indexer's
    default model holds them), with list positions (`INDEX`) added."""
    with PYLD_LOCK:
        dataset = _to_rdf(expanded)
    graph = Graph()
    count = 0
    for triples in dataset.values():
        count += len(triples)
        if count > MAX_TRIPLES:
            raise TooLarge(f"more than {MAX_TRIPLES} triples")
        for triple in triples:
            graph.add(
                (_term(triple["subject"]), _term(triple["predicate"]), _term(triple["object"]))
            )
    annotate_lists(graph)
    return graph


def _term(spec: dict[str, Any]) -> Any:
    """pyld's RDF term as rdflib's."""
    kind, value = spec["type"], spec["value"]
    if kind == "IRI":
        return URIRef(value)
    if kind == "blank node":
        return BNode(value[2:] if value.startswith("_:") else value)
    if spec.get("language"):
        return Literal(value, lang=spec["language"])
    datatype = spec.get("datatype")
    if not isinstance(datatype, str) or datatype == str(XSD.string):
        return Literal(value)
    return Literal(value, datatype=URIRef(datatype))


def annotate_lists(graph: Graph) -> None:
    """Give each cell of each RDF list its position, as Jena's list:index reads it."""
    heads = {s for s, _, _ in graph.triples((None, RDF.first, None))} - {
        o for _, _, o in graph.triples((None, RDF.rest, None))
    }
    for head in heads:
        cell: Any = head
        position = 0
        seen: set[Any] = set()
        while (
            isinstance(cell, BNode | URIRef)
            and cell != RDF.nil
            and cell not in seen
            and position < MAX_LIST
        ):
            seen.add(cell)
            graph.add((cell, INDEX, Literal(position)))
            cell = graph.value(cell, RDF.rest)
            position += 1
