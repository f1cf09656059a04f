"""Requirement profiles: what a node asks of a Dataset before it syncs it, as a checklist.

The checks (`adapter.dataone.requirements`, `mediaobjects`, signposting's
cross-checks, the soso/ checks) say what a Dataset has and lacks; a profile
says which of that blocks. Each requirement is met or not, judged from the
finding codes that speak about it (a listed code at any severity) and, where no
finding does, from the Dataset itself; an unmet blocking requirement adds a
`dataone/profile-unmet` error, so `harvestable` (no error) follows the profile.

- ``dataone`` (the default): DataONE's slender-node notes: a DOI `identifier`, an
  ISO TC 211 metadata copy in `encoding`, `distribution` DataDownloads with
  `contentUrl` and `encodingFormat`; and the `name` and `description` DataONE's
  onboarding grades essential (specs.md 2.4).
- ``soso``: science-on-schema.org's required and recommended Dataset properties.
- ``mnlite``: what DataONE's current slender-node software (mnlite) accepts: any
  identifier that is not a placeholder, and a `name`.
- ``custom``: an identifier in the node's `identifier_schemes` (DOI unless set),
  `name`, `description`, and the node's `required:` list.

A node's `required:` list adds to any profile; its items are enforced by
`requirements.enforce_required` (`dataone/required-check-failed`) and shown here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from adapter.dataone import mediaobjects as media
from adapter.dataone import requirements as req
from adapter.dataone.soso import codes as soso_codes
from adapter.findings import Finding, FindingType, Severity
from adapter.identifiers import SCHEME_NAMES, SCHEMES
from adapter.jsonld.framed import first_literal, values
from adapter.models import ChecklistItem, DatasetResult

PROFILE_UNMET = FindingType(
    "dataone/profile-unmet",
    Severity.ERROR,
    "The Dataset does not meet a requirement of this node's requirement profile (the "
    "checklist names it, with the findings that explain it), so it is not harvested under "
    "that profile.",
)

PROFILES = ("dataone", "soso", "mnlite", "custom")
DEFAULT_PROFILE = "dataone"

# ISO TC 211 XML: the metadata copy DataONE's slender-node notes ask for
ISO_FORMATS = frozenset(
    {
        "http://www.isotc211.org/2005/gmd",
        "http://www.isotc211.org/2005/gmd-noaa",
        "http://www.isotc211.org/2005/gmd-pangaea",
        "INCITS-453-2009",
    }
)
DESCRIPTION_LENGTH = (50, 5000)  # Google's Dataset guidance, as science-on-schema.org cites it

Judge = Callable[[DatasetResult], bool]


@dataclass(frozen=True, slots=True)
class Requirement:
    """One thing a profile asks of a Dataset."""

    name: str
    label: str
    codes: tuple[str, ...] = ()  # findings (any severity) that say it is not met
    prefixes: tuple[str, ...] = ()  # code prefixes whose warnings or errors say so
    advisory: tuple[str, ...] = ()  # findings shown beside it that do not make it unmet
    judge: Judge | None = None  # where no finding speaks: the Dataset itself, True = met
    blocking: bool = True
    by_node: bool = False  # a `required:` entry: enforce_required raises its error


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    summary: str
    requirements: tuple[Requirement, ...]
    schemes: tuple[str, ...]  # identifier schemes whose values may become series ids


def _codes(*types: FindingType) -> tuple[str, ...]:
    return tuple(t.code for t in types)


def _has(*props: str) -> Judge:
    def judge(d: DatasetResult) -> bool:
        return any(values(d.framed, p) for p in props)

    return judge


def _has_doi(d: DatasetResult) -> bool:
    return d.doi is not None


def _any_identifier(d: DatasetResult) -> bool:
    return d.first_identifier is not None


def _pid_in(schemes: Iterable[str]) -> Judge:
    accepted = frozenset(schemes)

    def judge(d: DatasetResult) -> bool:
        return (d.doi is not None and "doi" in accepted) or any(
            p.scheme in accepted for p in d.pids
        )

    return judge


def _iso_copy(d: DatasetResult) -> bool:
    return any(r.content_url and ISO_FORMATS & set(r.encoding_format) for r in d.encoding)


def _data_download(d: DatasetResult) -> bool:
    return any(
        r.content_url
        and r.encoding_format
        and r.link_property in ("contentUrl", "contentURL")
        and r.format_property == "encodingFormat"
        and r.reference is None
        for r in d.distributions
    )


def _description_length(d: DatasetResult) -> bool:
    text = first_literal(d.framed, "description") or ""
    return DESCRIPTION_LENGTH[0] <= len(text.strip()) <= DESCRIPTION_LENGTH[1]


NAME = Requirement("name", "a `name` (the title)", _codes(req.NAME_MISSING))
DESCRIPTION = Requirement(
    "description", "a `description` (the abstract)", _codes(req.DESCRIPTION_MISSING)
)
URL = Requirement(
    "url", "a `url` back to the landing page", _codes(req.URL_MISSING), blocking=False
)
ID = Requirement("id", "an `@id` IRI", _codes(req.ID_MISSING), blocking=False)
EMPTY = _codes(req.IDENTIFIER_EMPTY)


def _identifier(schemes: Sequence[str]) -> Requirement:
    """A persistent identifier in one of `schemes`."""
    if tuple(schemes) == ("doi",):
        return Requirement(
            "doi-identifier",
            "a DOI in `identifier`",
            _codes(req.IDENTIFIER_MISSING, req.IDENTIFIER_NOT_DOI) + EMPTY,
            advisory=_codes(req.DOI_NOT_IN_IDENTIFIER, req.SEVERAL_DOIS),
            judge=_has_doi,
        )
    names = ", ".join(SCHEME_NAMES[s] for s in schemes)
    return Requirement(
        "persistent-identifier",
        f"a persistent identifier in `identifier` ({names})",
        _codes(req.IDENTIFIER_MISSING, req.IDENTIFIER_UNRECOGNISED) + EMPTY,
        advisory=_codes(req.IDENTIFIER_NOT_DOI, req.DOI_NOT_IN_IDENTIFIER),
        judge=_pid_in(schemes),
    )


def _recommended(name: str) -> Requirement:
    """A recommended check a node may make blocking, shown as not blocking."""
    label = {
        "date-modified": "a `dateModified`",
        "signposting/cite-as": "a Signposting `cite-as` link that agrees with the DOI",
    }[name]
    return Requirement(name, label, req.REQUIREMENTS[name], blocking=False)


DATAONE = Profile(
    "dataone",
    "DataONE's slender-node requirements: a DOI, an ISO TC 211 metadata copy, data downloads",
    (
        _identifier(("doi",)),
        NAME,
        DESCRIPTION,
        Requirement(
            "encoding",
            "an ISO TC 211 XML metadata copy in `encoding` (or `subjectOf`)",
            _codes(media.ENCODING_MISSING),
            advisory=_codes(media.ENCODING_INCOMPLETE, media.ENCODING_FORMAT_UNKNOWN),
            judge=_iso_copy,
        ),
        Requirement(
            "distribution",
            "a `distribution` DataDownload with `contentUrl` and `encodingFormat`",
            _codes(media.DISTRIBUTION_MISSING),
            advisory=_codes(media.DISTRIBUTION_INCOMPLETE, media.WRONG_PROPERTY),
            judge=_data_download,
        ),
        URL,
        ID,
        _recommended("date-modified"),
        _recommended("signposting/cite-as"),
    ),
    ("doi",),
)

MNLITE = Profile(
    "mnlite",
    "what DataONE's current slender-node software (mnlite) accepts: an identifier, a name",
    (
        Requirement(
            "identifier",
            "an `identifier` that is not a placeholder",
            _codes(req.IDENTIFIER_MISSING) + EMPTY,
            advisory=_codes(req.IDENTIFIER_NOT_DOI, req.IDENTIFIER_UNRECOGNISED),
            judge=_any_identifier,
        ),
        NAME,
        Requirement(
            "description",
            "a `description` (the abstract)",
            _codes(req.DESCRIPTION_MISSING),
            blocking=False,
        ),
        URL,
    ),
    SCHEMES,
)


# the dataone/index- warnings: what DataONE search would miss or garble (adapter.dataone.index);
# recommended under soso (SOSO itself recommends shapes the index garbles, e.g. DefinedTerm
# keywords); a node makes them blocking with `required: ["dataone/index-"]`
DATAONE_SEARCH = Requirement(
    "dataone-search",
    "DataONE search reads the Dataset as published: named creators, a box, dates, licence",
    prefixes=("dataone/index-",),
    blocking=False,
)


def _soso(name: str, label: str, judge: Judge, *properties: str) -> Requirement:
    """A soso requirement: its judge, and the soso/ findings about its properties."""
    codes = tuple(code for prop in properties for code in soso_codes.BY_PROPERTY.get(prop, ()))
    return Requirement(name, label, prefixes=codes, judge=judge)


# science-on-schema.org 1.3 (guides/Dataset.md; soso_common shapes, specs.md 2.4): what it
# requires, then what it recommends; soso/ findings (their own checks) say more where present
SOSO = Profile(
    "soso",
    "science-on-schema.org's required and recommended Dataset properties",
    (
        _identifier(SCHEMES),
        NAME,
        DESCRIPTION,
        Requirement("id", "an `@id` IRI", _codes(req.ID_MISSING)),
        Requirement("url", "a `url` back to the landing page", _codes(req.URL_MISSING)),
        _soso("keywords", "`keywords`", _has("keywords"), "keywords"),
        _soso("version", "a `version`", _has("version"), "version"),
        _soso(
            "license", "a `license` (an SPDX or Creative Commons URI)", _has("license"), "license"
        ),
        _soso(
            "creator",
            "a `creator` (each with an ORCID where they have one: see the soso findings)",
            _has("creator"),
            "creator",
        ),
        _soso(
            "publisher", "a `publisher` or `provider`", _has("publisher", "provider"), "publisher"
        ),
        _soso(
            "spatial-coverage",
            "a `spatialCoverage`",
            _has("spatialCoverage"),
            "spatialCoverage",
        ),
        _soso(
            "temporal-coverage",
            "a `temporalCoverage` (an ISO 8601 interval)",
            _has("temporalCoverage"),
            "temporalCoverage",
        ),
        _soso(
            "variable-measured",
            "`variableMeasured` (PropertyValue)",
            _has("variableMeasured"),
            "variableMeasured",
        ),
        _soso("date-published", "a `datePublished`", _has("datePublished"), "datePublished"),
        _soso(
            "accessible-for-free",
            "`isAccessibleForFree`",
            _has("isAccessibleForFree"),
            "isAccessibleForFree",
        ),
        _soso("funding", "`funding`", _has("funding"), "funding"),
        _soso(
            "description-length",
            "a `description` of 50 to 5000 characters",
            _description_length,
            "description",
        ),
        Requirement(
            "distribution",
            "a `distribution` DataDownload with `contentUrl` and `encodingFormat`",
            _codes(media.DISTRIBUTION_MISSING),
            prefixes=soso_codes.BY_PROPERTY["distribution"],
            advisory=_codes(media.DISTRIBUTION_INCOMPLETE, media.WRONG_PROPERTY),
            judge=_data_download,
        ),
        DATAONE_SEARCH,
    ),
    SCHEMES,
)


def profile_for(name: str = DEFAULT_PROFILE, schemes: Sequence[str] = ("doi",)) -> Profile:
    """The named profile; `schemes` is the custom profile's identifier setting."""
    if name == "custom":
        return Profile(
            "custom",
            "this node's own list: an identifier, a name, a description, its `required:` checks",
            (_identifier(tuple(schemes)), NAME, DESCRIPTION, URL),
            tuple(schemes),
        )
    found = {p.name: p for p in (DATAONE, SOSO, MNLITE)}.get(name)
    if found is None:
        raise ValueError(f"unknown requirement profile {name!r} (known: {', '.join(PROFILES)})")
    return found


