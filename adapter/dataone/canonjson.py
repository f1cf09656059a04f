"""RFC 8785 (JCS) canonical JSON, fast for the common document and exact always.

`rfc8785.dumps` is pure Python (a regex and a BytesIO write per string) and cost
about 1 ms per landing page. For most documents the C encoder of
`json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)` writes
the very same bytes: JCS and `json` escape strings alike (`"`, `\\`, the short
forms \\b \\f \\n \\r \\t, other controls as lowercase \\u00xx, everything else
verbatim including U+2028/9 and DEL). They differ only in
- numbers: JCS writes doubles the ECMAScript way (1.0 -> 1, 1e21 -> 1e+21) and
  forbids integers beyond 2**53; `json` writes Python's repr;
- key order: JCS sorts by UTF-16 code units, `json` by code points; the two
  orders agree unless a key holds a character beyond U+FFFF;
- lone surrogates, which JCS refuses and UTF-8 cannot encode.
So the fast path is taken only for documents made of exact dicts with str keys
in the Basic Multilingual Plane, lists, str, bool, None and safe integers
(`plain`); anything else, or a string UTF-8 cannot encode, goes to rfc8785
(`adapter.dataone.records.canonical_bytes`, the one canonical writer).
"""

from __future__ import annotations

import json
from typing import Any

MAX_SAFE_INT = 2**53 - 1
_BMP_MAX = "\uffff"
_encode = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def plain(value: Any) -> bool:
    """True when `json` serializes `value` exactly as RFC 8785 does (see the module docstring)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-MAX_SAFE_INT <= value <= MAX_SAFE_INT)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or max(key) <= _BMP_MAX):
                return False
            if not plain(item):
                return False
        return True
    if kind is list:
        return all(plain(item) for item in value)
    return False


def fast_dumps(value: Any) -> bytes | None:
    """The RFC 8785 bytes of a `plain` value, or None when the fast path is unsure."""
    try:
        if not plain(value):
            return None
        return _encode(value).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: rfc8785 decides (it refuses)
        return None
    except RecursionError:  # nested too deep for us: the reference path says what happens
        return None
