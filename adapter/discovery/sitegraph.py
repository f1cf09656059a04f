"""A sitegraph: one JSON-LD document (or DataCatalog page) holding a repository's Datasets.

Ocean InfoHub sources publish their Datasets in one document (Gleaner's "sitegraph"
source) instead of a sitemap of landing pages: an `@graph` of Datasets, a top-level array,
or a `DataCatalog` whose `dataset` entries are full Datasets. Each Dataset is harvested as
if it had its own landing page, so this module cuts every Dataset out of the graph as a
JSON-LD document of its own (the graph's `@context` carried along, and the nodes of the
graph it points to by `@id`, so a flattened graph keeps its creators and places), and
names it by an address the frontier keys it under: its `url`, else its `@id`, else the
graph's URL with the `@id` as fragment. A catalogue entry that only names a landing page
(a `url` or `@id` and at most a name or a date) is a reference: that page is discovered
like a sitemap's `<loc>`.

Pure: a response in, values and findings out. Types are matched by their spelling
(`Dataset`, `schema:Dataset`, `http(s)://schema.org/Dataset`) without expanding the
graph; each cut document is normalized properly when it is checked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

from adapter.discovery.w3cdate import parse_w3c_datetime
from adapter.findings import Finding, FindingType, Severity
from adapter.limits import Limits
from adapter.models import Fetched, SitemapEntry
from adapter.page.extract import extract
from adapter.page.findings import (
    INVALID_JSON,
    TOO_DEEP,
    TOO_MANY_BLOCKS,
    TOO_MANY_NODES,
)

SITEGRAPH_READ = FindingType(
    "discover/sitegraph-read",
    Severity.INFO,
    "One sitegraph was read: its Datasets, the landing pages it references, and what was "
    "skipped; or it was not modified since the last run.",
)
SITEGRAPH_UNREADABLE = FindingType(
    "discover/sitegraph-unreadable",
    Severity.ERROR,
    "A sitegraph could not be read (fetch failed, HTTP error, not JSON-LD, invalid JSON). Its "
    "Datasets keep what the last read gave them: nothing is archived for it this run.",
)
SITEGRAPH_OVER_LIMIT = FindingType(
    "discover/sitegraph-over-limit",
    Severity.ERROR,
    "A sitegraph passes one of the adapter's caps (bytes, Datasets, JSON depth); what was "
    "over the cap is not read and nothing is archived for it this run. Split the graph, or "
    "raise the limit the message names.",
)
SITEGRAPH_DUPLICATE = FindingType(
    "discover/sitegraph-duplicate",
    Severity.WARNING,
    "Two Datasets of a sitegraph share an @id (or a url): JSON-LD reads them as one node. "
    "The first is harvested, the later one is skipped. Give each Dataset its own @id.",
)
SITEGRAPH_ENTRY_SKIPPED = FindingType(
    "discover/sitegraph-entry-skipped",
    Severity.WARNING,
    "An entry of a sitegraph was skipped: a Dataset with neither a url nor an @id the "
    "adapter can track it by, or a catalogue entry that is neither a Dataset nor a link to "
    "a landing page.",
)

GRAPH_ACCEPT = "application/ld+json, application/json;q=0.9, text/html;q=0.5, */*;q=0.1"
# a start URL whose path ends so is a sitegraph (`adapter sync URL`, `adapter discover URL`)
SITEGRAPH_SUFFIXES = (".jsonld", ".json-ld", ".json")
MAX_REFERENCED = 200  # nodes of the graph one Dataset may carry along by @id
_REFERENCE_KEYS = frozenset({"@id", "@type", "url", "name", "sameAs", "dateModified"})
# the unprefixed spelling last: "schema:Dataset" is not a term of its own
_SCHEMA_PREFIXES = (
    "schema:", "sdo:", "schemaorg:", "http://schema.org/", "https://schema.org/", ""
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class GraphState:
    """A sitegraph as last read whole: what the next run's GET sends, and its bytes' sum."""

    etag: str | None
    last_modified: str | None
    checksum: str | None
    datasets: int = 0


@dataclass(frozen=True, slots=True)
class GraphRead:
    """How reading one sitegraph went, after its entries in discovery's stream."""

    url: str
    state: GraphState | None  # to keep for the next run; None: keep the one there is
    unchanged: bool = False  # 304, or the same bytes: its pages are as they were
    whole: bool = False  # read whole: a Dataset it no longer lists has left it


