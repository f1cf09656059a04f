"""The OAI-ORE resource map of a Dataset: one DataONE package instead of unrelated objects.

DataONE indexes a package through its resource map (formatId
`http://www.openarchives.org/ore/terms`, RDF/XML): the CN's indexer gives every
aggregated object the map's PID in its `resourceMap` field and relates them with
`cito:documents` / `cito:isDocumentedBy`. System metadata has no field for it
(SystemMetadata v2 has no `resourceMap` element); the map alone says what belongs
together. Without one, a Dataset's JSON-LD and its metadata copy are indexed as
two unrelated metadata objects.

The Dataset's JSON-LD object is the science metadata, and its metadata copy (when
the node syncs one) is aggregated as an object the JSON-LD documents: the triples
`d1_common.resource_map` makes for that package, with its identifiers
(`https://cn.dataone.org/cn/v2/resolve/` + the PID percent-encoded as its
`encodePathElement` does).

Identifiers (documented in docs/sync-and-api.md):
- seriesId: `<Dataset seriesId>#resourcemap`, the way a metadata copy's is
  `<Dataset seriesId>#iso19139`. Not `<seriesId>/resourcemap`: a DOI may hold `/`,
  so that could be another Dataset's DOI; no metadata format's short name (and no
  8-hex-digit digest of an unknown one) is `resourcemap`.
- PID: `resource_map_sha256:<hex>`, hex the sha256 of what the map aggregates (the
  JSON-LD object's PID, then the other PIDs sorted, one a line), plus `.<n>` from
  the store's registry when that set was aggregated before (a metadata copy dropped
  and linked again). `resource_map_` is the prefix MetacatUI (DataONE's web client) gives maps.
  A map names itself (`dcterms:identifier`), so its PID cannot be the checksum of
  its bytes as a Dataset's is; it is the checksum of its members instead, which
  anyone can recompute from the map.
A new version is written whenever the set of aggregated PIDs changes: a new
Dataset version or a new metadata copy version has a new PID, so a new map.

The bytes are written as text, as system metadata is: a map is written on the
one thread every store write goes through, and building it as a graph with
`d1_common.resource_map` and rdflib's RDF/XML writer cost about 2.4 ms a page
there. The text is what that writer produced for the same triples sorted (the
previous version's bytes, so maps already in a store read the same): one
`rdf:Description` per subject, subjects and then (predicate, object) in
code-point order, attributes quoted and text escaped as `xml.sax.saxutils`
does. The same members always give the same bytes. tests/dataone/test_resourcemap.py
holds DataONE's builder as the reference: graph for graph, and byte for byte.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from adapter import USER_AGENT

RESOURCE_MAP_FORMAT = "http://www.openarchives.org/ore/terms"
RESOURCE_MAP_MEDIA_TYPE = "application/rdf+xml"
RESOURCE_MAP_FILE_NAME = "resourcemap.rdf"
RESOURCE_MAP_PID_PREFIX = "resource_map_sha256:"
SID_SUFFIX = "#resourcemap"


@dataclass(frozen=True, slots=True)
class Package:
    """What a resource map aggregates: the Dataset's JSON-LD and what it documents."""

    metadata_pid: str  # the Dataset's JSON-LD object
    documented: tuple[str, ...] = ()  # its metadata copy (sorted)

    @classmethod
    def of(cls, metadata_pid: str, documented: Iterable[str] = ()) -> Package:
        return cls(metadata_pid, tuple(sorted(set(documented) - {metadata_pid})))

    @property
    def pids(self) -> frozenset[str]:
        return frozenset((self.metadata_pid, *self.documented))

    @property
    def key(self) -> str:
        """sha256 hex of the members: decides "changed", and names the map."""
        text = "\n".join((self.metadata_pid, *self.documented))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def series_id(dataset_series: str) -> str:
    """The map's seriesId, derived from its Dataset's (see the module docstring)."""
    return dataset_series + SID_SUFFIX


def is_series(sid: str) -> bool:
    return sid.endswith(SID_SUFFIX)


def pid_for(package: Package, n: int = 1) -> str:
    """The n-th PID of a map of these members in a store."""
    if n < 1:
        raise ValueError(f"PID counter {n} must be 1 or more")
    base = RESOURCE_MAP_PID_PREFIX + package.key
    return base if n == 1 else f"{base}.{n}"


