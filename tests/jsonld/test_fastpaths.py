"""The fast expansion and framing give exactly what pyld gives, or step aside.

Reference: pyld (`jsonld.expand`, `adapter.jsonld.frame.frame_expanded`) and
`normalize` with `FAST_PATHS = False`. Compared as JSON text, so key order
counts too. Inputs: every JSON-LD block of every fixture, the benchmark's
Dataset, and hypothesis-generated trees of schema.org terms (shared and blank
@ids, IRI-like strings, value objects, @graph, arrays, contexts).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyld import jsonld

import adapter.jsonld.normalize as normalize_module
from adapter.jsonld import expand as fastexpand
from adapter.jsonld import frame_fast as fastframe
from adapter.jsonld.frame import FRAME_CONTEXT, embedded_size, frame_expanded
from adapter.jsonld.loader import load_document
from adapter.jsonld.normalforms import to_http
from adapter.jsonld.normalize import normalize
from adapter.page.extract import JsonLdBlock, extract
from benchmarks import synthrepo
from tests.support.fuzz_support import FUZZ
from tests.support.runcache import once_a_run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BASE = "https://repo.example/dataset/x"


@contextmanager
def reference() -> Iterator[None]:
    """normalize with pyld for every block."""
    normalize_module.FAST_PATHS = False
    try:
        yield
    finally:
        normalize_module.FAST_PATHS = True


def _fixture_blocks() -> list[tuple[str, str, Any]]:
    out = []
    for page in sorted(FIXTURES.rglob("*")):
        if page.suffix not in (".html", ".jsonld"):
            continue
        kind = "application/ld+json" if page.suffix == ".jsonld" else "text/html"
        url = f"https://repo.example/dataset/{page.stem}"
        try:
            extraction = extract(page.read_bytes(), url=url, content_type=kind, charset=None)
        except Exception:
            continue
        for one in extraction.blocks:
            name = f"{page.relative_to(FIXTURES)}#{one.index}"
            out.append((name, extraction.base_url or url, one.data))
    return out


# every fixture page extracted (~0.4 CPU-s): once a run, not once in every xdist worker
FIXTURE_BLOCKS = once_a_run("fastpaths-fixture-blocks", _fixture_blocks)
BENCH = synthrepo.dataset(5, "http://127.0.0.1:18080")


def pyld_expand(data: Any, base: str) -> list[Any] | None:
    try:
        result: list[Any] = jsonld.expand(
            copy.deepcopy(data), {"base": base, "documentLoader": load_document}
        )
    except Exception:
        return None
    return result


def check_expand(data: Any, base: str) -> bool:
    """Fast expansion equals pyld's + `to_http` (None when pyld fails); True if it was taken."""
    before = json.dumps(data)
    fast = fastexpand.expand(data, base)
    assert json.dumps(data) == before  # the input is not modified
    if fast is None:
        return False
    slow = pyld_expand(data, base)
    assert slow is not None
    counter = [0]
    assert json.dumps(fast) == json.dumps([to_http(slow, counter), counter[0]])
    return True


def check_frame(data: Any, base: str) -> bool:
    """Fast framing of pyld's expansion equals `frame_expanded`; True if it was taken."""
    expanded = pyld_expand(data, base)
    if expanded is None:
        return False
    expanded = to_http(expanded, [0])
    if embedded_size(expanded, 5000) > 5000:
        return False  # normalize refuses these before framing
    before = json.dumps(expanded)
    fast = fastframe.frame(expanded, FRAME_CONTEXT)
    assert json.dumps(expanded) == before  # the input is not modified
    try:
        slow: Any = frame_expanded(copy.deepcopy(expanded))
    except Exception:
        slow = "error"
    if fast is None:
        return False
    assert json.dumps(fast) == json.dumps(slow)
    return True


def outcome(data: Any, base: str) -> str:
    """Everything normalize says about one block, as text."""
    datasets, findings = normalize([JsonLdBlock(1, copy.deepcopy(data), "json-ld")], base_url=base)
    return json.dumps(
        {
            "datasets": [[d.id, d.framed, d.original, d.block_index, d.where] for d in datasets],
            "findings": [[f.code, str(f.severity), f.message, f.where] for f in findings],
        }
    )


def check_normalize(data: Any, base: str) -> None:
    fast = outcome(data, base)
    with reference():
        slow = outcome(data, base)
    assert fast == slow


