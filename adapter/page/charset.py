"""Decoding a page body to text, the way browsers choose the encoding.

Order (WHATWG "encoding sniffing", simplified): a byte-order mark, then the
charset of the Content-Type header, then a `<meta charset>` or `http-equiv`
declaration in the first 2 KiB, else UTF-8. Invalid bytes are replaced (the
page is still read) and counted, so the caller can say so.

A label means what it means to a browser (the WHATWG Encoding standard's table,
as `w3lib.encoding` resolves it), not to Python: `iso-8859-1`, `latin1` and
`ascii` are windows-1252, so `b"5\x80"` reads "5€", not a C1 control. Its five
bytes Python's cp1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) are the
code points of the same number, as in browsers: no windows-1252 byte is invalid.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from w3lib.encoding import resolve_encoding

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


WINDOWS_1252 = "cp1252"
# windows-1252 as browsers decode it: Latin-1, with 0x80-0x9F mapped where cp1252 defines them
_WINDOWS_1252_C1 = {
    b: ord(bytes([b]).decode(WINDOWS_1252))
    for b in range(0x80, 0xA0)
    if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)
}


def codec_for(label: str | None) -> str | None:
    """The Python codec a browser decodes with for a charset label, or None when unknown."""
    if not label:
        return None
    return resolve_encoding(label.strip().strip("\"'"))


def _choose(body: bytes, header_charset: str | None) -> tuple[str, str, int, str | None]:
    """(codec, source, bytes to skip, unknown declared name)."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, "bom", len(bom), None
    unknown: str | None = None
    if header_charset:
        codec = codec_for(header_charset)
        if codec:
            return codec, "header", 0, None
        unknown = header_charset
    match = _META.search(body[:2048])
    if match:
        declared = match.group(1).decode("ascii", "replace")
        codec = codec_for(declared)
        if codec:
            # a page cannot really be UTF-16 if its ASCII meta tag was readable
            return ("utf-8" if codec.startswith("utf-16") else codec), "meta", 0, None
        unknown = unknown or declared
    return "utf-8", "default", 0, unknown


def chosen_codec(body: bytes, header_charset: str | None = None) -> str:
    """The codec `decode` would read `body` with (it looks at 2 KiB at most)."""
    return _choose(body, header_charset)[0]


def decode(body: bytes, header_charset: str | None = None) -> Decoded:
    """Text of `body`, with how its encoding was chosen and what went wrong."""
    codec, source, skip, unknown = _choose(body, header_charset)
    raw = body[skip:]
    if codec == WINDOWS_1252:  # every byte is defined (see the module docstring)
        return Decoded(raw.decode("latin-1").translate(_WINDOWS_1252_C1), codec, source, 0, unknown)
    try:
        return Decoded(raw.decode(codec), codec, source, 0, unknown)
    except UnicodeDecodeError:
        pass
    text = raw.decode(codec, errors="replace")
    invalid = text.count("\ufffd") - raw.decode(codec, errors="ignore").count("\ufffd")
    return Decoded(text, codec, source, max(invalid, 1), unknown)