RESOLVE = "https://cn.dataone.org/cn/v2/resolve/"  # d1_common's URL_DATAONE_ROOT, v2
PID_SAFE = ":@$!()',~*&="  # d1_common.const.URL_PATH_ELEMENT_SAFE_CHARS
ORE = "http://www.openarchives.org/ore/terms/"
NAMESPACES = {  # the prefixes of the predicates a map uses (rdflib writes only those)
    "cito": "http://purl.org/spar/cito/",
    "dcterms": "http://purl.org/dc/terms/",
    "ore": ORE,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
}
# (predicate IRI, qname) of each predicate a map uses; the IRI is the sort key
TYPE = (NAMESPACES["rdf"] + "type", "rdf:type")
IDENTIFIER = (NAMESPACES["dcterms"] + "identifier", "dcterms:identifier")
CREATOR = (NAMESPACES["dcterms"] + "creator", "dcterms:creator")
DESCRIBES = (ORE + "describes", "ore:describes")
AGGREGATES = (ORE + "aggregates", "ore:aggregates")
AGGREGATED_BY = (ORE + "isAggregatedBy", "ore:isAggregatedBy")
DOCUMENTS = (NAMESPACES["cito"] + "documents", "cito:documents")
DOCUMENTED_BY = (NAMESPACES["cito"] + "isDocumentedBy", "cito:isDocumentedBy")
DEFINED_BY = (NAMESPACES["rdfs"] + "isDefinedBy", "rdfs:isDefinedBy")
LABEL = (NAMESPACES["rdfs"] + "label", "rdfs:label")
# (predicate IRI, object, the element): a tuple sorts as rdflib sorted the triples
_Statement = tuple[str, str, str]


def _link(predicate: tuple[str, str], iri: str) -> _Statement:
    return predicate[0], iri, f"    <{predicate[1]} rdf:resource={quoteattr(iri)}/>\n"


def _text(predicate: tuple[str, str], text: str) -> _Statement:
    escaped = escape(text, {"\r": "&#13;"})  # as rdflib's writer: the parser keeps a CR so
    return predicate[0], text, f"    <{predicate[1]}>{escaped}</{predicate[1]}>\n"


_AGGREGATION_CLASS = (  # what every map says of ore:Aggregation
    ORE + "Aggregation",
    {_link(DEFINED_BY, ORE), _text(LABEL, "Aggregation")},
)
_CREATED_BY = _text(CREATOR, USER_AGENT)


def resolve_uri(pid: str) -> str:
    """The IRI DataONE's library gives an object in a map: its CN resolve URL."""
    return RESOLVE + quote(pid, safe=PID_SAFE)


def _statements(map_pid: str, package: Package) -> dict[str, set[_Statement]]:
    """Subject IRI -> what the map says of it: `d1_common.resource_map`'s triples."""
    me = resolve_uri(map_pid)
    aggregation = me + "#aggregation"
    meta = resolve_uri(package.metadata_pid)
    said: dict[str, set[_Statement]] = {
        me: {
            _link(TYPE, ORE + "ResourceMap"),
            _text(IDENTIFIER, map_pid),
            _CREATED_BY,
            _link(DESCRIBES, aggregation),
        },
        aggregation: {_link(TYPE, ORE + "Aggregation")},
        _AGGREGATION_CLASS[0]: set(_AGGREGATION_CLASS[1]),
    }
    in_aggregation = _link(AGGREGATED_BY, aggregation)
    for pid in (package.metadata_pid, *package.documented):
        uri = resolve_uri(pid)
        said[aggregation].add(_link(AGGREGATES, uri))
        said.setdefault(uri, set()).update((in_aggregation, _text(IDENTIFIER, pid)))
    for pid in package.documented:
        uri = resolve_uri(pid)
        said[uri].add(_link(DOCUMENTED_BY, meta))
        said[meta].add(_link(DOCUMENTS, uri))
    return said


def build(map_pid: str, package: Package) -> bytes:
    """The map's RDF/XML as text; same input, same bytes (see the module docstring)."""
    said = _statements(map_pid, package)
    prefixes = ("cito", "dcterms", "ore", "rdf", "rdfs") if package.documented else NO_CITO
    out = [_HEAD[prefixes]]
    for subject in sorted(said):
        out.append(f"  <rdf:Description rdf:about={quoteattr(subject)}>\n")
        out += [element for _, _, element in sorted(said[subject])]
        out.append("  </rdf:Description>\n")
    out.append("</rdf:RDF>\n")
    return "".join(out).encode("utf-8")


NO_CITO = ("dcterms", "ore", "rdf", "rdfs")  # a Dataset alone: no cito predicate, no prefix
_HEAD = {  # rdflib declares the prefixes of the predicates used, sorted
    prefixes: '<?xml version="1.0" encoding="utf-8"?>\n<rdf:RDF\n'
    + "".join(f'   xmlns:{prefix}="{NAMESPACES[prefix]}"\n' for prefix in prefixes)
    + ">\n"
    for prefixes in (("cito", "dcterms", "ore", "rdf", "rdfs"), NO_CITO)
}
