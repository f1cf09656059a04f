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
from adapter.dataone.soso.licence import license_findings
from adapter.dataone.soso.paths import at, first_text, show
from adapter.dataone.soso.people import creator_findings
from adapter.findings import Finding
from adapter.jsonld.framed import first_literal, literal, node_id, types, values

DESCRIPTION_RANGE = (50, 5000)  # characters, Google's Dataset guidance
MAX_PER_CODE = (
    25  # findings of one code per Dataset listed one by one (a creator each, a file each)
)
_HEX_DIGITS = {"md5": 32, "sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512": 128}


def check_soso(dataset: Mapping[str, Any], url: str) -> list[Finding]:
    """Every science-on-schema.org recommendation on one framed Dataset."""
    out: list[Finding] = []
    out.extend(license_findings(dataset, url))
    out.extend(creator_findings(dataset, url))
    out.extend(spatial_findings(dataset, url))
    out.extend(_temporal(dataset, url))
    out.extend(_present(dataset, url))
    out.extend(_variables(dataset, url))
    out.extend(_description(dataset, url))
    out.extend(_date_published(dataset, url))
    out.extend(_free(dataset, url))
    out.extend(_funding(dataset, url))
    out.extend(_checksums(dataset, url))
    return capped(out)


def capped(found: list[Finding], most: int = MAX_PER_CODE) -> list[Finding]:
    """At most `most` findings of one code; the rest as one finding that counts them.

    A Dataset with thousands of creators or files would otherwise give a finding each.
    """
    seen: dict[str, int] = {}
    out: list[Finding] = []
    rest: dict[str, list[Finding]] = {}
    for f in found:
        seen[f.code] = seen.get(f.code, 0) + 1
        if seen[f.code] <= most:
            out.append(f)
        else:
            rest.setdefault(f.code, []).append(f)
    for code, more in rest.items():
        wheres = ", ".join(f.where or "?" for f in more[:5]) + (", ..." if len(more) > 5 else "")
        first = more[0]
        message = (
            f"{len(more)} more {code} findings like the above, not listed one by one: {wheres}."
        )
        out.append(Finding(code, first.severity, message, first.url, first.where))
    return out


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
        path = at("temporalCoverage", i, len(items))
        read = coverage(text)
        if not read.valid:
            yield codes.TEMPORAL_INVALID.at(
                url,
                f"{path} is {show(text)}, not an ISO 8601 date or interval; publish e.g. "
                '"2018-01-22/2018-12-31", or "2018/.." for an open end.',
                f"$.{path}",
            )
        elif not read.in_order:
            start, _, end = text.strip().partition("/")
            yield codes.TEMPORAL_ORDER.at(
                url,
                f"{path} is {show(text)}: it ends before it starts; did you mean "
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
        path = at("variableMeasured", i, len(items))
        if not isinstance(item, Mapping) or literal(item) is not None:
            text = literal(item) or node_id(item) or ""
            yield codes.VARIABLE_NOT_PROPERTYVALUE.at(
                url,
                f"{path} is the text {show(text)}; publish a PropertyValue, e.g. "
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
        path = at("datePublished", i, len(items))
        yield codes.DATE_PUBLISHED_INVALID.at(
            url,
            f"{path} is {show(text or node_id(item))}, not an ISO 8601 date; publish e.g. "
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
        shown = ", ".join(show(literal(v)) for v in items)
        message = f"isAccessibleForFree has {len(items)} values ({shown}); publish one."
    else:
        text = literal(raw)
        said = text.strip().lower() if text else ""
        want = said if said in ("true", "false") else "true or false"
        message = (
            f"isAccessibleForFree is the text {show(text)}, not a boolean; publish "
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
        path = at("funding", i, len(items))
        if not isinstance(item, Mapping) or literal(item) is not None:
            yield codes.FUNDING_NO_FUNDER.at(
                url,
                f"{path} is the text {show(literal(item) or node_id(item))}; publish a "
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
        path = at("distribution", i, len(items))
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
            f"is the text {show(literal(node))}; publish a spdx:Checksum with "
            "spdx:checksumValue and spdx:algorithm"
        )
    value = first_text(node, "spdx:checksumValue") or first_text(node, "checksumValue")
    algorithm = next(
        (
            first_text(node, p)
            for p in ("spdx:algorithm", "spdx:checksumAlgorithm", "algorithm")
            if first_text(node, p)
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
            f"gives the {known[0].upper()} value {show(shown)}, which is not {known[1]} "
            "hexadecimal digits"
        )
    return None
