"""Checks that a node's resource maps aggregate exactly the current heads of their Datasets.

The maps are read back with DataONE's own `d1_common.resource_map` (`read`), never
by comparing our own bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import d1_common.resource_map
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.sparql import Query

from adapter.dataone.resourcemap import RESOURCE_MAP_FORMAT, SID_SUFFIX
from adapter.models import SyncRecord
from adapter.store.db import Store


@dataclass(frozen=True, slots=True)
class ReadMap:
    """A resource map as DataONE's library reads it."""

    pid: str
    aggregated: frozenset[str]
    metadata: frozenset[str]  # objects that document others (cito:documents)
    documented: frozenset[str]  # objects documented by others (cito:isDocumentedBy)


@cache
def _prepared(text: str) -> Query:
    return prepareQuery(text)


class ResourceMap(d1_common.resource_map.ResourceMap):  # type: ignore[misc]
    """DataONE's `ResourceMap`, its SPARQL texts parsed once per process.

    The library's getters hand rdflib the same three query strings on every call, and rdflib
    parses a string anew each time (pyparsing, most of the CPU of reading a small map): the
    parsed query is what it would have run. Its queries declare their prefixes, so the graph's
    own bindings (rdflib's `initNs` for a string) change nothing."""

    def query(self, query_object: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(query_object, str) and not args and not kwargs:
            query_object = _prepared(query_object)
        return super().query(query_object, *args, **kwargs)


def read(body: bytes) -> ReadMap:
    """Parse a map with `d1_common.resource_map` (raises on a document that is not one)."""
    ore = ResourceMap()
    ore.parseDoc(body)
    return ReadMap(
        pid=ore.getResourceMapPid(),
        aggregated=frozenset(ore.getAggregatedPids()),
        metadata=frozenset(ore.getAggregatedScienceMetadataPids()),
        documented=frozenset(ore.getAggregatedScienceDataPids()),
    )


def series_heads(store: Store, node_id: str) -> dict[str, SyncRecord]:
    """seriesId -> the head record (the one no other record obsoletes)."""
    every = store.list_objects(node_id, count=100_000)[1]
    return {r.series_id: r for r in every if r.obsoleted_by is None and r.series_id}


def read_map(store: Store, node_id: str, pid: str) -> ReadMap:
    rec = store.get_record(node_id, pid, with_bytes=True)
    assert rec is not None and rec.object_bytes is not None
    return read(rec.object_bytes)


def assert_packages_true(
    store: Store, node_id: str, *, archived_have_maps: bool = True
) -> dict[str, ReadMap]:
    """Every live Dataset has one live map of its head and its live copies' heads; every
    archived Dataset's map is archived (`archived_have_maps=False`: or there is none, for a
    Dataset archived before maps existed); no map without a Dataset. Dataset sid -> map."""
    heads = series_heads(store, node_id)
    datasets = {
        sid: rec
        for sid, rec in heads.items()
        if rec.format_id != RESOURCE_MAP_FORMAT and rec.describes_pid is None and "#" not in sid
    }
    maps = {sid: rec for sid, rec in heads.items() if rec.format_id == RESOURCE_MAP_FORMAT}
    live = {sid for sid, rec in datasets.items() if not rec.archived}
    expected = set(datasets) if archived_have_maps else live
    assert expected <= {sid.removesuffix(SID_SUFFIX) for sid in maps} <= set(datasets), (
        "a map per Dataset, no other"
    )
    out = {}
    for sid, dataset in datasets.items():
        head = maps.get(sid + SID_SUFFIX)
        if head is None:
            continue
        assert head.archived == dataset.archived, f"{sid}: map and Dataset disagree on archived"
        if dataset.archived:
            continue
        copies = {
            r.pid
            for s, r in heads.items()
            if s.startswith(sid + "#") and s != sid + SID_SUFFIX and not r.archived
        }
        got = read_map(store, node_id, head.pid)
        assert got.pid == head.pid
        assert got.aggregated == {dataset.pid} | copies, sid
        assert got.metadata == ({dataset.pid} if copies else set())
        assert got.documented == copies
        out[sid] = got
    return out
