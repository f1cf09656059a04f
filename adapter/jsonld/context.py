"""The contexts `adapter.jsonld.expand` handles: processed once by pyld, checked simple.

A top-level `@context` made of schema.org's URL (any spelling the loader
answers) and/or flat term maps of absolute IRIs cannot depend on the page's
base, so pyld's processed context is memoized by the context's JSON text.
`Context` then memoizes pyld's own `_expand_iri` for keys and types. A
context with anything the fast expander does not reproduce (containers,
scoped contexts, @language, @base, reverse terms, @vocab/@json coercion)
raises `Decline`.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from pyld import jsonld
from pyld.context_resolver import ContextResolver

from adapter.jsonld.loader import SCHEMA_ORG_CONTEXT_URLS, load_document

# pyld keeps its context caches in module-level LRU caches that are not thread-safe.
PYLD_LOCK = threading.Lock()
PROC = jsonld.JsonLdProcessor()
_KEYWORDS = frozenset(jsonld.KEYWORDS)
_MAPPING_KEYS = frozenset({"reverse", "protected", "_prefix", "_term_has_colon", "@id", "@type"})
_CTX_KEYS = frozenset({"@vocab", "processingMode", "_uuid", "mappings"})
_MEMO_LIMIT = 20_000


class Decline(Exception):
    """The document is outside what this module reproduces exactly: use pyld."""


def absolute(iri: Any) -> bool:
    return bool(jsonld._is_absolute_iri(iri))


class Context:
    """A processed context pyld made, with memoized IRI expansion against it."""

    def __init__(self, ctx: dict[str, Any]) -> None:
        self.ctx = ctx
        self.keys: dict[str, tuple[str | None, Any]] = {}
        self.types: dict[str, str] = {}

    def key(self, key: str) -> tuple[str | None, Any]:
        """(expanded key or None when pyld drops it, the term's @type coercion)."""
        found = self.keys.get(key)
        if found is None:
            iri = PROC._expand_iri(self.ctx, key, vocab=True)
            if iri is not None and not (iri in _KEYWORDS or absolute(iri)):
                iri = None
            mapping = self.ctx["mappings"].get(key)
            found = (iri, mapping.get("@type") if mapping else None)
            if len(self.keys) > _MEMO_LIMIT:
                self.keys.clear()
            self.keys[key] = found
        return found

    def type(self, value: Any, base: str) -> str:
        """A type IRI; without @vocab a relative type resolves against the page (not memoized)."""
        if not isinstance(value, str) or value.startswith("@"):
            raise Decline
        found = self.types.get(value)
        if found is None:
            iri = PROC._expand_iri(self.ctx, value, vocab=True, base=base)
            if "@vocab" not in self.ctx:
                if not isinstance(iri, str) or iri.startswith("@"):
                    raise Decline
                return iri
            if not isinstance(iri, str) or iri.startswith("@"):
                raise Decline
            if len(self.types) > _MEMO_LIMIT:
                self.types.clear()
            self.types[value] = found = iri
        return found


_CONTEXTS: dict[str, Context | None] = {}


def _plain_term(value: Any) -> bool:
    """A term definition whose processing cannot depend on the document's base."""
    if isinstance(value, str):
        return absolute(value)
    if not isinstance(value, dict) or not set(value) <= {"@id", "@type"}:
        return False
    kind = value.get("@type", "@id")
    return absolute(value.get("@id")) and (kind == "@id" or absolute(kind))


def _plain_name(term: str) -> bool:
    return bool(term) and not term.startswith("@") and ":" not in term and "/" not in term


def _plain_spec(spec: Any) -> bool:
    """schema.org by URL and/or flat term maps with absolute IRIs: base-independent."""
    for one in spec if isinstance(spec, list) else [spec]:
        if isinstance(one, str):
            if one not in SCHEMA_ORG_CONTEXT_URLS:
                return False
        elif not isinstance(one, dict):
            return False
        else:
            for term, value in one.items():
                if term == "@vocab":
                    if not absolute(value):
                        return False
                elif not _plain_name(term) or not _plain_term(value):
                    return False
    return True


def _simple(ctx: dict[str, Any]) -> bool:
    if not set(ctx) <= _CTX_KEYS:
        return False
    for mapping in ctx["mappings"].values():
        if mapping is None:
            continue
        if not set(mapping) <= _MAPPING_KEYS or mapping["reverse"]:
            return False
        kind = mapping.get("@type")
        if kind is not None and kind != "@id" and (kind in _KEYWORDS or not absolute(kind)):
            return False
    return True


def context(spec: Any) -> Context:
    """The memoized processed context for a top-level @context value."""
    if not _plain_spec(spec):
        raise Decline
    key = json.dumps(spec)
    if key in _CONTEXTS:
        found = _CONTEXTS.get(key)  # .get: another thread may clear the memo meanwhile
    else:
        found = _process(spec)
        if len(_CONTEXTS) > 256:
            _CONTEXTS.clear()
        _CONTEXTS[key] = found
    if found is None:
        raise Decline
    return found


def _process(spec: Any) -> Context | None:
    """pyld's processing of the context; None if it fails or is not simple."""
    options = {
        "base": "",
        "documentLoader": load_document,
        "contextResolver": ContextResolver(jsonld._resolved_context_cache, load_document),
        "processingMode": "json-ld-1.1",
    }
    try:
        with PYLD_LOCK:
            initial = PROC._get_initial_context(options)
            ctx = PROC.process_context(initial, spec, options)
    except Exception:
        return None
    return Context(ctx) if isinstance(ctx, dict) and _simple(ctx) else None
