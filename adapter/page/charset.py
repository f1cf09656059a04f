"""Decoding a page body to text, the way browsers choose the encoding.

Order (WHATWG "encoding sniffing", simplified): a byte-order mark, then the
charset of the Content-Type header, then a `<meta charset>` or `http-equiv`
declaration in the first 2 KiB, else UTF-8. Invalid bytes are replaced (the
page is still read) and counted, so the caller can say so.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str  # the codec used, e.g. "utf-8"
    source: str  # "bom" | "header" | "meta" | "default"
    invalid_bytes: int = 0  # bytes that could not be decoded and were replaced
    unknown_charset: str | None = None  # a declared charset Python does not know


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None


def _choose(body: bytes, header_charset: str | None) -> tuple[str, str, int, str | None]:
    """(codec, source, bytes to skip, unknown declared name)."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, "bom", len(bom), None
    unknown: str | None = None
    if header_charset:
        codec = _codec(header_charset)
        if codec:
            return codec, "header", 0, None
        unknown = header_charset
    match = _META.search(body[:2048])
    if match:
        declared = match.group(1).decode("ascii", "replace")
        codec = _codec(declared)
        if codec:
            # a page cannot really be UTF-16 if its ASCII meta tag was readable
            return ("utf-8" if codec.startswith("utf-16") else codec), "meta", 0, None
        unknown = unknown or declared
    return "utf-8", "default", 0, unknown


def decode(body: bytes, header_charset: str | None = None) -> Decoded:
    """Text of `body`, with how its encoding was chosen and what went wrong."""
    codec, source, skip, unknown = _choose(body, header_charset)
    raw = body[skip:]
    try:
        return Decoded(raw.decode(codec), codec, source, 0, unknown)
    except UnicodeDecodeError:
        pass
    text = raw.decode(codec, errors="replace")
    invalid = text.count("\ufffd") - raw.decode(codec, errors="ignore").count("\ufffd")
    return Decoded(text, codec, source, max(invalid, 1), unknown)