@pytest.mark.parametrize("name,base,data", FIXTURE_BLOCKS, ids=[b[0] for b in FIXTURE_BLOCKS])
def test_fixture_blocks_expand_frame_and_normalize_as_pyld(name: str, base: str, data: Any) -> None:
    check_expand(data, base)
    check_frame(data, base)
    check_normalize(data, base)


def test_the_fast_paths_are_taken_for_most_fixtures() -> None:
    expanded = sum(check_expand(data, base) for _, base, data in FIXTURE_BLOCKS)
    framed = sum(check_frame(data, base) for _, base, data in FIXTURE_BLOCKS)
    assert len(FIXTURE_BLOCKS) >= 60
    assert expanded >= 0.8 * len(FIXTURE_BLOCKS)
    assert framed >= 0.7 * len(FIXTURE_BLOCKS)


def test_https_schema_org_is_read_as_http_and_counted() -> None:
    doc = {
        "@context": {
            "@vocab": "https://schema.org/",
            "d": {"@id": "https://schema.org/d", "@type": "https://schema.org/Date"},
        },
        "@type": ["Dataset", "https://schema.org/Thing"],
        "name": {"@value": "x", "@type": "Text"},
        "d": "2024",
        "about": {"@type": "Thing", "http://schema.org/name": "y"},
    }
    assert check_expand(doc, BASE)
    check_normalize(doc, BASE)
    clash = {"@context": "https://schema.org/", "name": "a", "https://schema.org/name": "b"}
    assert fastexpand.expand(clash, BASE) is None  # to_http lets one overwrite the other
    check_normalize(clash, BASE)


def test_the_benchmark_dataset_takes_both_fast_paths() -> None:
    """Its identifier shares the Dataset's @id: pyld merges them and embeds the node in itself."""
    base = "http://127.0.0.1:18080/dataset/5"
    assert check_expand(BENCH, base)
    assert check_frame(BENCH, base)
    check_normalize(BENCH, base)


DECLINED_EXPAND: list[Any] = [
    {"@context": "https://schema.org/", "@type": "Dataset", "keywords": {"@list": ["a"]}},
    {"@context": "https://schema.org/", "@type": "Dataset", "@reverse": {"about": {"@id": "x"}}},
    {"@context": "https://schema.org/", "@type": "Dataset", "about": {"@context": {}, "name": 1}},
    {"@context": "https://example.org/ctx", "@type": "Dataset"},
    {"@context": {"@vocab": "http://schema.org/", "@language": "en"}, "@type": "Dataset"},
    {"@context": {"@vocab": "http://schema.org/", "@base": "http://b/"}, "@type": "Dataset"},
    {"@context": {"@vocab": "rel/"}, "@type": "Dataset"},
    {"@context": {"@vocab": "http://schema.org/", "k": {"@container": "@list"}}, "k": [1]},
    {"@context": "https://schema.org/", "@type": "Dataset", "name": [["nested"]]},
    {"@context": "https://schema.org/", "@id": 5, "@type": "Dataset"},
    {"@type": "Dataset", "name": "no context"},
]

DECLINED_FRAME: list[Any] = [
    {"@context": "https://schema.org/", "@id": "@null", "@type": "Dataset"},
    {"@context": "https://schema.org/", "@type": "Dataset", "name": "@null"},
    {"@context": "https://schema.org/", "@type": "Dataset", "keywords": {"@list": ["a"]}},
    {"@context": "https://schema.org/", "@type": ["Dataset", "_:t"]},
    {"@context": "https://schema.org/", "@type": "Dataset", "name": {"@value": 1, "@index": "i"}},
]


@pytest.mark.parametrize("doc", DECLINED_EXPAND)
def test_shapes_outside_the_expansion_rules_are_declined(doc: Any) -> None:
    assert fastexpand.expand(doc, BASE) is None
    check_normalize(doc, BASE)


@pytest.mark.parametrize("doc", DECLINED_FRAME)
def test_shapes_outside_the_framing_rules_are_declined(doc: Any) -> None:
    expanded = pyld_expand(doc, BASE)
    assert expanded is not None
    assert fastframe.frame(expanded, FRAME_CONTEXT) is None
    check_normalize(doc, BASE)


