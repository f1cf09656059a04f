"""Lenient, bounded reading of one JSON-LD block as real pages publish it.

Real `<script type="application/ld+json">` blocks carry JavaScript comments,
a trailing semicolon or comma, an HTML comment or CDATA wrapper, raw control
characters inside strings. A strict parse is tried first; when it fails, the
repairs below are applied and each one that changed something is named, so a
repository manager learns what to fix. Every repair replaces what it removes
with spaces (newlines kept), so a line/column of a remaining error points at
the publisher's own text.

Depth and size are checked without recursion (an explicit stack), and the
`RecursionError` that `json.loads` itself raises on very deep input is caught:
hostile input gives a `JsonFailure`, never an exception.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from adapter.limits import DEFAULT_LIMITS, Limits

# Strings first, so `//` inside "https://..." is never taken for a comment.
_TOKENS = re.compile(
    r'"(?:[^"\\]|\\.)*"'  # a JSON string
    r"|//[^\n]*"  # a JavaScript line comment
    r"|/\*.*?\*/"  # a JavaScript block comment
    r"|,(?=\s*[}\]])",  # a trailing comma before } or ]
    re.DOTALL,
)
_HTML_COMMENT_OPEN = re.compile(r"\A(\s*)<!--")
_HTML_COMMENT_CLOSE = re.compile(r"-->(\s*)\Z")
_CDATA_OPEN = re.compile(r"\A(\s*)(?://\s*)?<!\[CDATA\[")
_CDATA_CLOSE = re.compile(r"(?://\s*)?\]\]>(\s*)\Z")
_TRAILING_PUNCT = re.compile(r"[;,](\s*)\Z")


class FailureKind(StrEnum):
    """Why a block could not be read."""

    SYNTAX = "syntax"  # not JSON, even repaired
    TOO_DEEP = "too-deep"  # nested past max_json_depth (or any JSON reader's recursion)
    TOO_MANY_NODES = "too-many-nodes"  # more values than max_json_nodes

    @property
    def limit(self) -> str | None:
        """The `Limits` field whose cap this is; None for a page's own fault."""
        return _LIMIT_OF.get(self)


_LIMIT_OF = {FailureKind.TOO_DEEP: "max_json_depth", FailureKind.TOO_MANY_NODES: "max_json_nodes"}


@dataclass(frozen=True, slots=True)
class JsonFailure:
    """Why a block could not be read, in words (`message`) and as a `FailureKind`."""

    kind: FailureKind
    message: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True, slots=True)
class JsonParse:
    data: Any = None
    repairs: tuple[str, ...] = ()
    failure: JsonFailure | None = None


def _blank(text: str) -> str:
    """Spaces in place of `text`, newlines kept, so positions stay put."""
    return re.sub(r"[^\n]", " ", text)


def _strip_wrappers(text: str, repairs: list[str]) -> str:
    for opener, closer, name in (
        (_HTML_COMMENT_OPEN, _HTML_COMMENT_CLOSE, "removed an HTML comment wrapper <!-- -->"),
        (_CDATA_OPEN, _CDATA_CLOSE, "removed a CDATA wrapper <![CDATA[ ]]>"),
    ):
        head = opener.search(text)
        if head is None:
            continue
        text = text[: head.end(1)] + _blank(text[head.end(1) : head.end()]) + text[head.end() :]
        tail = closer.search(text)
        if tail is not None:
            text = text[: tail.start()] + _blank(tail.group(0))
        repairs.append(name)
    return text


def _strip_tokens(text: str, repairs: list[str]) -> str:
    found: set[str] = set()

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        if token.startswith("//") or token.startswith("/*"):
            found.add("removed JavaScript comments (// or /* */)")
        else:
            found.add("removed a trailing comma before } or ]")
        return _blank(token)

    text = _TOKENS.sub(replace, text)
    repairs.extend(sorted(found))
    return text


