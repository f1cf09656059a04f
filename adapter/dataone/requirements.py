"""What one framed schema.org Dataset offers DataONE, as findings.

Pure: a framed Dataset (compact keys under `{"@vocab": "http://schema.org/"}`,
see `adapter.jsonld.framed`) in, a `DataoneCheck` out. The findings say what
is there and what is not; whether that blocks the Dataset is the node's
requirement profile's decision (`adapter.dataone.profiles`: under the default
`dataone` profile a DOI `identifier`, `name`, `description`, an `encoding`
metadata copy and a `distribution` are required). Only what is wrong under
every profile is an error here: a placeholder identifier. A missing `url` is a
warning: the landing page the Dataset was read from is always known.

A node configuration can make further checks blocking with
`CheckOptions.required`; the names it may use are `REQUIREMENTS`:

- ``encoding``: a complete metadata link with a DataONE metadata format id;
- ``distribution``: at least one complete DataDownload;
- ``date-modified``: a `dateModified` on the Dataset;
- ``id``: an `@id` IRI on the Dataset;
- ``signposting/cite-as``: one `cite-as` link that agrees with the Dataset;
- any other finding code or code prefix containing a slash
  (``signposting/describedby``): every warning whose code starts with it
  becomes blocking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from adapter.dataone.mediaobjects import (
    DISTRIBUTION_INCOMPLETE,
    DISTRIBUTION_MISSING,
    ENCODING_FORMAT_UNKNOWN,
    ENCODING_INCOMPLETE,
    ENCODING_MISSING,
    distribution_refs,
    encoding_refs,
    not_a_url_finding,
)
from adapter.doi import is_placeholder, normalize_doi
from adapter.findings import Finding, FindingType, Severity
from adapter.identifiers import SCHEME_NAMES, recognise
from adapter.jsonld.framed import first_literal, literal, node_id, values
from adapter.jsonld.placeholders import not_a_url
from adapter.models import Identifier, MediaObjectRef
from adapter.signposting.crosscheck import ABSENT, CITE_AS_MISSING, CITE_AS_SEVERAL
from adapter.signposting.relations import CITE_AS_DOI_ONLY, CITE_AS_MISMATCH

IDENTIFIER_MISSING = FindingType(
    "dataone/identifier-missing",
    Severity.WARNING,
    "The Dataset has no `identifier`; DataONE needs the dataset's DOI (or, under a profile "
    "that allows it, another persistent identifier) there to track it.",
)
IDENTIFIER_EMPTY = FindingType(
    "dataone/identifier-empty",
    Severity.ERROR,
    "An `identifier` is empty or a stand-in such as doi:null; publish the real DOI or leave "
    "the value out.",
)
IDENTIFIER_NOT_DOI = FindingType(
    "dataone/identifier-not-doi",
    Severity.WARNING,
    "No `identifier` of the Dataset is a DOI (10.prefix/suffix in any usual spelling). The "
    "dataone profile needs one; the mnlite and soso profiles accept other identifiers.",
)
IDENTIFIER_UNRECOGNISED = FindingType(
    "dataone/identifier-not-persistent",
    Severity.WARNING,
    "No `identifier` of the Dataset is a persistent identifier the adapter recognises (a DOI, "
    "an ARK, a Handle, a URN, or an http(s) IRI on the landing page's own host): it looks like "
    "a local id, which only the mnlite profile accepts.",
)
DOI_NOT_IN_IDENTIFIER = FindingType(
    "dataone/doi-not-in-identifier",
    Severity.WARNING,
    "The DOI appears only in @id, url or sameAs (wherever it sits, and whether `identifier` "
    "is missing or holds a local id); it belongs in `identifier` (science-on-schema.org "
    "recommends a PropertyValue). The adapter uses it anyway.",
)
SEVERAL_DOIS = FindingType(
    "dataone/several-dois",
    Severity.WARNING,
    "The Dataset carries several different DOIs; the adapter uses the first one in "
    "`identifier`, which may not be the one you mean.",
)
ID_MISSING = FindingType(
    "dataone/id-missing",
    Severity.WARNING,
    "The Dataset has no @id IRI (it is a blank node), so other records cannot refer to it.",
)
NAME_MISSING = FindingType(
    "dataone/name-missing",
    Severity.WARNING,
    "The Dataset has no `name` (its title); every profile requires one.",
)
DESCRIPTION_MISSING = FindingType(
    "dataone/description-missing",
    Severity.WARNING,
    "The Dataset has no `description` (abstract); the dataone and soso profiles require one.",
)
URL_MISSING = FindingType(
    "dataone/url-missing",
    Severity.WARNING,
    "The Dataset has no `url` (its landing page). The adapter knows the landing page it read "
    "the Dataset from and links back to that, but other harvesters need `url`.",
)
DATE_MODIFIED_MISSING = FindingType(
    "dataone/date-modified-missing",
    Severity.WARNING,
    "The Dataset has no `dateModified`, so harvesters cannot tell when it changed.",
)
REQUIRED_FAILED = FindingType(
    "dataone/required-check-failed",
    Severity.ERROR,
    "A check that this node's configuration requires did not pass, so the Dataset is not "
    "harvested until it does.",
)

# requirement name -> finding codes (or code prefixes) it makes blocking
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    name: tuple(t.code for t in types)
    for name, types in {
        "encoding": (ENCODING_MISSING, ENCODING_INCOMPLETE, ENCODING_FORMAT_UNKNOWN),
        "distribution": (DISTRIBUTION_MISSING, DISTRIBUTION_INCOMPLETE),
        "date-modified": (DATE_MODIFIED_MISSING,),
        "id": (ID_MISSING,),
        "signposting/cite-as": (
            ABSENT,
            CITE_AS_MISSING,
            CITE_AS_MISMATCH,
            CITE_AS_SEVERAL,
            CITE_AS_DOI_ONLY,
        ),
    }.items()
}


@dataclass(slots=True)
class DataoneCheck:
    """What the DataONE rules learned about one Dataset."""

    doi: str | None  # canonical lowercase 10.x/y
    identifiers: list[str] = field(default_factory=list)  # as published
    pids: list[Identifier] = field(default_factory=list)  # recognised, in order
    first_identifier: str | None = None  # mnlite's series id: the first identifier value
    encoding: list[MediaObjectRef] = field(default_factory=list)
    distributions: list[MediaObjectRef] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def check_requirements(dataset: Mapping[str, Any], url: str) -> DataoneCheck:
    """Every DataONE rule on one framed Dataset; `url` is the page the findings are about."""
    result = DataoneCheck(doi=None)
    _check_identifier(dataset, url, result)
    result.findings.extend(_essentials(dataset, url))
    result.encoding, found = encoding_refs(dataset, url)
    result.findings.extend(found)
    result.distributions, found = distribution_refs(dataset, url)
    result.findings.extend(found)
    return result


def enforce_required(
    findings: Iterable[Finding], required: Iterable[str], url: str
) -> list[Finding]:
    """An error for each required check that a finding in `findings` says did not pass."""
    seen = list(findings)
    out: list[Finding] = []
    for name in sorted(required):
        failed = [f for f in seen if _fails(f, name)]
        if failed:
            codes = ", ".join(sorted({f.code for f in failed}))
            out.append(
                REQUIRED_FAILED.at(
                    url,
                    f"This node requires '{name}', and it did not pass ({codes}).",
                    failed[0].where,
                )
            )
    return out


def _fails(finding: Finding, requirement: str) -> bool:
    """Listed codes count at any severity short of error; a bare prefix counts warnings."""
    if finding.severity is Severity.ERROR:
        return False  # already blocking
    listed = REQUIREMENTS.get(requirement)
    if listed is not None:
        return finding.code in listed
    return finding.severity is Severity.WARNING and finding.code.startswith(requirement)


# -- identifier ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Ident:
    text: str | None  # what to show: the value as published
    doi: str | None
    where: str
    pid: Identifier | None = None  # the persistent identifier it is, if any
    mnlite: str | None = None  # what mnlite takes from it: the text, PropertyValue value or @id


def _identifier_values(dataset: Mapping[str, Any], page: str) -> list[_Ident]:
    items = values(dataset, "identifier")
    out: list[_Ident] = []
    for i, item in enumerate(items):
        where = f"$.identifier[{i}]" if len(items) > 1 else "$.identifier"
        if isinstance(item, Mapping) and literal(item) is None:
            # PropertyValue (value / url / @id) or a node reference
            candidates = [
                (first_literal(item, "value"), f"{where}.value"),
                (_first_iri(item, "url"), f"{where}.url"),
                (node_id(item), where),
            ]
            text = next((t for t, _ in candidates if t and t.strip()), None)
            doi = next((d for d in (normalize_doi(t) for t, _ in candidates) if d), None)
            pid = next((p for p in (recognise(t, page) for t, _ in candidates) if p), None)
            mnlite = first_literal(item, "value") or node_id(item)
            out.append(_Ident(text, doi, where, pid, mnlite))
        else:
            text = literal(item) if not isinstance(item, str) else item
            out.append(_Ident(text, normalize_doi(text), where, recognise(text, page), text))
    return out


def _first_iri(node: Mapping[str, Any], prop: str) -> str | None:
    for v in values(node, prop):
        found = literal(v) or node_id(v)
        if found:
            return found
    return None


def _dois_elsewhere(dataset: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(doi, where) found in @id, url and sameAs."""
    found: list[tuple[str, str]] = []
    own = node_id(dataset)
    if own and normalize_doi(own):
        found.append((normalize_doi(own) or "", "$['@id']"))
    for prop in ("url", "sameAs"):
        items = values(dataset, prop)
        for i, v in enumerate(items):
            doi = normalize_doi(literal(v) or node_id(v))
            if doi:
                found.append((doi, f"$.{prop}[{i}]" if len(items) > 1 else f"$.{prop}"))
    return found


