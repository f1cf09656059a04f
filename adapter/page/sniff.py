"""Telling what a response body is: HTML, JSON(-LD) or something else.

The Content-Type header is believed when it names HTML or JSON, except that
bytes which are plainly binary (NUL bytes) never count as text; without a
useful header the first bytes decide. Pure and cheap: it runs on every page.
"""

from __future__ import annotations

from typing import Any

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/xml", "text/xml"})
JSON_TYPES = frozenset({"application/ld+json", "application/json", "text/json"})


def mentions_dataset(data: Any, limit: int = 10_000) -> bool:
    """Cheap, iterative: any `@type` whose last segment reads like 'dataset'."""
    stack, seen = [data], 0
    while stack and seen < limit:
        value = stack.pop()
        seen += 1
        if isinstance(value, dict):
            kinds = value.get("@type", value.get("type"))
            for kind in kinds if isinstance(kinds, list) else [kinds]:
                if isinstance(kind, str) and kind.lower().endswith("dataset"):
                    return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def is_jsonld(data: dict[str, Any] | list[Any]) -> bool:
    items = data if isinstance(data, list) else [data]
    return any(isinstance(i, dict) and ("@context" in i or "@type" in i) for i in items)


def looks_binary(body: bytes) -> bool:
    head = body[:1024]
    return b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff"))


def route(body: bytes, content_type: str) -> str:
    """'html', 'json' or 'other', from the content type and, where unclear, the bytes."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if looks_binary(body):
        return "other"
    if kind in JSON_TYPES or kind.endswith("+json"):
        return "json"
    if kind in HTML_TYPES:
        return "html"
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"{", b"[")):
        return "json"
    if head.startswith(b"<") and (b"<html" in body[:4096].lower() or b"<script" in head):
        return "html"
    return "other"