def _strip_trailing(text: str, repairs: list[str]) -> str:
    stripped = False
    while (match := _TRAILING_PUNCT.search(text)) is not None:
        text = text[: match.start()] + " " + match.group(1)
        stripped = True
    if stripped:
        repairs.append("removed a trailing semicolon or comma after the JSON")
    return text


def _loads(text: str, *, strict: bool) -> tuple[Any, JsonFailure | None]:
    try:
        return json.loads(text, strict=strict), None
    except json.JSONDecodeError as exc:
        return None, JsonFailure(FailureKind.SYNTAX, exc.msg, exc.lineno, exc.colno)
    except RecursionError:
        return None, JsonFailure(FailureKind.TOO_DEEP, "nested too deeply for any JSON reader")


def measure(data: Any, limits: Limits = DEFAULT_LIMITS) -> JsonFailure | None:
    """Check nesting depth and node count with an explicit stack (no recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > limits.max_json_nodes:
            return JsonFailure(
                FailureKind.TOO_MANY_NODES,
                f"more than {limits.max_json_nodes} JSON values (limit max_json_nodes)",
            )
        if isinstance(value, dict | list):
            if depth > limits.max_json_depth:
                return JsonFailure(
                    FailureKind.TOO_DEEP,
                    f"nested deeper than {limits.max_json_depth} levels (limit max_json_depth)",
                )
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return None


def _decode_entities(text: str, repairs: list[str]) -> str:
    """JSON a CMS escaped as HTML (`{&quot;name&quot;: ...}`), when no real quote is left."""
    if "&quot;" in text and '"' not in text:
        repairs.append("decoded HTML entities (&quot;) the page put in place of quotes")
        return html.unescape(text)
    return text


def _strip_bom(text: str, repairs: list[str]) -> str:
    if text.lstrip(" \t\r\n").startswith("\ufeff"):
        repairs.append("removed a byte-order mark before the JSON")
        return text.replace("\ufeff", " ", 1)
    return text


def _loads_sequence(text: str) -> Any:
    """Several JSON values one after another (optionally comma-separated), as a list."""
    decoder = json.JSONDecoder(strict=False)
    values: list[Any] = []
    position, end = 0, len(text)
    while True:
        while position < end and (text[position].isspace() or text[position] == ","):
            position += 1
        if position >= end:
            return values
        value, position = decoder.raw_decode(text, position)
        values.append(value)


def _repair(text: str, repairs: list[str]) -> tuple[Any, JsonFailure | None]:
    repaired = _strip_bom(_decode_entities(text, repairs), repairs)
    repaired = _strip_wrappers(repaired, repairs)
    repaired = _strip_tokens(repaired, repairs)
    repaired = _strip_trailing(repaired, repairs)
    data, failure = _loads(repaired, strict=True)
    if failure is None or failure.kind is not FailureKind.SYNTAX:
        return data, failure
    lenient, lenient_failure = _loads(repaired, strict=False)
    if lenient_failure is None:
        repairs.append("accepted raw control characters (tab, newline) inside strings")
        return lenient, None
    if lenient_failure.kind is not FailureKind.SYNTAX:
        return None, lenient_failure
    if lenient_failure.message == "Extra data":
        try:
            several = _loads_sequence(repaired)
        except (json.JSONDecodeError, RecursionError):
            return None, failure
        repairs.append(f"read {len(several)} JSON values written one after another as a list")
        return several, None
    return None, failure


def parse_lenient(text: str, limits: Limits = DEFAULT_LIMITS) -> JsonParse:
    """Parse `text` strictly, else repaired; bounded in depth and node count."""
    data, failure = _loads(text, strict=True)
    repairs: list[str] = []
    if failure is not None and failure.kind is FailureKind.SYNTAX:
        data, failure = _repair(text, repairs)
    if failure is not None:
        return JsonParse(repairs=tuple(repairs), failure=failure)
    shape = measure(data, limits)
    if shape is not None:
        return JsonParse(repairs=tuple(repairs), failure=shape)
    return JsonParse(data=data, repairs=tuple(repairs))
