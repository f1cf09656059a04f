"""The lenient JSON reader: each repair is applied and named; hostile input is bounded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.limits import Limits
from adapter.page.jsonrepair import measure, parse_lenient


def test_strict_json_needs_no_repair() -> None:
    parsed = parse_lenient('{"name": "x", "url": "https://a.example/b//c"}')
    assert parsed.failure is None
    assert parsed.repairs == ()
    assert parsed.data == {"name": "x", "url": "https://a.example/b//c"}


@pytest.mark.parametrize(
    ("text", "repair"),
    [
        ('// built by the CMS\n{"name": "x"}', "JavaScript comments"),
        ('{"name": /* TODO */ "x"}', "JavaScript comments"),
        ('{"name": "x"};', "trailing semicolon"),
        ('{"name": "x", "k": [1, 2,],}', "trailing comma before"),
        ('<!--\n{"name": "x"}\n-->', "HTML comment wrapper"),
        ('//<![CDATA[\n{"name": "x"}\n//]]>', "CDATA wrapper"),
        ('{"name": "a\tb"}', "control characters"),
        ("{&quot;name&quot;: &quot;x&quot;}", "HTML entities"),
        ('\ufeff{"name": "x"}', "byte-order mark"),
    ],
)
def test_each_repair_is_named(text: str, repair: str) -> None:
    parsed = parse_lenient(text)
    assert parsed.failure is None, parsed.failure
    assert parsed.data["name"] in ("x", "a\tb")
    assert any(repair in r for r in parsed.repairs), parsed.repairs


def test_comment_markers_inside_strings_are_kept() -> None:
    parsed = parse_lenient('{"u": "http://x.example/a", "c": "/* not a comment */",}')
    assert parsed.data == {"u": "http://x.example/a", "c": "/* not a comment */"}
    assert parsed.repairs == ("removed a trailing comma before } or ]",)


def test_values_written_one_after_another_become_a_list() -> None:
    parsed = parse_lenient('{"name": "x"}\n{"name": "y"},\n')
    assert parsed.data == [{"name": "x"}, {"name": "y"}]
    assert any("2 JSON values" in r for r in parsed.repairs)
    assert parse_lenient('{"name": "x"}}').failure is not None


def test_unrepairable_error_points_at_the_publishers_line_and_column() -> None:
    text = '// header\n{\n  "name": ,\n  "x": 1\n}'
    parsed = parse_lenient(text)
    assert parsed.failure is not None
    assert parsed.failure.kind == "syntax"
    assert (parsed.failure.line, parsed.failure.column) == (3, 11)


def test_json_nested_100000_deep_is_a_failure_not_a_recursion_error() -> None:
    parsed = parse_lenient("[" * 100_000 + "]" * 100_000)
    assert parsed.failure is not None
    assert parsed.failure.kind == "too-deep"


def test_depth_and_node_caps() -> None:
    limits = Limits(max_json_depth=3, max_json_nodes=10)
    assert parse_lenient('{"a": {"b": {"c": 1}}}', limits).failure is None
    deep = parse_lenient('{"a": {"b": {"c": {"d": 1}}}}', limits)
    assert deep.failure is not None and deep.failure.kind == "too-deep"
    wide = parse_lenient(json.dumps(list(range(11))), limits)
    assert wide.failure is not None and wide.failure.kind == "too-many-nodes"


def test_measure_counts_without_recursion() -> None:
    value: list[object] = []
    for _ in range(50_000):
        value = [value]
    failure = measure(value, Limits(max_json_depth=64))
    assert failure is not None and failure.kind == "too-deep"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_gives_data_or_a_failure(text: str) -> None:
    parsed = parse_lenient(text)
    if parsed.failure is None:
        json.dumps(parsed.data)  # a JSON value came out
    else:
        assert parsed.failure.kind in {"syntax", "too-deep", "too-many-nodes"}
        assert parsed.data is None
