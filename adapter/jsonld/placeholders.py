"""Values that stand where a URL belongs but are none: placeholders and non-web addresses.

Repositories write "see landing page", "N/A" or "TBD" into `contentUrl`, `url` or
`@id`, and script or inline-data addresses (`javascript:`, `data:`) turn up too.
JSON-LD expansion resolves a relative value against the page, so "see landing
page" arrives as https://repo.example.org/ds/see landing page and would pass as
a link. `not_a_url` recognises both spellings, the value as written and as
resolved, and returns what the page wrote, so a finding can name it.
"""

from __future__ import annotations

from urllib.parse import unquote, urljoin

PLACEHOLDERS = (
    "see landing page",
    "see the landing page",
    "not available",
    "not applicable",
    "unknown",
    "n/a",
    "na",
    "tbd",
    "tba",
    "todo",
    "none",
    "null",
    "undefined",
    "-",
    "?",
)
NON_WEB_SCHEMES = ("javascript:", "data:", "vbscript:", "file:", "about:")


def not_a_url(value: str | None, base: str | None = None) -> str | None:
    """What the page wrote, when `value` is a placeholder or a non-web address; else None.

    `base`: the address relative values were resolved against (the landing page)."""
    if not value:
        return None
    text = value.strip()
    low = text.lower()
    if low.startswith(NON_WEB_SCHEMES):
        return text
    if unquote(low) in PLACEHOLDERS:
        return text
    if base:
        plain = unquote(low)
        for placeholder in PLACEHOLDERS:
            resolved = urljoin(base, placeholder).lower()
            if resolved == base.lower():  # "?" resolves to the page itself
                continue
            if plain == resolved or low == resolved:
                return unquote(text)[len(unquote(text)) - len(placeholder) :]
    return None
