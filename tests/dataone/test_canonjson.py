"""The fast RFC 8785 path against the reference library: byte-equal whenever it is taken,
not taken where it could differ, and the records built on it unchanged."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.dataone import canonjson
from adapter.dataone import records as r
from adapter.page.extract import extract

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def reference(document: Any) -> bytes:
    """canonical_bytes as it was before the fast path: always the library."""
    return bytes(rfc8785.dumps(r._i_json(document)))


def outcome(fn: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(value)
    except Exception as exc:  # the same refusal, e.g. a lone surrogate
        return "error", type(exc).__name__


# every kind of character: controls, escapes, DEL, U+2028/9, BMP private use, astral, surrogates
chars = st.characters(codec=None) | st.sampled_from(
    ["\x00", "\x1f", '"', "\\", "\x7f", "\u2028", "\u2029", "\ue000", "\uffff", "\U0001f600"]
)
text = st.text(chars, max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.sampled_from([2**53 - 1, -(2**53) + 1, 2**53, -(2**53)])
    | st.floats()
    | text
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(text, inner, max_size=5)
        | st.dictionaries(st.integers(0, 9), inner, max_size=2)
        | st.tuples(inner)
    ),
    max_leaves=25,
)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@settings(max_examples=300, deadline=None)
@given(values)
def test_canonical_bytes_and_the_fast_path_equal_the_library_on_any_value(value: Any) -> None:
    """Both on each of the 300 values: drawing a value costs Hypothesis most of an example's
    time, and two tests drew two sets from this one strategy."""
    assert outcome(r.canonical_bytes, value) == outcome(reference, value)
    # the fast path, when taken, equals the library
    fast = canonjson.fast_dumps(value)
    if fast is not None:
        assert fast == bytes(rfc8785.dumps(value))


@pytest.mark.parametrize(
    "value",
    [
        1.0,
        {"a": 0.5},
        [2**53],
        {"a": [-(2**53)]},
        {1: "x"},
        {"\U0001f600": 1, "\uffff": 2},  # UTF-16 order differs from code point order
        ("tuple",),
        "\ud800",  # a lone surrogate
        {"k": "\udfff"},
        {"k": {"deep": object()}},
        True.__class__,
    ],
)
def test_the_fast_path_steps_aside_where_it_could_differ(value: Any) -> None:
    assert canonjson.fast_dumps(value) is None
    assert outcome(r.canonical_bytes, value) == outcome(reference, value)


@pytest.mark.slow  # over 0.5 CPU-s (tests/support/timing.py)
def test_every_character_is_escaped_as_the_library_does() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert canonjson.fast_dumps(every) == bytes(rfc8785.dumps(every))
    keys = {chr(c): c for c in range(0, 0x10000, 7) if not 0xD800 <= c <= 0xDFFF}
    assert canonjson.fast_dumps(keys) == bytes(rfc8785.dumps(keys))


def test_deep_nesting_falls_back_to_the_reference() -> None:
    deep: Any = "x"
    for _ in range(sys.getrecursionlimit() + 10):
        deep = [deep]
    assert canonjson.fast_dumps(deep) is None


def fixture_documents() -> list[Any]:
    """Every JSON-LD block of the fixture pages, and every JSON fixture file."""
    docs: list[Any] = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".json", ".jsonld"):
            with contextlib.suppress(ValueError):
                docs.append(json.loads(path.read_bytes()))
        if path.suffix in (".html", ".xhtml", ".jsonld"):
            kind = "application/ld+json" if path.suffix == ".jsonld" else "text/html"
            found = extract(path.read_bytes(), url="https://r/", content_type=kind, charset=None)
            docs += [block.data for block in found.blocks]
    return docs


def test_fixture_documents_serialize_as_the_library_does() -> None:
    docs = fixture_documents()
    assert len(docs) > 50
    fast = 0
    for doc in docs:
        assert outcome(r.canonical_bytes, doc) == outcome(reference, doc)
        fast += canonjson.fast_dumps(doc) is not None
    assert fast > len(docs) // 2  # the fast path is the common one


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(st.dictionaries(st.sampled_from(["name", "views", "x"]), values, max_size=3))
def test_content_key_reuses_the_body_only_when_nothing_is_dropped(doc: dict[str, Any]) -> None:
    for volatile in ((), ("views",), ("schema:x", "nothing")):
        try:
            body = r.canonical_bytes(doc)
        except Exception:
            return
        expected = r.content_key(doc, volatile)
        assert r.content_key(doc, volatile, body) == expected
        if not volatile:
            assert expected == hashlib.sha256(body).hexdigest()