@dataclass(frozen=True, slots=True)
class GraphDataset:
    """One Dataset of a sitegraph, cut out as a JSON-LD document of its own."""

    address: str  # the frontier's URL for it: url, else @id, else graph#@id
    id: str | None  # its @id as published
    url: str | None  # its url, resolved
    document: bytes  # {"@context": the graph's, ...the Dataset} (+ the nodes it references)
    where: str  # where in the graph, e.g. "block 1 $['@graph'][3]"


@dataclass(slots=True)
class SiteGraph:
    """What one sitegraph holds."""

    url: str
    datasets: list[GraphDataset] = field(default_factory=list)
    references: list[SitemapEntry] = field(default_factory=list)  # landing pages to discover
    findings: list[Finding] = field(default_factory=list)
    whole: bool = True  # every entry read: a Dataset not in it has left the graph
    readable: bool = True  # False: no JSON-LD could be read at all
    catalogues: int = 0  # DataCatalog nodes read
    loose: int = 0  # Datasets found outside a catalogue (top level, @graph)
    html: bool = False  # read from an HTML page's JSON-LD blocks

    def summary(self) -> str:
        words = [f"{len(self.datasets)} Datasets", f"{len(self.references)} references"]
        skipped = sum(
            f.code in (SITEGRAPH_DUPLICATE.code, SITEGRAPH_ENTRY_SKIPPED.code)
            for f in self.findings
        )
        words += [f"{self.catalogues} catalogues"] if self.catalogues else []
        words += [f"{skipped} skipped"] if skipped else []
        return ", ".join(words) + ("" if self.whole else ", not read whole")

    def is_sitegraph(self) -> bool:
        """Whether this reads as a sitegraph rather than one landing page's JSON-LD: a
        catalogue that lists Datasets (a page with a Dataset of its own aside), or a JSON-LD
        document of two Datasets or more."""
        if self.catalogues and (self.datasets or self.references):
            return not (self.html and self.loose)
        return not self.html and self.loose >= 2

    def find(self, key: str) -> GraphDataset | None:
        """The Dataset whose @id, url or address is `key` (a fragment, maybe %-encoded)."""
        wanted = {key, unquote(key)}
        for found in self.datasets:
            if wanted & {found.id, found.url, found.address}:
                return found
        return None


def graph_limits(limits: Limits) -> Limits:
    """A graph read as one document: its bytes capped by max_sitegraph_bytes, its depth by
    max_json_depth; its node count is bounded by its bytes (each Dataset cut out of it is
    held to max_json_nodes when it is checked)."""
    return replace(
        limits, max_page_bytes=limits.max_sitegraph_bytes, max_json_nodes=limits.max_sitegraph_bytes
    )


def read_sitegraph(fetched: Fetched, limits: Limits) -> SiteGraph:
    """The Datasets and references of a fetched sitegraph (JSON-LD or an HTML page)."""
    url = fetched.final_url
    graph = SiteGraph(url)
    capped = graph_limits(limits)
    extraction = extract(
        fetched.body,
        url=url,
        content_type=fetched.content_type,
        charset=fetched.charset,
        limits=capped,
    )
    graph.html = any(block.syntax != "document" for block in extraction.blocks)
    if not extraction.blocks:
        graph.whole = graph.readable = False
        graph.findings.append(_unreadable(url, extraction.findings, extraction.skipped, limits))
        return graph
    for block in extraction.blocks:
        _Reader(graph, limits, extraction.base_url or url, block.index).read(block.data)
    left_out = [f for f in extraction.findings if f.code in _PARTS_LEFT_OUT]
    if left_out:  # a Dataset may hide in what was not read (an empty block hides none)
        graph.whole = False
        reasons = "; ".join(f.message for f in left_out[:3])
        graph.findings.append(
            SITEGRAPH_UNREADABLE.at(
                url,
                f"Part of the sitegraph {url} could not be read ({reasons}); its other "
                "Datasets are read, and none is archived for being absent this run.",
            )
        )
    return graph


# an HTML page's JSON-LD blocks that were not read (a broken one, one past the cap)
_PARTS_LEFT_OUT = frozenset(
    t.code for t in (INVALID_JSON, TOO_DEEP, TOO_MANY_NODES, TOO_MANY_BLOCKS)
)


def _unreadable(url: str, found: list[Finding], skipped: list[Any], limits: Limits) -> Finding:
    """Why no JSON-LD could be read: a cap (over-limit) or the document's own fault."""
    capped = [s.limit for s in skipped if s.limit is not None]
    reasons = "; ".join(f.message for f in found[:3]) or "no JSON-LD in it"
    if "max_json_depth" in capped:
        return SITEGRAPH_OVER_LIMIT.at(
            url,
            f"The sitegraph {url} is nested deeper than max_json_depth "
            f"({limits.max_json_depth} levels); it is not read.",
        )
    return SITEGRAPH_UNREADABLE.at(url, f"The sitegraph {url} could not be read: {reasons}")