_IDS = st.sampled_from(
    [
        "https://doi.org/10.1/x",
        "https://doi.org/10.1/y",
        "_:a",
        "_:b",
        "rel/p",
        "#f",
        "",
        "doi:1",
        "@null",
    ]
)
_STRINGS = st.sampled_from(
    [
        "Dataset",
        "PropertyValue",
        "schema:Dataset",
        "https://schema.org/Dataset",
        "http://schema.org/Person",
        "dcat:CatalogRecord",
        "_:b",
        "@null",
        "@id",
        "a b",
        "mailto:x@y.org",
        "//host/p",
        "rel/path",
        "EN",
        "",
    ]
) | st.text(max_size=3)
_SCALARS = (
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([1.0, 0.5, -0.0]) | _STRINGS
)
_KEYS = st.sampled_from(
    [
        "@id",
        "id",
        "@type",
        "type",
        "name",
        "url",
        "sameAs",
        "identifier",
        "creator",
        "about",
        "subjectOf",
        "additionalType",
        "schema:name",
        "https://schema.org/name",
        "http://schema.org/url",
        "ex:flag",
        "dcat:x",
        "d",
        "t",
        "https://schema.org/about",
        "a b",
        "@value",
        "@language",
        "@list",
        "@index",
        "@foo",
        "value",
        "@graph",
        "@reverse",
        "@set",
        "@nest",
        "schema:@type",
    ]
)
_CONTEXTS = st.sampled_from(
    [
        "https://schema.org/",
        "http://schema.org",
        "https://schema.org/docs/jsonldcontext.json",
        ["https://schema.org/"],
        {"@vocab": "https://schema.org/"},
        {
            "@vocab": "https://schema.org/",
            "t": {"@id": "http://schema.org/t", "@type": "https://schema.org/Date"},
        },
        {"@vocab": "http://schema.org/", "ex": "http://example.org/"},
        {"schema": "http://schema.org/", "dcat": "http://www.w3.org/ns/dcat#"},
        [
            "https://schema.org/",
            {
                "d": {"@id": "http://schema.org/dateModified", "@type": "xsd:date"},
                "u": {"@id": "http://schema.org/url", "@type": "@id"},
            },
        ],
        {"@vocab": "http://schema.org/", "@language": "en"},
        {"@vocab": "http://schema.org/", "graph": "@graph", "v": "@value", "x": None},
        {
            "@vocab": "http://schema.org/",
            "name": {"@id": "http://schema.org/n", "@container": "@set"},
        },
        {},
    ]
)


def _node(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    value: st.SearchStrategy[Any] = (
        _SCALARS
        | children
        | _IDS.map(lambda i: {"@id": i})
        | st.just({})
        | st.lists(st.lists(_SCALARS, max_size=2), max_size=2)
    )
    special = st.fixed_dictionaries(
        {"@value": _SCALARS},
        optional={
            "@language": _STRINGS,
            "@type": _STRINGS | st.lists(_STRINGS, max_size=2),
            "@index": st.just("i"),
        },
    )
    entries = st.dictionaries(_KEYS, value | st.lists(value | special, max_size=3), max_size=5)
    kinds = st.sampled_from(
        [None, "Dataset", ["Dataset", "PropertyValue"], [], "https://schema.org/Dataset"]
    )
    return st.builds(_with, entries, st.none() | _IDS, kinds)


def _with(entries: dict[str, Any], ident: str | None, kind: Any) -> dict[str, Any]:
    """A node, often a Dataset, often with an @id another node shares."""
    out = dict(entries)
    if ident is not None:
        out["@id"] = ident
    if kind is not None:
        out["@type"] = kind
    return out


_NODES = st.recursive(_node(st.nothing()), _node, max_leaves=12)


def _document(context: Any, nodes: list[dict[str, Any]], shape: int) -> Any:
    if shape == 0:
        return {"@context": context, **nodes[0]}
    if shape == 1:
        return {"@context": context, "@graph": nodes}
    return [{"@context": context, **n} for n in nodes]


_DOCUMENTS = st.builds(
    _document, _CONTEXTS, st.lists(_NODES, min_size=1, max_size=3), st.integers(0, 2)
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@FUZZ
@given(_DOCUMENTS)
def test_generated_documents_expand_frame_and_normalize_as_pyld(doc: Any) -> None:
    """The three checks on each of the 200 documents, as on the fixture blocks above: drawing
    a document costs Hypothesis several times what checking it does, and three tests drew
    three sets of 200 from this one strategy."""
    check_expand(doc, BASE)
    check_frame(doc, BASE)
    check_normalize(doc, BASE)
