"""normalize's faster helpers give what the walks they replaced gave.

The references below are the previous implementations, kept here verbatim:
`_simplify` (now `normalforms.simplify`), `locate._candidates` (paths now
written only for the objects found), `framing._index` + `_all_nodes` (now one
walk), `DATASET in near_misses(...)` (now `has_type`, which stops early) and
`secondary_datasets` with `standalone_ids` computed up front (now lazily).
"""

from __future__ import annotations

import copy
import json
from typing import Any
from urllib.parse import urljoin

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.jsonld import frame as framing
from adapter.jsonld import locate
from adapter.jsonld.catalogrecords import secondary_datasets, standalone_ids
from adapter.jsonld.frame import embedded_size, frame_expanded
from adapter.jsonld.locate import has_type, near_misses
from adapter.jsonld.normalforms import IRI_PROPERTIES, simplify, to_http, unchanged_by_urljoin
from tests.jsonld.test_fastpaths import _DOCUMENTS, BASE, FIXTURE_BLOCKS, pyld_expand
from tests.support.fuzz_support import FUZZ

DATASET = "http://schema.org/Dataset"


def old_simplify(value: Any, base: str, key: str | None = None) -> Any:
    if isinstance(value, list):
        return [old_simplify(v, base, key) for v in value]
    if key in IRI_PROPERTIES:
        iri = value.get("@id", value.get("@value")) if isinstance(value, dict) else value
        if isinstance(iri, str) and not (isinstance(value, dict) and "@language" in value):
            return urljoin(base, iri.strip())
    if not isinstance(value, dict):
        return value
    if "@value" in value and "@language" not in value:
        return value["@value"]
    blank = str(value.get("@id", "")).startswith("_:") and len(value) > 1
    return {
        k: (v if k == "@context" else old_simplify(v, base, k))
        for k, v in value.items()
        if not (blank and k == "@id")
    }


def old_candidates(data: Any) -> list[tuple[str, dict[str, Any], Any]]:
    found: list[tuple[str, dict[str, Any], Any]] = []
    stack: list[tuple[Any, str, Any]] = [(data, "$", None)]
    while stack:
        value, path, context = stack.pop()
        if isinstance(value, dict):
            context = value.get("@context", context)
            if locate._is_dataset_type(value.get("@type", value.get("type"))):
                found.append((path, value, context))
            children = [
                (v, locate._path(path, k), context) for k, v in value.items() if k != "@context"
            ]
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend(
                reversed([(v, locate._path(path, i), context) for i, v in enumerate(value)])
            )
    return found


def old_index(expanded: Any) -> dict[str, list[dict[str, Any]]]:
    by_id: dict[str, list[dict[str, Any]]] = {}
    stack = [expanded]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict) and "@value" not in value:
            if isinstance(value.get("@id"), str) and len(value) > 1:
                by_id.setdefault(value["@id"], []).append(value)
            stack.extend(v for k, v in value.items() if k not in ("@id", "@type"))
    return by_id


def old_all_nodes(expanded: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = [expanded]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict) and "@value" not in value:
            out.append(value)
            stack.extend(v for k, v in value.items() if k not in ("@id", "@type"))
    return out


def check(data: Any, base: str) -> None:
    """Every helper against its reference on one block (raw and expanded)."""
    candidates = [(p, v, c) for p, v, c, _ in locate._candidates(data)]  # less the nesting flag
    assert json.dumps(candidates) == json.dumps(old_candidates(data))
    expanded = pyld_expand(data, base)
    if expanded is None:
        return
    expanded = to_http(expanded, [0])
    assert has_type(expanded, DATASET) == (DATASET in near_misses(expanded))
    by_id, anonymous = framing._index(expanded)
    assert json.dumps(by_id) == json.dumps(old_index(expanded))
    old_anonymous = [
        n for n in old_all_nodes(expanded) if framing._is_dataset(n) and "@id" not in n
    ]
    assert [id(n) for n in anonymous] == [id(n) for n in old_anonymous]
    if embedded_size(expanded, 5000) > 5000:
        return
    try:
        framed = frame_expanded(copy.deepcopy(expanded))
    except Exception:
        return
    graph = [n for n in framed["@graph"] if isinstance(n, dict)]
    for node in graph:
        assert json.dumps(simplify(node, base)) == json.dumps(old_simplify(node, base))
    eager = secondary_datasets(graph, standalone_ids(expanded), base)
    assert secondary_datasets(graph, lambda: standalone_ids(expanded), base) == eager


