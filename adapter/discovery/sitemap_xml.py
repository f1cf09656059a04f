"""The `<url>` and `<sitemap>` elements of sitemap XML, read in flat memory.

lxml's pull parser is fed bytes as they come and raises events only for the
root's `<url>`/`<sitemap>` children; each is reduced to plain values (loc,
lastmod, Signmap `<rs:ln>` and `<rs:md>` attributes), cleared and dropped
from the tree, so a 50,000-entry file never becomes a document tree. The
parser resolves no entities, loads no DTD and never touches the network.
Pure: no I/O, no findings (the caller judges the values).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lxml import etree

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
RS_NS = "http://www.openarchives.org/rs/terms/"

Attributes = tuple[tuple[str, str], ...]
# ("url" | "sitemap", loc, lastmod, [<rs:ln> attributes], <rs:md> attributes); text stripped
Record = tuple[str, str, str, list[dict[str, str]], Attributes]


class XmlError(Exception):
    """The XML is not well-formed; records before the error were already returned."""


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


class SitemapXml:
    """Feed bytes, iterate the records they complete; `close()` at the end."""

    def __init__(self) -> None:
        self._parser: Any = etree.XMLPullParser(
            events=("end",),
            tag=("{*}url", "{*}sitemap"),  # only entries raise events: fewer Python calls
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
        )
        self._tags: dict[str, str] = {}  # full tag -> local name ("rs:" prefix for ResourceSync)
        self.foreign_namespace: str | None = None  # of entries outside the sitemaps.org one

    def feed(self, data: bytes) -> Iterator[Record]:
        try:
            self._parser.feed(data)
        except Exception as exc:  # lxml's C parser: any failure is the file's
            yield from self._drain()
            raise XmlError(f"not well-formed XML: {_short(exc)}") from exc
        yield from self._drain()

    def close(self) -> Iterator[Record]:
        try:
            self._parser.close()
        except Exception as exc:  # lxml's C parser: any failure is the file's
            yield from self._drain()
            raise XmlError(f"XML ends badly: {_short(exc)}") from exc
        yield from self._drain()

    def _drain(self) -> Iterator[Record]:
        tags = self._tags
        for _event, elem in self._parser.read_events():
            parent = elem.getparent()
            if parent is None or parent.getparent() is not None:
                continue  # the root, or a nested element that happens to share the name
            tag = elem.tag
            local = tags.get(tag) or self._learn(tag)
            record = self._record(elem, local) if local in ("url", "sitemap") else None
            elem.clear()
            while elem.getprevious() is not None:
                del parent[0]  # read entries leave the tree: memory stays flat
            if record is not None:
                yield record

    def _learn(self, tag: str) -> str:
        ns, _, local = tag[1:].rpartition("}") if tag.startswith("{") else ("", "", tag)
        if local in ("url", "sitemap") and ns != SITEMAP_NS and self.foreign_namespace is None:
            self.foreign_namespace = ns or "(none)"
        if ns == RS_NS:
            local = "rs:" + local
        self._tags[tag] = local
        return local

    def _record(self, elem: Any, local: str) -> Record:
        loc = lastmod = ""
        lns: list[dict[str, str]] = []
        md: Attributes = ()
        tags = self._tags
        for child in elem:
            tag = child.tag
            name = tags.get(tag)
            if name is None:
                if not isinstance(tag, str):
                    continue  # comments, processing instructions, entity references
                name = self._learn(tag)
            if name == "loc":
                loc = (child.text or "").strip()
            elif name == "lastmod":
                lastmod = (child.text or "").strip()
            elif name == "rs:ln":
                lns.append(dict(child.attrib))
            elif name == "rs:md":
                md = tuple(sorted((str(k), str(v)) for k, v in child.attrib.items()))
        return (local, loc, lastmod, lns, md)
