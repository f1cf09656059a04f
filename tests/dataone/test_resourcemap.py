"""A Dataset's resource map as pure functions: identifiers, bytes, and what DataONE reads.

The map is written as text; DataONE's own `d1_common.resource_map` is the reference
on every shape the adapter writes (a Dataset alone, with its metadata copy, with
several documented objects, PIDs with counters or characters that need escaping):
- graph for graph: the library's builder (`ResourceMap(ore_pid, scimeta_pid,
  scidata_pid_list)`) and our text parsed by the library are isomorphic RDF graphs;
- byte for byte: the previous version built the map with that library and wrote it
  with rdflib's RDF/XML writer (`reference_bytes`, kept here); the text is the same
  bytes, so maps already in a store read as if written today;
- what the CN's indexer reads: the library's own queries on our bytes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import d1_common.resource_map
import pytest
import rdflib
from d1_common.const import ORE_NAMESPACE_DICT
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rdflib.compare import isomorphic, to_isomorphic
from rdflib.namespace import NamespaceManager

from adapter import USER_AGENT
from adapter.dataone import resourcemap as rm
from adapter.dataone.records import METADATA_FORMATS, metadata_series_id
from tests.support.packages import ResourceMap, read

ROOT = Path(__file__).resolve().parents[2]
DATASET = "sha256:" + "a" * 64
COPY = "sha256:" + "b" * 64
ODD = "doi:10.5072/x&<y>\"z'q é#%/ ?+;[]{}|\\^`\u00a0\U0001f600\t\r\n"
SHAPES = {  # name -> (map PID, metadata PID, documented PIDs): every map the adapter writes
    "a Dataset alone": ("resource_map_sha256:" + "c" * 64, DATASET, []),
    "with its ISO copy": ("resource_map_sha256:" + "c" * 64, DATASET, [COPY]),
    "a repeat of a set, counters": (
        "resource_map_sha256:" + "c" * 64 + ".3",
        DATASET + ".2",
        [COPY + ".4"],
    ),
    "several documented objects": ("resource_map_x", DATASET, [COPY, "sha256:c", "sha256:0"]),
    "odd characters": ("resource_map_" + ODD, "sha256:" + ODD, [ODD, "a/b", "x y", "100%"]),
}


def d1_graph(map_pid: str, package: rm.Package) -> d1_common.resource_map.ResourceMap:
    """The map as DataONE's library builds it, through its public constructor."""
    return ResourceMap(
        map_pid, package.metadata_pid, list(package.documented), ore_software_id=USER_AGENT
    )


def reference_bytes(map_pid: str, package: rm.Package) -> bytes:
    """The previous version's bytes: the library's triples, sorted, by rdflib's writer."""
    ore = d1_common.resource_map.ResourceMap()
    ore.namespace_manager = NamespaceManager(ore, bind_namespaces="none")
    ore.initialize(map_pid, USER_AGENT)
    ore.addMetadataDocument(package.metadata_pid)
    for pid in package.documented:
        ore.addResource(pid)
        ore.setDocumentedBy(pid, package.metadata_pid)
        ore.setDocuments(package.metadata_pid, pid)
    ordered = rdflib.Graph(store="SimpleMemory", bind_namespaces="core")
    for prefix, namespace in ORE_NAMESPACE_DICT.items():
        ordered.bind(prefix, namespace)
    for triple in sorted(ore):
        ordered.add(triple)
    body: bytes = ordered.serialize(format="xml", encoding="utf-8")
    return body


def d1_read(body: bytes) -> d1_common.resource_map.ResourceMap:
    ore = ResourceMap()
    ore.parseDoc(body)
    return ore


def same_graph(ours: bytes, theirs: rdflib.Graph) -> None:
    parsed = d1_read(ours)
    assert isomorphic(parsed, theirs), "\n".join(
        sorted(str(t) for t in set(to_isomorphic(parsed)) ^ set(to_isomorphic(theirs)))
    )


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_is_the_libraries_graph_and_the_previous_bytes(shape: str) -> None:
    map_pid, meta, documented = SHAPES[shape]
    package = rm.Package.of(meta, documented)
    body = rm.build(map_pid, package)
    same_graph(body, d1_graph(map_pid, package))
    assert body == reference_bytes(map_pid, package)
    got = read(body)
    assert got.pid == map_pid and got.aggregated == package.pids
    assert got.metadata == ({package.metadata_pid} if documented else set())
    assert got.documented == set(package.documented)


def test_odd_characters_are_percent_encoded_in_iris_and_escaped_in_text() -> None:
    body = rm.build("resource_map_x", rm.Package.of("sha256:m", [ODD]))
    text = body.decode("utf-8")
    assert 'rdf:resource="https://cn.dataone.org/cn/v2/resolve/doi:10.5072%2Fx&amp;%3Cy%3E' in text
    assert "<dcterms:identifier>doi:10.5072/x&amp;&lt;y&gt;\"z'q" in text
    assert "&#13;" in text  # a carriage return survives the parser's line-end rule
    assert ODD in read(body).documented


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
    got = read(rm.build(rm.pid_for(package), package))
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


# any text an XML 1.0 document can carry (no other control characters, no surrogates)
PID_TEXT = st.text(
    st.characters(
        codec="utf-8",
        exclude_characters=[chr(c) for c in range(32) if chr(c) not in "\t\n\r"] + ["\ufffe"],
    ),
    min_size=1,
    max_size=12,
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@settings(deadline=None, max_examples=60)  # the first SPARQL read compiles its query
@given(PID_TEXT, PID_TEXT, st.lists(PID_TEXT, max_size=4))
def test_any_members_are_the_libraries_graph_and_bytes(
    map_pid: str, meta: str, others: list[str]
) -> None:
    package = rm.Package.of(meta, others)
    assume(map_pid not in package.pids)  # a map never aggregates itself (its PID is its own)
    body = rm.build(map_pid, package)
    same_graph(body, d1_graph(map_pid, package))
    assert body == reference_bytes(map_pid, package)
    got = read(body)
    assert got.aggregated == package.pids
    assert got.documented == set(package.documented)


def test_same_members_same_bytes_in_any_process() -> None:
    """Nothing in the text depends on the hash seed (the rdflib writer's order did)."""
    code = (
        "from adapter.dataone import resourcemap as rm;"
        f"p = rm.Package.of({DATASET!r}, [{COPY!r}, 'sha256:c', 'sha256:d']);"
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


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_no_module_of_the_adapter_needs_dataones_library() -> None:
    """dataone.common (PyXB) is a test dependency: every module imports with it blocked."""
    code = (
        "import sys, pkgutil, importlib, adapter\n"
        "sys.modules['d1_common'] = None; sys.modules['pyxb'] = None\n"
        "names = [m.name for m in pkgutil.walk_packages(adapter.__path__, 'adapter.')"
        " if m.name != 'adapter.__main__']\n"  # which runs the command
        "for name in names: importlib.import_module(name)\n"
        "print(len(names))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert int(done.stdout) > 100  # every module, not none


def test_writing_a_map_imports_neither_dataones_library_nor_rdflib() -> None:
    """The sync writes maps without d1_common (PyXB) or rdflib: a test-only dependency."""
    code = (
        "import sys; from adapter.dataone import resourcemap as rm;"
        "rm.build('m', rm.Package.of('a', ['b']));"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('d1_common', 'rdflib')))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, check=True, timeout=60
    )
    assert done.stdout.strip() == b"[]"