def _check_identifier(dataset: Mapping[str, Any], url: str, result: DataoneCheck) -> None:
    idents = _identifier_values(dataset, url)
    result.identifiers = [i.text for i in idents if i.text and i.text.strip()]
    result.pids = [i.pid for i in idents if i.pid is not None]
    result.first_identifier = next(
        (m.strip() for m in (i.mnlite for i in idents) if m and not is_placeholder(m)), None
    )
    f = result.findings
    for ident in idents:
        if ident.text is None or is_placeholder(ident.text):
            shown = repr(ident.text) if ident.text is not None else "a value with no text"
            f.append(
                IDENTIFIER_EMPTY.at(
                    url, f"The identifier at {ident.where} is {shown}.", ident.where
                )
            )
    dois = list(dict.fromkeys(i.doi for i in idents if i.doi))
    elsewhere = _dois_elsewhere(dataset)
    if dois:
        result.doi = dois[0]
    elif elsewhere:
        # one rule wherever the DOI sits (@id, url, sameAs) and whatever `identifier`
        # holds instead (nothing, a local id, a placeholder)
        result.doi, where = elsewhere[0]
        instead = _instead(idents)
        f.append(
            DOI_NOT_IN_IDENTIFIER.at(
                url,
                f"The DOI {result.doi} appears only at {where}, and {instead}; put it in "
                f"`identifier` (e.g. a PropertyValue with value doi:{result.doi}).",
                where,
            )
        )
    if not idents and result.doi is None:
        f.append(IDENTIFIER_MISSING.at(url, "The Dataset has no `identifier`.", "$.identifier"))
    elif idents and result.doi is None:
        shown = ", ".join(repr(i.text) for i in idents if i.text and not is_placeholder(i.text))
        if shown:
            kinds = [f"{p.published!r} is {_a(SCHEME_NAMES[p.scheme])}" for p in result.pids]
            said = f" ({'; '.join(kinds)})" if kinds else ""
            f.append(
                IDENTIFIER_NOT_DOI.at(
                    url,
                    f"No identifier is a DOI: {shown}{said}. The dataone profile needs a DOI, "
                    'e.g. a PropertyValue with "value": "doi:10.xxxx/yyyy" and "url": '
                    '"https://doi.org/10.xxxx/yyyy".',
                    "$.identifier",
                )
            )
            if not result.pids:
                f.append(
                    IDENTIFIER_UNRECOGNISED.at(
                        url,
                        f"No identifier is a DOI, ARK, Handle, URN or an IRI on {url}'s host: "
                        f"{shown}.",
                        "$.identifier",
                    )
                )
    every = list(dict.fromkeys([*dois, *(d for d, _ in elsewhere)]))
    if len(every) > 1:
        f.append(
            SEVERAL_DOIS.at(
                url,
                f"The Dataset carries {len(every)} different DOIs ({', '.join(every)}); "
                f"the adapter uses {result.doi}.",
                "$.identifier",
            )
        )


