"""The science-on-schema.org recommendations for one framed Dataset, as findings.

Pure: a framed Dataset (see `adapter.jsonld.framed`) in, `soso/` findings out,
every one info or a warning (`adapter.dataone.soso.codes`), each message naming
the property and its path (`creator[2].identifier`). `check_soso` is what the
pipeline calls for every Dataset; the rules read what science-on-schema.org,
Google's Dataset guidance and F-UJI ask for, and accept the spellings real
pages use (a Role around a creator, `spdx:algorithm` or
`spdx:checksumAlgorithm`, a licence node with a `url`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from adapter.dataone.soso import codes
from adapter.dataone.soso.dates import coverage, instant
from adapter.dataone.soso.geo import spatial_findings
from adapter.findings import Finding
from adapter.jsonld.framed import first_literal, literal, node_id, types, values
from adapter.signposting.identities import license_key

DESCRIPTION_RANGE = (50, 5000)  # characters, Google's Dataset guidance
_SPDX = re.compile(r"^https?://(?:www\.)?spdx\.org/licenses/[A-Za-z0-9.+\-]+(?:\.html|\.json)?/?$")
_CC = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/(?:licenses|publicdomain)/[a-z\-]+/\d\.\d", re.I
)
_ORCID = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])", re.I)
_ORCID_URI = re.compile(r"^https://orcid\.org/\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
# licences data repositories use, by SPDX id: a short name or URI is only turned into an SPDX URI
# when it is one of these (a word such as "proprietary" is no SPDX id)
_COMMON_SPDX = {
    i.lower(): i
    for i in (
        "CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-NC-4.0", "CC-BY-ND-4.0", "CC-BY-NC-SA-4.0",
        "CC-BY-NC-ND-4.0", "CC-BY-3.0", "CC-BY-SA-3.0", "CC-BY-NC-3.0", "CC-BY-2.0", "CC-BY-2.5",
        "MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "GPL-2.0-only", "GPL-3.0-only",
        "GPL-3.0-or-later", "ODbL-1.0", "ODC-By-1.0", "PDDL-1.0", "Unlicense", "etalab-2.0",
        "OGL-UK-3.0", "OGL-Canada-2.0", "DL-DE-BY-2.0", "NLOD-2.0",
    )
}  # fmt: skip
_HEX_DIGITS = {"md5": 32, "sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512": 128}
_PEOPLE_IN_ROLE = ("creator", "author")


def check_soso(dataset: Mapping[str, Any], url: str) -> list[Finding]:
    """Every science-on-schema.org recommendation on one framed Dataset."""
    out: list[Finding] = []
    out.extend(_license(dataset, url))
    out.extend(_creators(dataset, url))
    out.extend(spatial_findings(dataset, url))
    out.extend(_temporal(dataset, url))
    out.extend(_present(dataset, url))
    out.extend(_variables(dataset, url))
    out.extend(_description(dataset, url))
    out.extend(_date_published(dataset, url))
    out.extend(_free(dataset, url))
    out.extend(_funding(dataset, url))
    out.extend(_checksums(dataset, url))
    return out


def _at(prop: str, i: int, count: int) -> str:
    return f"{prop}[{i}]" if count > 1 else prop


def _show(text: str | None) -> str:
    if text is None:
        return "(none)"
    text = " ".join(text.split())
    return repr(text if len(text) <= 70 else text[:67] + "...")


# -- license ------------------------------------------------------------------


def _license(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "license")
    if not items:
        yield codes.LICENSE_MISSING.at(
            url,
            "The Dataset has no license; publish its SPDX or Creative Commons URI, e.g. "
            '"license": "https://spdx.org/licenses/CC-BY-4.0".',
            "$.license",
        )
        return
    for i, item in enumerate(items):
        path = _at("license", i, len(items))
        text, path = _license_text(item, path)
        if text is None or not text.strip():
            yield codes.LICENSE_NOT_URI.at(
                url,
                f"{path} gives no licence URI (a node with no @id or url); publish the "
                "licence's SPDX URI, e.g. https://spdx.org/licenses/CC-BY-4.0.",
                f"$.{path}",
            )
            continue
        text = text.strip()
        if _SPDX.match(text) or _CC.match(text):
            continue
        instead = spdx_for(text)
        if "://" not in text:
            hint = (
                f"publish {instead}"
                if instead
                else "publish the licence's SPDX URI (https://spdx.org/licenses/<id>) or "
                "Creative Commons URI"
            )
            yield codes.LICENSE_NOT_URI.at(
                url, f"{path} is the text {_show(text)}, not a URI: {hint}.", f"$.{path}"
            )
        else:
            hint = f"publish {instead} as well" if instead else "publish its SPDX URI as well"
            yield codes.LICENSE_UNKNOWN_URI.at(
                url,
                f"{path} is {text}, not an SPDX or Creative Commons licence URI; harvesters "
                f"cannot tell which licence it is: {hint}.",
                f"$.{path}",
            )


def spdx_for(text: str) -> str | None:
    """The SPDX URI of a common licence named by a short id ("CC BY 4.0") or another URI."""
    spelled = text.strip() if "://" in text else "-".join(text.split())
    key = license_key(spelled)
    found = _COMMON_SPDX.get(key.removeprefix("spdx:")) if key.startswith("spdx:") else None
    return f"https://spdx.org/licenses/{found}" if found else None


def _license_text(item: Any, path: str) -> tuple[str | None, str]:
    """The licence's text or IRI: a literal, an @id, or a CreativeWork's url."""
    if not isinstance(item, Mapping) or literal(item) is not None:
        return literal(item), path
    own = node_id(item)
    if own and not own.startswith("_:"):
        return own, path
    for prop in ("url", "identifier", "name"):
        for value in values(item, prop):
            text = literal(value) or node_id(value)
            if text and text.strip():
                return text, f"{path}.{prop}"
    return None, path


# -- creators and ORCIDs ------------------------------------------------------


def _creators(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
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
        path = _at(prop, i, len(items))
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
                f"{where} gives the ORCID iD as {_show(text)}; publish it as the URI "
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
            where = f"{path}.{_at(prop, i, len(items))}"
            if isinstance(value, Mapping) and literal(value) is None:
                for sub in ("@id", "url", "value"):
                    raw = value.get(sub) if sub == "@id" else _first_text(value, sub)
                    if isinstance(raw, str) and raw.strip():
                        out.append((raw, where if sub == "@id" else f"{where}.{sub}"))
            else:
                text = literal(value) or node_id(value)
                if text:
                    out.append((text, where))
    return [(t, w) for t, w in out if _looks_orcid(t)]


def _first_text(node: Mapping[str, Any], prop: str) -> str | None:
    for value in values(node, prop):
        text = literal(value) or node_id(value)
        if text:
            return text
    return None


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


# -- temporal coverage --------------------------------------------------------


def _temporal(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "temporalCoverage")
    if not items:
        yield codes.TEMPORAL_MISSING.at(url, where="$.temporalCoverage")
        return
    for i, item in enumerate(items):
        text = literal(item)
        if text is None:
            continue  # an OWL-Time node (geologic time): science-on-schema.org's own pattern
        path = _at("temporalCoverage", i, len(items))
        read = coverage(text)
        if not read.valid:
            yield codes.TEMPORAL_INVALID.at(
                url,
                f"{path} is {_show(text)}, not an ISO 8601 date or interval; publish e.g. "
                '"2018-01-22/2018-12-31", or "2018/.." for an open end.',
                f"$.{path}",
            )
        elif not read.in_order:
            start, _, end = text.strip().partition("/")
            yield codes.TEMPORAL_ORDER.at(
                url,
                f"{path} is {_show(text)}: it ends before it starts; did you mean "
                f'"{end.strip()}/{start.strip()}"?',
                f"$.{path}",
            )


# -- properties that only need to be there ------------------------------------


def _present(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    if not any(_has_text(v) for v in values(dataset, "keywords")):
        yield codes.KEYWORDS_MISSING.at(
            url,
            "The Dataset has no keywords; publish its subjects, e.g. "
            '"keywords": ["ocean acidification", "pCO2"].',
            "$.keywords",
        )
    if not values(dataset, "publisher") and not values(dataset, "provider"):
        yield codes.PUBLISHER_MISSING.at(
            url,
            "The Dataset names neither a publisher nor a provider (either will do); name the "
            'repository, e.g. "publisher": {"@type": "Organization", "name": "..."}.',
            "$.publisher",
        )
    if first_literal(dataset, "version") is None:
        yield codes.VERSION_MISSING.at(url, where="$.version")


def _has_text(value: Any) -> bool:
    if isinstance(value, Mapping) and literal(value) is None:
        return bool(first_literal(value, "name") or node_id(value))
    text = literal(value)
    return bool(text and text.strip())


# -- variables ----------------------------------------------------------------


def _variables(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "variableMeasured")
    if not items:
        yield codes.VARIABLES_MISSING.at(url, where="$.variableMeasured")
        return
    for i, item in enumerate(items):
        path = _at("variableMeasured", i, len(items))
        if not isinstance(item, Mapping) or literal(item) is not None:
            text = literal(item) or node_id(item) or ""
            yield codes.VARIABLE_NOT_PROPERTYVALUE.at(
                url,
                f"{path} is the text {_show(text)}; publish a PropertyValue, e.g. "
                f'{{"@type": "PropertyValue", "name": {_json(text)}, "unitText": "..."}}.',
                f"$.{path}",
            )
        elif set(item) <= {"@id"}:
            continue  # a reference to a variable described elsewhere
        elif "PropertyValue" not in types(item):
            shown = ", ".join(types(item)) or "an untyped node"
            yield codes.VARIABLE_NOT_PROPERTYVALUE.at(
                url,
                f'{path} is {shown}, not a PropertyValue; type it "@type": "PropertyValue".',
                f"$.{path}",
            )
        elif first_literal(item, "name") is None:
            yield codes.VARIABLE_NO_NAME.at(
                url, f"{path} is a PropertyValue with no name; give it one.", f"$.{path}.name"
            )


def _json(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"')[:60] + '"'


# -- description, datePublished, isAccessibleForFree --------------------------


def _description(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    text = first_literal(dataset, "description")
    if text is None:
        return  # dataone/description-missing says so
    length = len(" ".join(text.split()))
    low, high = DESCRIPTION_RANGE
    if length < low:
        yield codes.DESCRIPTION_LENGTH.at(
            url,
            f"description is {length} characters long, under the {low} Google's Dataset "
            "guidance asks for; write an abstract of a few sentences (what, where, when, how).",
            "$.description",
        )
    elif length > high:
        yield codes.DESCRIPTION_LENGTH.at(
            url,
            f"description is {length} characters long, over the {high} Google's Dataset "
            "guidance allows (longer text is cut); keep the abstract here and the rest in the "
            "linked metadata record.",
            "$.description",
        )


def _date_published(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "datePublished")
    if not items:
        yield codes.DATE_PUBLISHED_MISSING.at(url, where="$.datePublished")
        return
    for i, item in enumerate(items):
        text = literal(item)
        if text is not None and "-" in text.strip()[1:] and instant(text) is not None:
            continue
        if text is not None and re.fullmatch(r"\d{4}", text.strip()):
            continue  # a year alone is an ISO 8601 date of reduced precision
        path = _at("datePublished", i, len(items))
        yield codes.DATE_PUBLISHED_INVALID.at(
            url,
            f"{path} is {_show(text or node_id(item))}, not an ISO 8601 date; publish e.g. "
            '"2020-03-01".',
            f"$.{path}",
        )


def _free(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "isAccessibleForFree")
    if not items:
        yield codes.FREE_MISSING.at(url, where="$.isAccessibleForFree")
        return
    raw = items[0]
    value = raw.get("@value") if isinstance(raw, Mapping) else raw
    typed = isinstance(raw, Mapping) and str(raw.get("@type", "")).endswith("boolean")
    if len(items) == 1 and (isinstance(value, bool) or (typed and value in ("true", "false"))):
        return  # a JSON boolean, or the same as an xsd:boolean literal
    if len(items) > 1:
        shown = ", ".join(_show(literal(v)) for v in items)
        message = f"isAccessibleForFree has {len(items)} values ({shown}); publish one."
    else:
        text = literal(raw)
        said = text.strip().lower() if text else ""
        want = said if said in ("true", "false") else "true or false"
        message = (
            f"isAccessibleForFree is the text {_show(text)}, not a boolean; publish "
            f'"isAccessibleForFree": {want} (without quotes).'
        )
    yield codes.FREE_NOT_BOOLEAN.at(url, message, "$.isAccessibleForFree")


# -- funding ------------------------------------------------------------------


def _funding(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "funding")
    if not items:
        if values(dataset, "funder"):
            return  # the older pattern (a funder on the Dataset) still names who paid
        yield codes.FUNDING_MISSING.at(url, where="$.funding")
        return
    for i, item in enumerate(items):
        path = _at("funding", i, len(items))
        if not isinstance(item, Mapping) or literal(item) is not None:
            yield codes.FUNDING_NO_FUNDER.at(
                url,
                f"{path} is the text {_show(literal(item) or node_id(item))}; publish a "
                'MonetaryGrant, e.g. {"@type": "MonetaryGrant", "identifier": "<award>", '
                '"funder": {"@type": "Organization", "name": "..."}}.',
                f"$.{path}",
            )
        elif set(item) <= {"@id"}:
            continue  # a reference to a grant described elsewhere
        elif not values(item, "funder"):
            kinds = ", ".join(types(item)) or "an untyped node"
            yield codes.FUNDING_NO_FUNDER.at(
                url,
                f"{path} ({kinds}) names no funder; add "
                '"funder": {"@type": "Organization", "name": "..."}.',
                f"$.{path}.funder",
            )


# -- distribution checksums ---------------------------------------------------


def _checksums(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "distribution")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or "DataDownload" not in types(item):
            continue  # dataone/ findings say what is wrong with the entry itself
        path = _at("distribution", i, len(items))
        sums = [(p, v) for p in ("spdx:checksum", "checksum") for v in values(item, p)]
        if not sums:
            yield codes.CHECKSUM_MISSING.at(
                url,
                f"{path} has no checksum; publish "
                '"spdx:checksum": {"@type": "spdx:Checksum", "spdx:algorithm": '
                '"spdx:checksumAlgorithm_sha256", "spdx:checksumValue": "..."}.',
                f"$.{path}",
            )
            continue
        prop, found = sums[0]
        problem = _checksum_problem(found)
        if problem:
            yield codes.CHECKSUM_MALFORMED.at(url, f"{path}.{prop} {problem}.", f"$.{path}.{prop}")


def _checksum_problem(node: Any) -> str | None:
    if not isinstance(node, Mapping) or literal(node) is not None:
        return (
            f"is the text {_show(literal(node))}; publish a spdx:Checksum with "
            "spdx:checksumValue and spdx:algorithm"
        )
    value = _first_text(node, "spdx:checksumValue") or _first_text(node, "checksumValue")
    algorithm = next(
        (
            _first_text(node, p)
            for p in ("spdx:algorithm", "spdx:checksumAlgorithm", "algorithm")
            if _first_text(node, p)
        ),
        None,
    )
    if not value or not algorithm:
        missing = " and ".join(
            n for n, v in (("spdx:checksumValue", value), ("spdx:algorithm", algorithm)) if not v
        )
        return f"has no {missing}"
    name = re.sub(r"[^a-z0-9]", "", algorithm.lower())  # spdx:checksumAlgorithm_sha256, SHA-256
    known = next(((n, w) for n, w in _HEX_DIGITS.items() if name.endswith(n)), None)
    shown = value.strip()
    if known is not None and not re.fullmatch(rf"[0-9a-fA-F]{{{known[1]}}}", shown):
        return (
            f"gives the {known[0].upper()} value {_show(shown)}, which is not {known[1]} "
            "hexadecimal digits"
        )
    return None
