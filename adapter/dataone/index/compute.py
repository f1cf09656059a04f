"""A Dataset's DataONE search fields: the indexer's preparation, queries and converters.

`dataone_index(document)` takes the JSON-LD the adapter syncs for a Dataset
(the publisher's block for it, `DatasetResult.original`: the object the
coordinating node indexes) and returns the Solr fields the indexer would fill,
keyed by their names: a string for a field the indexer fills once (`LIMIT 1`),
a list for one it fills with every value; a field the index would leave empty
is absent. The `geohash_1` ... `geohash_9` fields are derived from the box as
the indexer derives them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from rdflib import Graph, Literal, URIRef, Variable
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.evaluate import evalQuery
from rdflib.plugins.sparql.evalutils import _val
from rdflib.plugins.sparql.sparql import FrozenBindings, Query
from rdflib.term import Node

from adapter.dataone.index import convert
from adapter.dataone.index.prepare import SCHEMA, prepared, to_graph
from adapter.dataone.index.queries import FIELDS, Field

IndexFields = dict[str, str | list[str]]
HAS_PART = URIRef(SCHEMA + "hasPart")
_VALUE, _DS = Variable("value"), Variable("ds")
MAX_VALUES = 200  # values kept per field: a report needs no more

_CONVERTERS: dict[str, Callable[[str], str | None]] = {
    "date": convert.solr_date,
    "latitude": convert.latitude,
    "longitude": convert.longitude,
}
BOX = ("northBoundCoord", "southBoundCoord", "eastBoundCoord", "westBoundCoord")


_PARSING = threading.Lock()
_parsed: dict[str, Query] = {}  # field name -> its parsed query
_by_text: dict[str, Query] = {}  # query text -> its parse


def _query(field: Field) -> Query:
    """The field's query, parsed the first time a graph could match it (~15 ms of CPU each,
    pyparsing; a plain Dataset needs about a third of them). rdflib's SPARQL parser is not
    thread-safe, and a sync checks pages in threads: one thread parses at a time."""
    query = _parsed.get(field.name)
    if query is None:
        with _PARSING:
            query = _parsed.get(field.name)
            if query is None:
                # fields whose patterns are alike (author and origin, authorLastName and
                # investigator) share one parse
                query = _by_text.get(field.text) or prepareQuery(field.text)
                _parsed[field.name] = _by_text[field.text] = query
    return query


def parse_queries() -> None:
    """Parse every field's query now: about 0.5 s of CPU, paid once per process. A parent
    that forks the processes which check pages parses them before it forks, and no child
    pays it again."""
    for field in FIELDS:
        _query(field)


def dataone_index(document: Any) -> IndexFields:
    """The Solr fields DataONE's indexer would fill from this Dataset JSON-LD."""
    return index_graph(to_graph(prepared(document)))


def index_graph(graph: Graph) -> IndexFields:
    """The fields of an already prepared graph (see `prepare`)."""
    out: IndexFields = {}
    present = {str(p) for p in graph.predicates(unique=True)}
    sub: dict[Node, Literal] = {}  # each Dataset's ?sub: whether another one lists it
    solved: dict[str, list[FrozenBindings]] = {}  # query text -> its solutions
    for field in FIELDS:
        if not any(_iri(need) in present for need in field.needs) or not all(
            _iri(need) in present for need in field.also
        ):
            continue  # a predicate every match needs is absent: the query finds nothing
        if field.text not in solved:  # author and origin, say, order the same solutions
            solved[field.text] = solutions(graph, field)
        found: list[str] = []
        for term in _values(graph, field, solved[field.text], sub):
            text = convert.jena_text(term)
            if field.converter is not None:
                converted = _CONVERTERS[field.converter](text)
                if not converted:
                    continue
                text = converted
            found.append(text)
            if len(found) >= MAX_VALUES:
                break
        if found:
            out[field.name] = found if field.many else found[0]
    out.update(_geohashes(out))
    return out


def solutions(graph: Graph, field: Field) -> list[FrozenBindings]:
    """The solutions of the field's pattern (`Field.text`), in rdflib's order. evalQuery is
    what graph.query runs, without the graph's namespaces that query collects first for a
    query given as text (a tenth of the index's CPU)."""
    return list(evalQuery(graph, _query(field), {})["bindings"])


def _values(
    graph: Graph, field: Field, solutions: list[FrozenBindings], sub: dict[Node, Literal]
) -> list[Node]:
    """The ?value column of the field's whole query (`Field.sparql`), term for term and in
    its order: rdflib runs the pattern (`Field.text`); the rest is rdflib's evaluation of
    the query's outer parts, step for step. The group's filter (BOUND(?value), and `TOP`)
    keeps the rows in order; ORDER BY is one stable sort a key, last key first, on the key
    rdflib sorts by (`_val`, an unbound variable as itself); DISTINCT keeps the first of
    each projected row; LIMIT 1 the first row."""
    rows: list[tuple[Node, Literal, Any]] = []
    for row in solutions:
        value, ds = row.get(_VALUE), row[_DS]
        if value is None:
            continue  # FILTER(BOUND(?value))
        listed = sub.get(ds)
        if listed is None:  # BIND(EXISTS { ?other SO:hasPart ?ds . } AS ?sub)
            listed = sub[ds] = Literal((None, HAS_PART, ds) in graph)
        if field.top and listed:
            continue  # FILTER NOT EXISTS { ?other SO:hasPart ?ds . }
        rows.append((value, listed, row))
    for key in reversed(field.keys):
        rows.sort(key=partial(_order_key, key))
    values = _distinct(rows) if field.distinct else [value for value, _, _ in rows]
    return values if field.many else values[:1]


def _distinct(rows: list[tuple[Node, Literal, Any]]) -> list[Node]:
    """SELECT DISTINCT ?value ?sub: the first row of each (?value, ?sub), in order."""
    seen: set[tuple[Node, Literal]] = set()
    out: list[Node] = []
    for value, listed, _ in rows:
        if (value, listed) not in seen:
            seen.add((value, listed))
            out.append(value)
    return out


def _order_key(key: str, row: tuple[Node, Literal, Any]) -> Any:
    """rdflib's ORDER BY key of one solution for one variable."""
    if key == "value":
        return _val(row[0])
    if key == "sub":
        return _val(row[1])
    term = row[2].get(Variable(key))
    return _val(Variable(key) if term is None else term)


def _iri(term: str) -> str:
    """A schema.org term's IRI; a full IRI as it is."""
    return term if ":" in term else SCHEMA + term


def _geohashes(fields: IndexFields) -> IndexFields:
    """geohash_1..9 from the box, as the indexer's GeohashConverter makes them; none when a
    coordinate is missing or south is above north (where the indexer fails on the record)."""
    coords = [fields.get(name) for name in BOX]
    if not all(isinstance(c, str) for c in coords):
        return {}
    north, south, east, west = (float(str(c)) for c in coords)
    if south > north:
        return {}
    lat, lon = convert.box_centre(north, south, east, west)
    return {f"geohash_{n}": [convert.geohash(lat, lon, n)] for n in range(1, 10)}
