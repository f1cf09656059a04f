"""Values that stand where a URL belongs but are none: placeholders and non-web addresses.

Repositories write "see landing page", "N/A" or "TBD" into `contentUrl`, `url` or
`@id`, and script or inline-data addresses (`javascript:`, `data:`) turn up too.
JSON-LD expansion resolves a relative value against the page, so "see landing
page" arrives as https://repo.example.org/ds/see landing page and would pass as
a link. `not_a_url` recognises both spellings, the value as written and as
resolved, and returns what the page wrote, so a finding can name it.
"""

from __future__ import annotations

from functools import lru_cache
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
        # a resolved placeholder ends with it ("?" resolves to the page less its fragment):
        # a value ending with none of them is none of them, with no urljoin for the page
        if not (plain.endswith(_TAILS) or low.endswith(_TAILS) or _query(base) in (plain, low)):
            return None
        for placeholder, resolved in _resolved(base):
            if plain == resolved or low == resolved:
                return unquote(text)[len(unquote(text)) - len(placeholder) :]
    return None


_TAILS = tuple(p for p in PLACEHOLDERS if p != "?")


@lru_cache(maxsize=1024)
def _query(base: str) -> str:
    """`base` joined with "?", lowercased (the page itself, less any fragment)."""
    return urljoin(base, "?").lower()


@lru_cache(maxsize=1024)
def _resolved(base: str) -> tuple[tuple[str, str], ...]:
    """Each placeholder as resolved against `base`, lowercased: a page's values are all
    resolved against one base, and resolving fifteen placeholders for each of them was a
    sixth of a page's CPU."""
    page = base.lower()
    pairs = ((p, _query(base) if p == "?" else _join(base, p).lower()) for p in PLACEHOLDERS)
    return tuple((p, r) for p, r in pairs if r != page)  # "?" resolves to the page itself


def _join(base: str, placeholder: str) -> str:
    """urljoin(base, placeholder), with one urljoin for all of them: each but "?" is a
    relative path of plain segments (no scheme, query, fragment or dot segment), which
    urljoin writes after the same stem as any other such segment ("x"). A urljoin was
    40 us on a slow machine, fifteen a page."""
    if placeholder == "?":
        return urljoin(base, placeholder)
    stem = _stem(base)
    return urljoin(base, placeholder) if stem is None else stem + placeholder


@lru_cache(maxsize=64)
def _stem(base: str) -> str | None:
    """What urljoin writes before a plain relative segment resolved against `base`."""
    joined = urljoin(base, "x")
    return joined[:-1] if joined.endswith("x") else None
