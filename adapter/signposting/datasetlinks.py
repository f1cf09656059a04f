"""What a framed schema.org Dataset says that signposting links also say.

science-on-schema.org and CDIF spell the same facts several ways: a creator's
ORCID as `@id`, as a string `identifier`, as a PropertyValue `value`/`url`, or
in `sameAs`; a part as a `distribution` DataDownload or as a CDIF
`relatedLink` LinkRole with `linkRelationship` hasPart and a `target`; a
metadata record as `encoding`, `subjectOf` MediaObject or a CDIF catalog
record (`subjectOf` with `about` back to the Dataset). `dataset_links` reads
them all into one `DatasetLinks`, so the cross-checks compare values, not
shapes. Pure; never raises on odd shapes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from adapter.jsonld.framed import literal, node_id, types, values
from adapter.jsonld.normalforms import resolve_iri
from adapter.models import DatasetResult
from adapter.signposting.identities import iri_key, orcid

SCHEMA_HTTP = "http://schema.org/"


@dataclass(frozen=True, slots=True)
class Resource:
    """Something the Dataset points to: a URL, its encodingFormat values, where it was said."""

    url: str
    formats: tuple[str, ...] = ()
    where: str = ""


@dataclass(frozen=True, slots=True)
class Person:
    ids: tuple[str, ...]  # every IRI that names the person
    name: str | None
    where: str


@dataclass(slots=True)
class DatasetLinks:
    id: str | None = None
    doi: str | None = None
    urls: list[str] = field(default_factory=list)  # `url` values
    same_as: list[str] = field(default_factory=list)
    identifier_urls: list[str] = field(default_factory=list)  # identifier IRIs / PropertyValue url
    types: list[str] = field(default_factory=list)  # full IRIs, https://schema.org/ form
    additional_types: list[str] = field(default_factory=list)
    people: list[Person] = field(default_factory=list)
    licenses: list[Resource] = field(default_factory=list)
    metadata: list[Resource] = field(default_factory=list)  # encoding, subjectOf
    metadata_ids: list[str] = field(default_factory=list)  # subjectOf @id (CDIF catalog records)
    parts: list[Resource] = field(default_factory=list)  # distribution, relatedLink hasPart
    collections: list[Resource] = field(default_factory=list)  # catalog, isPartOf, IsPartOf
    about: list[str] = field(default_factory=list)  # what a metadata record is about


def schema_iri(name: str) -> str:
    """Compact type names from the framed document as https://schema.org/ IRIs."""
    if name.startswith(SCHEMA_HTTP):
        name = name[len(SCHEMA_HTTP) :]
    if "://" in name or ":" in name:
        return name
    return f"https://schema.org/{name}"


_LAST = threading.local()  # per thread: (dataset, base, its DatasetLinks), the last read


def dataset_links(dataset: DatasetResult, base: str) -> DatasetLinks:
    """What the Dataset says, read once per (Dataset, base) in a row: the cross-check and
    then the text report read the same one (a sixth of the report's CPU). Nobody changes
    a DatasetLinks once read."""
    last = getattr(_LAST, "entry", None)
    if last is not None and last[0] is dataset and last[1] == base:
        found: DatasetLinks = last[2]
        return found
    out = _read(dataset, base)
    _LAST.entry = (dataset, base, out)
    return out


def _read(dataset: DatasetResult, base: str) -> DatasetLinks:
    node: Mapping[str, Any] = dataset.framed
    out = DatasetLinks(id=dataset.id or node_id(node.get("@id")), doi=dataset.doi)
    out.urls = _iris(node, "url", base)
    out.same_as = _iris(node, "sameAs", base)
    for value in values(node, "identifier"):
        out.identifier_urls.extend(_identifier_iris(value, base))
    out.types = [schema_iri(t) for t in types(node)]
    out.additional_types = _class_iris(node, out.types)
    for prop in ("creator", "author"):
        items = values(node, prop)
        for i, item in enumerate(items):
            person = _person(item, f"$.{prop}[{i}]" if len(items) > 1 else f"$.{prop}", base)
            if person is not None:
                out.people.append(person)
    out.licenses = [
        Resource(url, (), f"$.license[{i}]") for i, url in enumerate(_iris(node, "license", None))
    ]
    out.metadata = [
        Resource(_abs(ref.content_url, base), ref.encoding_format, ref.where)
        for ref in dataset.encoding
        if ref.content_url
    ]
    out.parts = [
        Resource(_abs(ref.content_url, base), ref.encoding_format, ref.where)
        for ref in dataset.distributions
        if ref.content_url
    ]
    _read_subject_of(node, base, out)
    _read_related_links(node, base, out)
    _read_collections(node, base, out)
    return out


