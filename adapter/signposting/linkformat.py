"""Writing RFC 8288 `Link` values, and the parameter-value codecs (quoted-string, RFC 8187).

`format_link_header` serializes links back into one `Link` field value;
`decode_ext` and `media_type` normalize parameter values read by the parser.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote, unquote

from adapter.models import Link


def media_type(value: str | None) -> str | None:
    """Media types are case-insensitive: kept trimmed and lower-cased."""
    if value is None or not value.strip():
        return None
    return value.strip().lower()


def decode_ext(value: str) -> str:
    """RFC 8187 `charset'lang'pct-encoded`; undecodable text is kept as sent."""
    charset, sep, rest = value.partition("'")
    if not sep:
        return value
    _lang, sep, encoded = rest.partition("'")
    if not sep:
        return value
    try:
        return unquote(encoded, encoding=charset or "utf-8", errors="strict")
    except (LookupError, UnicodeDecodeError):
        return value


# -- writing ------------------------------------------------------------------


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_link(link: Link, context: str | None = None) -> str:
    """One link-value; `anchor` is left out when it is the context itself."""
    href = link.href.replace(">", "%3E").replace("<", "%3C")
    parts = [f"<{href}>", f"rel={_quote(link.rel)}"]
    if link.anchor != context:
        parts.append(f"anchor={_quote(link.anchor)}")
    if link.type:
        parts.append(f"type={_quote(link.type)}")
    if link.profile:
        parts.append(f"profile={_quote(link.profile)}")
    for name, value in link.extra:
        if name == "title" and not value.isascii():
            parts.append(f"title*=UTF-8''{quote(value, safe='')}")
        else:
            parts.append(f"{name}={_quote(value)}")
    return " ; ".join(parts)


def format_link_header(links: Iterable[Link], context: str | None = None) -> str:
    """A Link field value: link-values joined by commas, on one line (FAIR-SP § 3.1)."""
    return " , ".join(format_link(link, context) for link in links)
