"""DOIs in every spelling published in the wild, reduced to one canonical form.

Repositories write the same DOI as ``doi:10.5061/dryad.x``, ``DOI: 10.5061/...``,
``https://doi.org/10.5061/...``, ``http://dx.doi.org/...``, ``info:doi/10...``,
``urn:doi:10...``, a bare ``10.5061/...``, percent-encoded (``10.5061%2Fdryad.x``)
and in any letter case. DOIs are case-insensitive (DOI Handbook 2.4), so the
canonical form is the bare ``10.prefix/suffix`` with ASCII letters in **lowercase**
(only ASCII case is folded, as the DOI system does; other characters stay as
written); ``doi_uri`` and ``doi_url`` give the ``doi:`` and ``https://doi.org/``
spellings of it.

Pure functions; `normalize_doi` never raises, whatever text it is given.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote

# Prefixes stripped before the bare DOI is matched (lowercase, longest first).
_PREFIXES = (
    "https://dx.doi.org/",
    "http://dx.doi.org/",
    "https://www.doi.org/",
    "http://www.doi.org/",
    "https://doi.org/",
    "http://doi.org/",
    "dx.doi.org/",
    "doi.org/",
    "info:doi/",
    "urn:doi:",
    "doi:",
)

# 10.<registrant>[.<sub>...]/<suffix>: the suffix is any visible characters.
_BARE = re.compile(r"10\.[0-9]+(?:\.[0-9]+)*/\S+")

# Values repositories publish when they have no DOI yet.
PLACEHOLDERS = frozenset({"", "null", "none", "nil", "n/a", "na", "undefined", "tbd", "-"})

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

MAX_LENGTH = 1024  # longer text is not a DOI; bounds the work on hostile input


def normalize_doi(text: object) -> str | None:
    """The canonical lowercase ``10.x/y`` for any spelling of a DOI, else None."""
    if not isinstance(text, str) or len(text) > MAX_LENGTH:
        return None
    return _normalized(text)


@lru_cache(maxsize=4096)
def _normalized(text: str) -> str | None:
    """`normalize_doi` of a str, remembered (pure): a page's checks, cross-checks and
    proposal ask for the same few values' DOIs some twenty times."""
    value = _strip_prefix(text.strip())
    if "%" in value:
        value = _strip_prefix(unquote(value).strip())
    value = value.rstrip(".,;")  # sentence punctuation around a pasted DOI
    if not _BARE.fullmatch(value):
        return None
    return value.translate(_ASCII_LOWER)


def _strip_prefix(value: str) -> str:
    lowered = value.lower()
    for prefix in _PREFIXES:
        if lowered.startswith(prefix):
            return value[len(prefix) :].lstrip()
    return value


def is_placeholder(text: str) -> bool:
    """True for empty identifiers and the ``doi:null`` kind of stand-in."""
    value = _strip_prefix(text.strip()).strip().lower()
    return value in PLACEHOLDERS


def looks_like_doi_attempt(text: str) -> bool:
    """True when `text` says it is a DOI (a DOI prefix or a ``10.`` start) but is not one."""
    lowered = text.strip().lower()
    return normalize_doi(text) is None and (
        lowered.startswith(_PREFIXES) or lowered.startswith("10.")
    )


def doi_uri(doi: str) -> str:
    """``doi:10.x/y``: the form DataONE uses as a seriesId."""
    return f"doi:{doi}"


def doi_url(doi: str) -> str:
    """``https://doi.org/10.x/y``: the resolvable form (Signposting ``cite-as``)."""
    return f"https://doi.org/{doi}"