def with_required(profile: Profile, required: Iterable[str]) -> tuple[Requirement, ...]:
    """The profile's requirements plus the node's `required:` entries."""
    have = {r.name for r in profile.requirements if r.blocking}
    extra = []
    for name in sorted(set(required) - have):
        listed = req.REQUIREMENTS.get(name)
        extra.append(
            Requirement(
                name,
                f"`{name}`, required by this node",
                codes=listed or (),
                prefixes=() if listed else (name,),
                by_node=True,
            )
        )
    kept = [r for r in profile.requirements if r.name not in {e.name for e in extra}]
    return (*kept, *extra)


def judge(
    profile: Profile,
    dataset: DatasetResult,
    page_findings: Sequence[Finding],
    page: str,
    required: Iterable[str] = (),
) -> tuple[list[ChecklistItem], list[Finding]]:
    """The Dataset's checklist under `profile`, and the errors its unmet requirements add."""
    seen = [*page_findings, *dataset.findings]
    items: list[ChecklistItem] = []
    errors: list[Finding] = []
    for requirement in with_required(profile, required):
        item, error = _item(requirement, dataset, seen, page, profile.name)
        items.append(item)
        if error is not None:
            errors.append(error)
    return items, errors


def _item(
    r: Requirement, dataset: DatasetResult, seen: Sequence[Finding], page: str, profile: str
) -> tuple[ChecklistItem, Finding | None]:
    hits = [f for f in seen if _speaks(r, f)]
    advice = [f for f in seen if f.code in r.advisory]
    met = not hits and (r.judge is None or r.judge(dataset))
    codes = [f.code for f in hits]
    error = None
    if (
        not met
        and r.blocking
        and not r.by_node
        and not any(f.severity is Severity.ERROR for f in hits)
    ):
        because = ", ".join(dict.fromkeys(codes)) or "the Dataset lacks it"
        error = PROFILE_UNMET.at(
            page,
            f"The '{profile}' profile requires {_plain(r.label)} ({because}), so this Dataset "
            "is not harvested under it.",
            _where(hits),
        )
        if not codes:
            codes.append(PROFILE_UNMET.code)
    codes += [f.code for f in advice]
    item = ChecklistItem(r.name, r.label, r.blocking, met, tuple(dict.fromkeys(codes)))
    return item, error


def _speaks(r: Requirement, f: Finding) -> bool:
    if f.code in r.codes:
        return True
    return f.severity is not Severity.INFO and any(f.code.startswith(p) for p in r.prefixes)


def _where(hits: Sequence[Finding]) -> str | None:
    return hits[0].where if hits else None


def _plain(label: str) -> str:
    return label.replace("`", "")


def as_json(items: Sequence[ChecklistItem]) -> list[dict[str, Any]]:
    """The checklist in the JSON report's shape."""
    return [
        {
            "requirement": i.name,
            "label": i.label,
            "blocking": i.blocking,
            "met": i.met,
            "codes": list(i.codes),
        }
        for i in items
    ]