@pytest.mark.parametrize("name,base,data", FIXTURE_BLOCKS, ids=[b[0] for b in FIXTURE_BLOCKS])
def test_fixture_blocks(name: str, base: str, data: Any) -> None:
    check(data, base)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@FUZZ
@given(_DOCUMENTS)
def test_generated_documents(doc: Any) -> None:
    check(doc, BASE)


_JSON = st.recursive(
    st.none() | st.integers() | st.sampled_from(["Dataset", "x:Dataset", "a'b", ""]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["@type", "type", "@context", "k", "'q\""]), inner)
    ),
    max_leaves=15,
)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
@FUZZ
@given(_JSON)
def test_candidates_of_any_json(data: Any) -> None:
    candidates = [(p, v, c) for p, v, c, _ in locate._candidates(data)]  # less the nesting flag
    assert json.dumps(candidates) == json.dumps(old_candidates(data))


def _written(value: Any) -> int:
    """Values in a framed graph, counted as `embedded_size` counts them."""
    if isinstance(value, list):
        return sum(_written(v) for v in value)
    if isinstance(value, dict) and "@list" in value:
        return _written(value["@list"])
    if isinstance(value, dict) and "@value" not in value:
        return 1 + sum(_written(v) for k, v in value.items() if k not in ("@id", "@type"))
    return 1


@pytest.mark.parametrize("name,base,data", FIXTURE_BLOCKS, ids=[b[0] for b in FIXTURE_BLOCKS])
def test_embedded_size_counts_what_framing_writes(name: str, base: str, data: Any) -> None:
    # the cap must count real output: shared nodes once per reference, merged, not multiplied
    expanded = pyld_expand(data, base)
    if expanded is None:
        return
    expanded = to_http(expanded, [0])
    estimate = embedded_size(expanded, 50_000)
    if estimate > 50_000:
        return
    framed = frame_expanded(copy.deepcopy(expanded))
    assert estimate == _written(framed["@graph"])


def test_embedded_size_merges_values_as_framing_does() -> None:
    # a node described in three places: values equal in JSON merge; 1, 1.0, true, "1" do not
    person = {"@id": "https://orcid.org/0000-0002-1825-0097", "@type": "Person"}
    data = {
        "@context": "http://schema.org/",
        "@graph": [
            {
                "@type": "Dataset",
                "@id": "https://example.org/ds",
                "creator": {"@id": person["@id"]},
            },
            {**person, "name": "A", "position": 1, "x": True, "y": "1", "z": 1.0},
            {**person, "name": "A", "position": 1, "x": 1, "y": True, "z": 1.0},
            {**person, "name": {"@value": "A", "@language": "en"}, "position": 2.5, "x": None},
        ],
    }
    expanded = to_http(pyld_expand(data, BASE), [0])
    framed = frame_expanded(copy.deepcopy(expanded))
    assert embedded_size(expanded, 50_000) == _written(framed["@graph"]) == 11


_URL_PARTS = st.text(alphabet="aZ09-._~/?#;:@%[] \t\x7fé", max_size=12)
_BASES = ["https://repo.example.org/ds/1", "http://a/b;p?q#f", "http://a", "HTTP://A/", "urn:x", ""]


@FUZZ
@given(st.sampled_from(["http://", "https://", "http:", "HTTP://", "https:/"]), _URL_PARTS)
def test_an_iri_left_as_it_is_is_what_urljoin_gives(scheme: str, rest: str) -> None:
    iri = scheme + rest
    if unchanged_by_urljoin(iri):
        for base in _BASES:
            assert urljoin(base, iri) == iri, base


@pytest.mark.parametrize(
    ("iri", "unchanged"),
    [
        ("https://doi.org/10.5555/ds.1", True),
        ("http://a", True),
        ("http://a/b?q=1#f", True),
        ("http://a/b?", False),  # urlparse drops an empty query
        ("http://a/b#", False),
        ("http://a/b;", False),  # and empty params
        ("http:///b", False),  # no host: resolved against the base's
        ("HTTP://a/b", False),  # the scheme written lowercase
        ("b/c", False),
    ],
)
def test_which_iris_are_left_as_they_are(iri: str, unchanged: bool) -> None:
    assert unchanged_by_urljoin(iri) is unchanged
    for base in _BASES:
        assert (urljoin(base, iri) == iri) >= unchanged