def _class_iris(node: Mapping[str, Any], known: list[str]) -> list[str]:
    """`additionalType` values that name a class a `type` link could name: an http(s) IRI
    or a `schema:` CURIE, each once and not again when @type says it. A bare word
    ("dataset", "Data set") is free text, not https://schema.org/dataset."""
    seen = {iri_key(t) for t in known}
    out = []
    for text in _iris(node, "additionalType", None):
        if text.startswith("schema:"):
            text = "https://schema.org/" + text.removeprefix("schema:")
        if not text.lower().startswith(("http://", "https://")) or any(c.isspace() for c in text):
            continue
        iri = schema_iri(text)
        if iri_key(iri) not in seen:
            seen.add(iri_key(iri))
            out.append(iri)
    return out


def _abs(url: str, base: str | None) -> str:
    if base is None:
        return url.strip()
    url = url.strip()
    try:
        return resolve_iri(base, url)
    except ValueError:
        return url


def _iris(node: Mapping[str, Any], prop: str, base: str | None) -> list[str]:
    out = []
    for value in values(node, prop):
        text = literal(value) or node_id(value)
        if not text and isinstance(value, Mapping):
            text = _first_iri(value, ("url", "contentUrl"), base)
        if text and text.strip():
            out.append(_abs(text, base) if base and "://" not in text else text.strip())
    return out


def _first_iri(node: Mapping[str, Any], props: tuple[str, ...], base: str | None) -> str | None:
    for prop in props:
        found = _iris(node, prop, base)
        if found:
            return found[0]
    return None


def _identifier_iris(value: Any, base: str) -> list[str]:
    """IRIs of an identifier: `@id`, PropertyValue `url`/`value`, a bare ORCID iD made a URL."""
    if isinstance(value, Mapping):
        found = [node_id(value)] if "@id" in value else []
        for prop in ("url", "value"):
            found.extend(_iris(value, prop, None))
    else:
        found = [literal(value)]
    out = []
    for text in found:
        if not text or not text.strip():
            continue
        bare = orcid(text)
        if bare and ":" not in text:
            out.append(f"https://orcid.org/{bare}")
        elif ":" in text:
            out.append(text.strip())
    return out


def _person(item: Any, where: str, base: str) -> Person | None:
    if not isinstance(item, Mapping):
        text = literal(item) or node_id(item)
        return Person((text,), None, where) if text and "://" in text else None
    ids: list[str] = []
    own = node_id(item)
    if own and not own.startswith("_:"):
        ids.append(own)
    for value in values(item, "identifier"):
        ids.extend(_identifier_iris(value, base))
    ids.extend(_iris(item, "sameAs", None))
    name = next((literal(v) for v in values(item, "name") if literal(v)), None)
    return Person(tuple(dict.fromkeys(ids)), name, where)


def _read_subject_of(node: Mapping[str, Any], base: str, out: DatasetLinks) -> None:
    known = {r.url for r in out.metadata}
    items = values(node, "subjectOf")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        where = f"$.subjectOf[{i}]" if len(items) > 1 else "$.subjectOf"
        own = node_id(item)
        if own and not own.startswith("_:"):
            out.metadata_ids.append(_abs(own, base))
        url = _first_iri(item, ("contentUrl", "url"), base)
        if url and url not in known:
            formats = tuple(f for f in (literal(v) for v in values(item, "encodingFormat")) if f)
            out.metadata.append(Resource(url, formats, where))
            known.add(url)
        out.about.extend(_iris(item, "about", base))


def _read_related_links(node: Mapping[str, Any], base: str, out: DatasetLinks) -> None:
    """CDIF `relatedLink` LinkRoles: hasPart -> parts, IsPartOf -> collections."""
    items = values(node, "relatedLink")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        relation = " ".join(
            literal(v) or node_id(v) or "" for v in values(item, "linkRelationship")
        )
        kind = relation.replace(" ", "").lower()
        where = f"$.relatedLink[{i}]" if len(items) > 1 else "$.relatedLink"
        for target in values(item, "target") or [item]:
            if isinstance(target, Mapping):
                url = _first_iri(target, ("url", "contentUrl", "urlTemplate"), base)
            else:
                url = literal(target) or node_id(target)
            if not url:
                continue
            formats: tuple[str, ...] = ()
            if isinstance(target, Mapping):
                formats = tuple(
                    f for f in (literal(v) for v in values(target, "encodingFormat")) if f
                )
            resource = Resource(_abs(url, base), formats, where)
            if kind.endswith("haspart"):
                out.parts.append(resource)
            elif kind.endswith("ispartof"):
                out.collections.append(resource)


def _read_collections(node: Mapping[str, Any], base: str, out: DatasetLinks) -> None:
    for prop in ("includedInDataCatalog", "isPartOf"):
        items = values(node, prop)
        for i, item in enumerate(items):
            where = f"$.{prop}[{i}]" if len(items) > 1 else f"$.{prop}"
            urls = []
            if isinstance(item, Mapping):
                own = node_id(item)
                if own and not own.startswith("_:"):
                    urls.append(_abs(own, base))
                urls.extend(_iris(item, "url", base))
            else:
                text = literal(item) or node_id(item)
                if text:
                    urls.append(_abs(text, base))
            out.collections.extend(Resource(u, (), where) for u in dict.fromkeys(urls))
