"""Microdata and RDFa, read by extruct, turned into JSON-LD documents.

Only used when a page has no JSON-LD Dataset: extruct's microdata and RDFa
readers cost about 13 ms a page against 0.17 ms for JSON-LD alone. Microdata
items become JSON-LD nodes under `{"@vocab": "http://schema.org/"}` (the
itemtype's https spelling mapped to http, as schema.org itself treats them as
one); RDFa already comes out as expanded JSON-LD.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from lxml import etree

log = logging.getLogger(__name__)

_SCHEMA_HTTPS = "https://schema.org/"
_SCHEMA_HTTP = "http://schema.org/"
_RDFA_NOISE = "http://www.w3.org/ns/rdfa#usesVocabulary"
# what RDFa 1.1 (HTML+RDFa) and microdata read; ids for itemref
_MARKUP_ATTRIBUTES = frozenset(
    {
        *("about", "content", "datatype", "href", "inlist", "prefix", "property", "rel"),
        *("resource", "rev", "src", "typeof", "vocab", "lang", "xml:lang", "datetime"),
        *("value", "data", "version", "profile", "id"),
        *("itemscope", "itemtype", "itemprop", "itemid", "itemref"),
    }
)
# a schema.org node needs a type or a property: itemscope/itemprop, typeof/property/vocab
_USES = (
    ("microdata", etree.XPath("boolean(//*[@itemscope or @itemtype or @itemprop])")),
    ("rdfa", etree.XPath("boolean(//*[@typeof or @property or @vocab])")),
)


def _type_iri(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_SCHEMA_HTTPS):
        return _SCHEMA_HTTP + value[len(_SCHEMA_HTTPS) :]
    return value


def _microdata_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_microdata_value(v) for v in value]
    if isinstance(value, dict) and ("properties" in value or "type" in value):
        return _microdata_node(value)
    return value


def _microdata_node(item: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = {}
    kind = item.get("type")
    if isinstance(kind, list):
        node["@type"] = [_type_iri(k) for k in kind]
    elif kind:
        node["@type"] = _type_iri(kind)
    if isinstance(item.get("id"), str):
        node["@id"] = item["id"]
    for name, value in (item.get("properties") or {}).items():
        node[name] = _microdata_value(value)
    return node


def microdata_documents(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One JSON-LD document per top-level microdata item."""
    return [
        {"@context": {"@vocab": _SCHEMA_HTTP}, **_microdata_node(item)}
        for item in items
        if isinstance(item, dict)
    ]


def rdfa_document(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The RDFa nodes that say something (not just which vocabulary the page uses)."""
    return [
        n for n in nodes if isinstance(n, dict) and any(k not in ("@id", _RDFA_NOISE) for k in n)
    ]


def markup_syntaxes(tree: Any) -> list[str]:
    """The markup syntaxes a parsed page uses at all: extruct reads only those.

    pyRdfa (under extruct) is quadratic in an element's attributes: one <div>
    with 1,000 data-* attributes takes 18 s. A page without any RDFa or
    microdata attribute is never handed to it (and saves its ~13 ms)."""
    return [name for name, find in _USES if find(tree)]


def _only_markup_attributes(tree: Any) -> Any:
    """The tree without attributes neither RDFa nor microdata read (class, style, data-*).

    pyRdfa's DOM rebuilds an element's attribute map on every access, so one
    element with thousands of junk attributes takes minutes; linear here."""
    for element in tree.iter():
        attributes = element.attrib
        for name in [n for n in attributes if n not in _MARKUP_ATTRIBUTES]:
            if not (isinstance(name, str) and name.startswith("xmlns")):
                del attributes[name]
    return tree


def read_markup(
    html: bytes, base_url: str, syntaxes: Sequence[str] = ("microdata", "rdfa")
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(microdata documents, RDFa nodes) of a page; empty on any extruct failure."""
    if not syntaxes:
        return [], []
    # extruct (with rdflib, bs4 and requests under it) is imported here, on the first page
    # without JSON-LD: at module level it was a third of every process's start-up
    import extruct
    from extruct.utils import parse_xmldom_html

    try:
        tree = _only_markup_attributes(parse_xmldom_html(html, encoding="utf-8"))
        found = extruct.extract(tree, base_url=base_url, syntaxes=list(syntaxes), errors="log")
    except Exception as exc:  # extruct raises what lxml/rdflib raise on odd pages
        log.debug("microdata/RDFa extraction failed for %s: %s", base_url, exc)
        return [], []
    return (
        microdata_documents(found.get("microdata") or []),
        rdfa_document(found.get("rdfa") or []),
    )
