"""The fast compaction to the frame's context gives exactly what pyld gives, or steps aside."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pyld import jsonld

from adapter.jsonld.compact import compact_framed
from adapter.jsonld.frame import FRAME_CONTEXT, frame_expanded, frame_with_pyld
from adapter.jsonld.loader import load_document
from benchmarks import synthrepo

CTX = "https://schema.org/"

SHAPES: list[dict[str, Any]] = [
    synthrepo.dataset(7, "https://repo.example"),
    {
        "@context": CTX,
        "@type": ["Dataset", "CreativeWork"],
        "name": [{"@value": "Messdaten", "@language": "de"}, "Measurements"],
        "dateModified": {"@value": "2024-01-01", "@type": "Date"},
        "keywords": [],
        "isAccessibleForFree": True,
        "size": 12.5,
        "url": "https://repo.example/d/1",
        "creator": {"@id": "https://orcid.org/0000-0002-1825-0097"},
    },
    {
        "@context": {"@vocab": "http://schema.org/", "ex": "http://example.org/terms/"},
        "@graph": [
            {
                "@id": "https://repo.example/d/2",
                "@type": "Dataset",
                "ex:flag": "x",
                "publisher": {"@id": "_:org"},
            },
            {"@id": "_:org", "@type": "Organization", "name": "Org"},
        ],
    },
]

FALLBACKS: list[dict[str, Any]] = [
    {"@context": CTX, "@type": "Dataset", "keywords": {"@list": ["a", "b"]}},
    {
        "@context": {"@vocab": "http://schema.org/", "spdx": "http://spdx.org/rdf/terms#"},
        "@type": "Dataset",
        "spdx:checksum": "abc",
    },
    {"@context": CTX, "@type": "Dataset", "name": {"@value": "x", "@direction": "rtl"}},
]


def expanded(doc: dict[str, Any]) -> list[Any]:
    result: list[Any] = jsonld.expand(doc, {"documentLoader": load_document})
    return result


@pytest.mark.parametrize("doc", SHAPES)
def test_fast_compaction_equals_pyld(doc: dict[str, Any]) -> None:
    e = expanded(doc)
    assert frame_expanded(copy.deepcopy(e)) == frame_with_pyld(copy.deepcopy(e))


@pytest.mark.parametrize("doc", SHAPES)
def test_fast_compaction_is_taken_for_plain_shapes(doc: dict[str, Any]) -> None:
    framed = [n for n in expanded(doc) if isinstance(n, dict)]
    assert compact_framed(framed, FRAME_CONTEXT) is not None


@pytest.mark.parametrize("doc", FALLBACKS)
def test_shapes_outside_the_rules_fall_back_to_pyld(doc: dict[str, Any]) -> None:
    framed = [n for n in expanded(doc) if isinstance(n, dict)]
    assert compact_framed(framed, FRAME_CONTEXT) is None
    e = expanded(doc)
    assert frame_expanded(copy.deepcopy(e)) == frame_with_pyld(copy.deepcopy(e))


def test_another_context_is_not_compacted_here() -> None:
    assert compact_framed([], {"@vocab": "https://schema.org/"}) is None
