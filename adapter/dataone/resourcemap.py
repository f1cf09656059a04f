"""The OAI-ORE resource map of a Dataset: one DataONE package instead of unrelated objects.

DataONE indexes a package through its resource map (formatId
`http://www.openarchives.org/ore/terms`, RDF/XML): the CN's indexer gives every
aggregated object the map's PID in its `resourceMap` field and relates them with
`cito:documents` / `cito:isDocumentedBy`. System metadata has no field for it
(SystemMetadata v2 has no `resourceMap` element); the map alone says what belongs
together. Without one, a Dataset's JSON-LD and its metadata copy are indexed as
two unrelated metadata objects.

The map is built and read with DataONE's own `d1_common.resource_map`: the
Dataset's JSON-LD object is the science metadata, and its metadata copy (when the
node syncs one) is aggregated as an object the JSON-LD documents.

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

The bytes: rdflib's RDF/XML writer follows its store's iteration order, which
varies with Python's hash seed; the map's triples are copied sorted into an
insertion-ordered graph first, so the same members always give the same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import d1_common.resource_map as d1_ore
import rdflib
from d1_common.const import ORE_NAMESPACE_DICT
from rdflib.namespace import NamespaceManager

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


def build(map_pid: str, package: Package) -> bytes:
    """The map's RDF/XML, built with `d1_common.resource_map`; same input, same bytes."""
    ore = d1_ore.ResourceMap()
    # a scratch graph whose prefixes are never written: without rdflib's thirty default
    # bindings, made per map, a map costs a fifth less (written under the store's write turn)
    ore.namespace_manager = NamespaceManager(ore, bind_namespaces="none")
    ore.initialize(map_pid, USER_AGENT)
    ore.addMetadataDocument(package.metadata_pid)
    for pid in package.documented:  # addDataDocuments' triples, without its SPARQL (5 ms)
        ore.addResource(pid)
        ore.setDocumentedBy(pid, package.metadata_pid)
        ore.setDocuments(package.metadata_pid, pid)
    # dicts only, so insertion order is kept; rdf/rdfs and DataONE's ORE prefixes
    ordered = rdflib.Graph(store="SimpleMemory", bind_namespaces="core")
    for prefix, namespace in ORE_NAMESPACE_DICT.items():
        ordered.bind(prefix, namespace)
    for triple in sorted(ore):
        ordered.add(triple)
    return ordered.serialize(format="xml", encoding="utf-8")


@dataclass(frozen=True, slots=True)
class ReadMap:
    """A resource map as DataONE's library reads it."""

    pid: str
    aggregated: frozenset[str]
    metadata: frozenset[str]  # objects that document others (cito:documents)
    documented: frozenset[str]  # objects documented by others (cito:isDocumentedBy)


def read(body: bytes) -> ReadMap:
    """Parse a map with `d1_common.resource_map` (raises on a document that is not one)."""
    ore = d1_ore.ResourceMap()
    ore.parseDoc(body)
    return ReadMap(
        pid=ore.getResourceMapPid(),
        aggregated=frozenset(ore.getAggregatedPids()),
        metadata=frozenset(ore.getAggregatedScienceMetadataPids()),
        documented=frozenset(ore.getAggregatedScienceDataPids()),
    )