def fetch_failed(url: str, why: str) -> Finding:
    """The finding for a graph that could not be fetched (a FetchError's message)."""
    return SITEGRAPH_UNREADABLE.at(url, f"The sitegraph {url} could not be fetched: {why}")


def too_large(url: str, limits: Limits) -> Finding:
    return SITEGRAPH_OVER_LIMIT.at(
        url,
        f"The sitegraph {url} is larger than max_sitegraph_bytes ({limits.max_sitegraph_bytes} "
        "bytes); it is not read.",
    )


def dataset_response(address: str, document: bytes) -> Fetched:
    """A graph's Dataset as the response of a landing page that holds only it: what the
    pipeline checks. No headers: the graph's Link headers are about the graph."""
    headers = {"content-type": "application/ld+json"}
    return Fetched(url=address, final_url=address, status=200, headers=headers, body=document)


# -- reading the graph ----------------------------------------------------------------


def _local(kind: str) -> str:
    for prefix in _SCHEMA_PREFIXES:
        if kind.startswith(prefix) and "/" not in kind[len(prefix) :]:
            return kind[len(prefix) :]
    return ""


def _types(node: dict[str, Any]) -> set[str]:
    kinds = node.get("@type", node.get("type"))
    items = kinds if isinstance(kinds, list) else [kinds]
    return {_local(k) for k in items if isinstance(k, str)}


def _prop(node: dict[str, Any], name: str) -> Any:
    for prefix in _SCHEMA_PREFIXES:
        if prefix + name in node:
            return node[prefix + name]
    return None


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _contexts(*values: Any) -> Any:
    """Contexts applied outermost first, as one @context value (None: none)."""
    flat: list[Any] = []
    for value in values:
        flat += value if isinstance(value, list) else [] if value is None else [value]
    return flat[0] if len(flat) == 1 else flat or None


def _http(value: Any, base: str) -> str | None:
    """`value` as an absolute http(s) URL (resolved against the graph), else None."""
    if not isinstance(value, str) or not value.strip() or value.startswith("_:"):
        return None
    if value.startswith(("https://", "http://")) and value == value.strip():
        return value  # absolute already: urljoin was 40 % of reading a 20,000-Dataset graph
    absolute = urljoin(base, value.strip())
    return absolute if urlsplit(absolute).scheme in ("http", "https") else None


