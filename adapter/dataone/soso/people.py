"""`creator`: people with ORCIDs, in the https form, whose check digit is right.

science-on-schema.org (Roles of People) wraps a creator in a `Role`; an ORCID may be the
Person's `@id`, an `identifier` (text or PropertyValue `url`/`value`) or `sameAs`. The check
digit is ISO 7064 MOD 11-2, as ORCID computes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from adapter.dataone.soso import codes
from adapter.dataone.soso.paths import at, first_text, show
from adapter.findings import Finding
from adapter.jsonld.framed import first_literal, literal, node_id, types, values

_ORCID = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])", re.I)
_ORCID_URI = re.compile(r"^https://orcid\.org/\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
_PEOPLE_IN_ROLE = ("creator", "author")


def creator_findings(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    prop = "creator" if values(dataset, "creator") else "author"
    items = values(dataset, prop)
    if not items:
        yield codes.CREATOR_MISSING.at(
            url,
            "The Dataset names no creator (nor author); publish the people who made it as "
            'Person nodes, e.g. {"@type": "Person", "name": "...", "@id": '
            '"https://orcid.org/0000-0000-0000-0000"}.',
            "$.creator",
        )
        return
    for i, item in enumerate(items):
        path = at(prop, i, len(items))
        person, path = _unwrap_role(item, path)
        yield from _person(person, path, url)


def _unwrap_role(item: Any, path: str) -> tuple[Any, str]:
    """science-on-schema.org's Role pattern: a Role whose creator is the Person."""
    if isinstance(item, Mapping) and "Role" in types(item):
        for prop in _PEOPLE_IN_ROLE:
            inner = values(item, prop)
            if inner:
                return inner[0], f"{path}.{prop}"
    return item, path


def _person(item: Any, path: str, url: str) -> Iterator[Finding]:
    candidates = _orcid_candidates(item, path)
    for text, where in candidates:
        digits = _ORCID.search(text)
        if digits is None:
            continue
        bare = "-".join(digits.groups()).upper()
        if not orcid_checksum_ok(bare):
            yield codes.ORCID_INVALID.at(
                url,
                f"{where} is the ORCID iD {bare}, whose check digit is wrong (it should end "
                f"in {orcid_check_digit(bare[:-1])}): a digit is mistyped; copy it from the "
                "person's ORCID record.",
                f"$.{where}",
            )
        elif not _ORCID_URI.match(text.strip()):
            yield codes.ORCID_NOT_URI.at(
                url,
                f"{where} gives the ORCID iD as {show(text)}; publish it as the URI "
                f'"https://orcid.org/{bare}".',
                f"$.{where}",
            )
        return  # the first ORCID-looking value is the person's
    kinds = types(item) if isinstance(item, Mapping) else []
    if "Organization" in kinds or not isinstance(item, Mapping):
        return  # organisations have no ORCID; a bare name says nothing more to check
    name = first_literal(item, "name") or " ".join(
        n for n in (first_literal(item, "givenName"), first_literal(item, "familyName")) if n
    )
    who = f" ({name})" if name else ""
    yield codes.CREATOR_NO_ORCID.at(
        url,
        f"{path}{who} has no ORCID; where they have one, publish it as {path}.@id or "
        f'{path}.identifier, "https://orcid.org/0000-0000-0000-0000".',
        f"$.{path}",
    )


def _orcid_candidates(item: Any, path: str) -> list[tuple[str, str]]:
    """(text, path) of every value that may hold the person's ORCID iD, @id first."""
    if not isinstance(item, Mapping):
        text = literal(item)
        return [(text, path)] if text and "orcid" in text.lower() else []
    out: list[tuple[str, str]] = []
    own = node_id(item)
    if own and not own.startswith("_:"):
        out.append((own, f"{path}.@id"))
    for prop in ("identifier", "sameAs", "url"):
        items = values(item, prop)
        for i, value in enumerate(items):
            where = f"{path}.{at(prop, i, len(items))}"
            if isinstance(value, Mapping) and literal(value) is None:
                for sub in ("@id", "url", "value"):
                    raw = value.get(sub) if sub == "@id" else first_text(value, sub)
                    if isinstance(raw, str) and raw.strip():
                        out.append((raw, where if sub == "@id" else f"{where}.{sub}"))
            else:
                text = literal(value) or node_id(value)
                if text:
                    out.append((text, where))
    return [(t, w) for t, w in out if _looks_orcid(t)]


def _looks_orcid(text: str) -> bool:
    low = text.strip().lower()
    return "orcid" in low or re.fullmatch(r"\d{4}-\d{4}-\d{4}-\d{3}[\dx]", low) is not None


def orcid_check_digit(base: str) -> str:
    """ISO 7064 MOD 11-2 over the first 15 digits of an ORCID iD (hyphens ignored)."""
    total = 0
    for ch in base.replace("-", ""):
        total = (total + int(ch)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def orcid_checksum_ok(bare: str) -> bool:
    digits = bare.replace("-", "").upper()
    if len(digits) != 16 or not digits[:15].isdigit():
        return False
    return orcid_check_digit(digits[:15]) == digits[15]