def _a(word: str) -> str:
    return f"an {word}" if word in ("ARK", "HTTP IRI") else f"a {word}"


def _instead(idents: list[_Ident]) -> str:
    shown = [repr(i.text) for i in idents if i.text and i.text.strip()]
    if not idents:
        return "the Dataset has no `identifier`"
    if not shown:
        return "`identifier` is empty"
    return f"`identifier` holds {', '.join(shown[:3])}"


# -- the other essentials -----------------------------------------------------


def _essentials(dataset: Mapping[str, Any], url: str) -> list[Finding]:
    out: list[Finding] = []
    own = node_id(dataset)
    placeholder = not_a_url(own, url)
    if placeholder is not None:
        out.append(not_a_url_finding(url, "$['@id']", placeholder))
        out.append(
            ID_MISSING.at(url, f"The Dataset's @id is {placeholder!r}, not an IRI.", "$['@id']")
        )
    elif not own or own.startswith("_:"):
        out.append(ID_MISSING.at(url, where="$['@id']"))
    for prop, kind in (
        ("name", NAME_MISSING),
        ("description", DESCRIPTION_MISSING),
        ("dateModified", DATE_MODIFIED_MISSING),
    ):
        if first_literal(dataset, prop) is None:
            out.append(kind.at(url, where=f"$.{prop}"))
    urls = [(literal(v) or node_id(v) or "").strip() for v in values(dataset, "url")]
    fake = [(u, p) for u in urls if (p := not_a_url(u, url)) is not None]
    out += [not_a_url_finding(url, "$.url", p) for _, p in fake]
    if not any(u for u in urls if u not in {f for f, _ in fake}):
        # a warning: the landing page is known (`url`, the page the Dataset was read from)
        message = (
            f"The Dataset has no `url`; the adapter uses the landing page it was read from, "
            f'{url}. Add "url": "{url}" so other harvesters link back to it too.'
        )
        out.append(URL_MISSING.at(url, message, "$.url"))
    return out
