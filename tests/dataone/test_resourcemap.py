"""A Dataset's resource map as pure functions: identifiers, bytes, and what DataONE reads.

What a map aggregates is read back with DataONE's own `d1_common.resource_map`
(directly, not only through our `read`), the way the CN's indexer relates objects.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import d1_common.resource_map
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.dataone import resourcemap as rm
from adapter.dataone.records import METADATA_FORMATS, metadata_series_id

ROOT = Path(__file__).resolve().parents[2]
DATASET = "sha256:" + "a" * 64
COPY = "sha256:" + "b" * 64


def d1_read(body: bytes) -> d1_common.resource_map.ResourceMap:
    ore = d1_common.resource_map.ResourceMap()
    ore.parseDoc(body)
    return ore


def test_a_dataset_with_a_copy_is_one_package_the_json_ld_documents() -> None:
    package = rm.Package.of(DATASET, [COPY])
    pid = rm.pid_for(package)
    ore = d1_read(rm.build(pid, package))
    assert ore.getResourceMapPid() == pid
    assert sorted(ore.getAggregatedPids()) == [DATASET, COPY]
    assert ore.getAggregatedScienceMetadataPids() == [DATASET]
    assert ore.getAggregatedScienceDataPids() == [COPY]
    triples = set(ore.getAllTriples())
    resolve = "https://cn.dataone.org/cn/v2/resolve/"
    cito = "http://purl.org/spar/cito/"
    assert (resolve + DATASET, cito + "documents", resolve + COPY) in triples
    assert (resolve + COPY, cito + "isDocumentedBy", resolve + DATASET) in triples


def test_a_dataset_alone_is_a_package_of_one() -> None:
    package = rm.Package.of(DATASET)
    got = rm.read(rm.build(rm.pid_for(package), package))
    assert got.aggregated == {DATASET} and got.metadata == got.documented == frozenset()


def test_the_pid_is_named_for_the_members_and_counts_repeats() -> None:
    package = rm.Package.of(DATASET, [COPY])
    digest = hashlib.sha256(f"{DATASET}\n{COPY}".encode()).hexdigest()
    assert rm.pid_for(package) == f"resource_map_sha256:{digest}"
    assert rm.pid_for(package, 2) == f"resource_map_sha256:{digest}.2"
    with pytest.raises(ValueError):
        rm.pid_for(package, 0)
    # the JSON-LD's role counts: the same PIDs the other way round are another package
    assert rm.Package.of(COPY, [DATASET]).key != package.key
    assert rm.Package.of(DATASET, [COPY, COPY, DATASET]) == package
    assert rm.Package.of(DATASET).key != package.key


def test_the_series_id_follows_the_dataset_and_no_metadata_copy_can_take_it() -> None:
    assert rm.series_id("doi:10.5072/x") == "doi:10.5072/x#resourcemap"
    assert rm.is_series("doi:10.5072/x#resourcemap") and not rm.is_series("doi:10.5072/x")
    copies = {metadata_series_id("doi:10.5072/x", f) for f in [*METADATA_FORMATS, "other/fmt"]}
    assert rm.series_id("doi:10.5072/x") not in copies
    assert not any(rm.is_series(sid) for sid in copies)


@settings(deadline=None, max_examples=40)  # the first SPARQL read compiles its query
@given(st.lists(st.text(alphabet="abcdef0123456789:.", min_size=1, max_size=12), max_size=4))
def test_any_members_read_back_exactly(others: list[str]) -> None:
    package = rm.Package.of("sha256:meta", others)
    got = rm.read(rm.build("resource_map_x", package))
    assert got.aggregated == package.pids
    assert got.documented == set(package.documented)


def test_same_members_same_bytes_in_any_process() -> None:
    """rdflib writes in hash order; the map sorts first, so PYTHONHASHSEED cannot matter."""
    code = (
        "from adapter.dataone import resourcemap as rm;"
        f"p = rm.Package.of({DATASET!r}, [{COPY!r}, 'sha256:c']);"
        "import sys; sys.stdout.buffer.write(rm.build(rm.pid_for(p), p))"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, check=True, timeout=60
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    [body] = outputs
    assert body.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
    assert b"<dcterms:creator>DataONE-SlenderAdapter/" in body