class _Reader:
    """One JSON-LD block of a sitegraph, read into its `SiteGraph`."""

    def __init__(self, graph: SiteGraph, limits: Limits, base: str, block: int) -> None:
        self.graph, self.limits, self.base, self.index = graph, limits, base, block
        self.nodes: dict[str, dict[str, Any]] = {}  # the block's other nodes by @id
        self.ids: set[str] = {d.id for d in graph.datasets if d.id}
        self.addresses: set[str] = {d.address for d in graph.datasets}

    def read(self, data: Any) -> None:
        items = list(self._items(data))
        for node, _context, _where in items:
            if "@id" in node and not _types(node) & {"Dataset", "DataCatalog"}:
                self.nodes.setdefault(str(node["@id"]), node)
        for node, context, where in items:
            if "Dataset" in _types(node):
                self.graph.loose += 1
                self.dataset(node, context, where)
        # after the Datasets: a flattened catalogue's {"@id": ...} entries name them
        for node, context, where in items:
            if "DataCatalog" in _types(node) and "Dataset" not in _types(node):
                self.catalogue(node, context, where)

    def _items(self, data: Any) -> Iterator[tuple[dict[str, Any], Any, str]]:
        """The block's top-level nodes, each with the context it is read in."""
        at = f"block {self.index} $"
        if isinstance(data, list):
            for i, item in enumerate(data):
                if isinstance(item, dict):
                    yield from self._in(item, None, f"{at}[{i}]")
        elif isinstance(data, dict):
            yield from self._in(data, None, at)

    def _in(self, node: dict[str, Any], outer: Any, where: str) -> Iterator[tuple[Any, Any, str]]:
        context = _contexts(outer, node.get("@context"))
        members = node.get("@graph")
        if isinstance(members, list | dict):
            for i, item in enumerate(_as_list(members)):
                if isinstance(item, dict):
                    yield item, context, f"{where}['@graph'][{i}]"
            if not _types(node):
                return
        yield node, outer, where

    def catalogue(self, node: dict[str, Any], outer: Any, where: str) -> None:
        self.graph.catalogues += 1
        context = _contexts(outer, node.get("@context"))
        for i, entry in enumerate(_as_list(_prop(node, "dataset"))):
            at = f"{where}['dataset'][{i}]"
            if isinstance(entry, str) or (
                isinstance(entry, dict) and set(map(_local_key, entry)) <= _REFERENCE_KEYS
            ):
                self.reference(entry, at)
            elif isinstance(entry, dict) and "Dataset" in _types(entry):
                self.dataset(entry, context, at)
            else:
                self.skip(at, "a catalogue entry with content but no @type Dataset")

    def reference(self, entry: str | dict[str, Any], where: str) -> None:
        if isinstance(entry, str):
            url, modified = _http(entry, self.base), None
        else:
            url = _http(_prop(entry, "url"), self.base) or _http(entry.get("@id"), self.base)
            modified = _prop(entry, "dateModified")
        named = entry.get("@id") if isinstance(entry, dict) else entry
        if named in self.ids or url in self.addresses:
            return  # a Dataset of this graph, listed by its catalogue: harvested from it
        if url is None:
            self.skip(where, "a catalogue entry that names no http(s) landing page")
            return
        lastmod = parse_w3c_datetime(modified) if isinstance(modified, str) else None
        self.graph.references.append(SitemapEntry(url, self.graph.url, lastmod))

    def dataset(self, node: dict[str, Any], outer: Any, where: str) -> None:
        graph = self.graph
        if len(graph.datasets) >= self.limits.max_sitegraph_datasets:
            if graph.whole:
                graph.whole = False
                cap = self.limits.max_sitegraph_datasets
                message = (
                    f"The sitegraph {graph.url} holds more than max_sitegraph_datasets ({cap}) "
                    f"Datasets; the first {cap} are read, the rest are not."
                )
                graph.findings.append(SITEGRAPH_OVER_LIMIT.at(graph.url, message, where))
            return
        raw_id = node.get("@id")
        node_id = raw_id if isinstance(raw_id, str) and not raw_id.startswith("_:") else None
        url = _http(_prop(node, "url"), self.base)
        address = url or _http(node_id, self.base)
        if address is None and node_id:
            address = f"{graph.url}#{quote(node_id, safe=':/')}"
        if address is None:
            self.skip(where, "a Dataset with neither a url nor an @id")
            return
        if (node_id and node_id in self.ids) or address in self.addresses:
            name = node_id if node_id and node_id in self.ids else address
            message = (
                f"The sitegraph {graph.url} lists the Dataset {name} twice; the first is "
                f"harvested, this one ({where}) is skipped."
            )
            graph.findings.append(SITEGRAPH_DUPLICATE.at(graph.url, message, where))
            return
        self.ids |= {node_id} if node_id else set()
        self.addresses.add(address)
        document = self.cut(node, _contexts(outer, node.get("@context")))
        graph.datasets.append(GraphDataset(address, node_id, url, document, where))

    def cut(self, node: dict[str, Any], context: Any) -> bytes:
        """The Dataset as a document of its own, with the graph's nodes it points to."""
        own = {k: v for k, v in node.items() if k != "@context"}
        carried = self.referenced(own)
        body: dict[str, Any] = {"@context": context} if context is not None else {}
        if carried:
            body["@graph"] = [own, *carried]
        else:
            body.update(own)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def referenced(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        """The block's other nodes `node` names by {"@id": ...}, transitively, bounded."""
        if not self.nodes:
            return []
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        stack: list[Any] = [node]
        while stack and len(out) < MAX_REFERENCED:
            value = stack.pop()
            if isinstance(value, list):
                stack.extend(value)
            elif isinstance(value, dict):
                ref = value.get("@id")
                if len(value) == 1 and isinstance(ref, str) and ref not in seen:
                    seen.add(ref)
                    target = self.nodes.get(ref)
                    if target is not None:
                        out.append({k: v for k, v in target.items() if k != "@context"})
                        stack.append(target)
                    continue
                stack.extend(value.values())
        return out

    def skip(self, where: str, what: str) -> None:
        url = self.graph.url
        message = f"The sitegraph {url} has {what} at {where}; it is skipped."
        self.graph.findings.append(SITEGRAPH_ENTRY_SKIPPED.at(url, message, where))


def _local_key(key: str) -> str:
    return key if key.startswith("@") else _local(key) or key
