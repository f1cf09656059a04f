"""Sitemaps, sitemap indexes and Signmaps: bytes in, entries and findings out.

`SitemapParser` is fed the body in chunks as it arrives and returns what each
chunk completed: `SitemapEntry` for a `<url>` (with its Signmap `<rs:ln>`
links and `<rs:md>` attributes), `ChildSitemap` for an index's `<sitemap>`,
and findings. The layers below it are finding-free: `sitemap_body` gunzips by
magic bytes, caps and sniffs the format; `sitemap_xml` reads the elements in
flat memory with a hardened lxml pull parser. Here the values are judged
(loc, lastmod, Signmap links, the 50,000-entry cap) and every problem becomes
a finding; a file is read up to its cap and never raises. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin, urlsplit

from adapter.discovery.findings import (
    BAD_GZIP,
    BAD_LASTMOD,
    BAD_SIGNMAP_LINK,
    BAD_XML,
    ENTITIES,
    HTML,
    LOC_NOT_HTTP,
    LOC_RELATIVE,
    LOC_TOO_LONG,
    MORE,
    TOO_LARGE,
    TOO_MANY,
    UNSUPPORTED,
    WRONG_NAMESPACE,
)
from adapter.discovery.sitemap_body import ProblemKind, SitemapBody
from adapter.discovery.sitemap_xml import Record, SitemapXml, XmlError
from adapter.discovery.w3cdate import parse_w3c_datetime
from adapter.findings import Finding, FindingType
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import Link, SitemapEntry

FINDINGS_PER_CODE = 10  # per file; the rest are counted in one closing finding
_HTTP_PREFIXES = ("https://", "http://")


_PROBLEMS: dict[ProblemKind, FindingType] = {
    "too-large": TOO_LARGE,
    "bad-gzip": BAD_GZIP,
    "html": HTML,
    "entities": ENTITIES,
    "unsupported": UNSUPPORTED,
    "bad-xml": BAD_XML,
}


@dataclass(frozen=True, slots=True)
class ChildSitemap:
    """A `<sitemap>` of a sitemap index: another file to read."""

    loc: str
    index: str  # the index it was listed in
    lastmod: datetime | None = None


SitemapItem = SitemapEntry | ChildSitemap | Finding


def check_loc(loc: str, max_length: int) -> FindingType | None:
    """None for an absolute http(s) URL within the length limit, else what is wrong."""
    if len(loc) > max_length:
        return LOC_TOO_LONG
    if loc.startswith(_HTTP_PREFIXES) and len(loc) > 8 and " " not in loc:
        return None
    if loc[:1] <= " ":  # urlsplit drops leading C0 controls: "\x1bhttps://..." is no URL
        return LOC_RELATIVE
    try:
        parts = urlsplit(loc)
    except ValueError:
        return LOC_RELATIVE
    if parts.scheme and parts.scheme.lower() not in ("http", "https"):
        return LOC_NOT_HTTP
    if not parts.scheme or not parts.netloc:
        return LOC_RELATIVE
    return None


class SitemapParser:
    """Incremental sitemap parser for one file. `feed(chunk)`, then `close()`."""

    def __init__(self, url: str, limits: Limits = DEFAULT_LIMITS) -> None:
        self.url = url
        self.limits = limits
        self.count = 0  # entries or child sitemaps read
        self.done = False  # stopped: cap reached or unusable input
        self._body = SitemapBody(limits.max_sitemap_bytes)
        self._xml: SitemapXml | None = None  # once the body is known to be XML
        self._warned_ns = False
        self._text_tail = b""
        self._counts: dict[str, int] = {}
        self._out: list[SitemapItem] = []
        self._max_url = limits.max_url_length

    @property
    def kind(self) -> str | None:
        """urlset | sitemapindex | text, or None when the body is not a sitemap."""
        return self._body.format

    @property
    def gzipped(self) -> bool:
        return self._body.gzipped

    # -- public -------------------------------------------------------------

    def feed(self, data: bytes) -> list[SitemapItem]:
        if not self.done:
            for decoded in self._body.feed(data):
                self._read(decoded)
                if self.done:
                    break
            self._check_body()
        return self._take()

    def close(self) -> list[SitemapItem]:
        if not self.done:
            for decoded in self._body.finish():
                self._read(decoded)
            self._check_body()
        if not self.done:
            self._finish()
        self.done = True
        for code, n in self._counts.items():
            if n > FINDINGS_PER_CODE:
                self._out.append(
                    MORE.at(self.url, f"{n - FINDINGS_PER_CODE} more {code} findings in this file")
                )
        self._counts.clear()
        return self._take()

    # -- dispatch -------------------------------------------------------------

    def _read(self, data: bytes) -> None:
        if self._body.format == "text":
            self._feed_text(data)
            return
        if self._xml is None:
            self._xml = SitemapXml()
        self._feed_xml(self._xml.feed(data))

    def _check_body(self) -> None:
        problem = self._body.problem
        if problem is not None and not self.done:
            self._stop(_PROBLEMS[problem.kind], problem.message)

    def _finish(self) -> None:
        if self._body.format == "text":
            self._text_line(self._text_tail)
            self._text_tail = b""
        elif self._xml is not None:
            self._feed_xml(self._xml.close())

    def _stop(self, kind: FindingType, message: str) -> None:
        self._out.append(kind.at(self.url, message))
        self.done = True
        self._xml = None

    def _take(self) -> list[SitemapItem]:
        out, self._out = self._out, []
        return out

    def _note(self, kind: FindingType, message: str, where: str | None = None) -> None:
        n = self._counts.get(kind.code, 0) + 1
        self._counts[kind.code] = n
        if n <= FINDINGS_PER_CODE:
            self._out.append(kind.at(self.url, message, where))

    # -- plain text ----------------------------------------------------------

    def _feed_text(self, data: bytes) -> None:
        lines = (self._text_tail + data).split(b"\n")
        self._text_tail = lines.pop()
        for line in lines:
            self._text_line(line)
            if self.done:
                return

    def _text_line(self, raw: bytes) -> None:
        loc = raw.decode("utf-8", "replace").strip().lstrip("\ufeff")
        if loc and not self.done:
            self._entry(loc, None, (), ())

    # -- XML -----------------------------------------------------------------

    def _feed_xml(self, records: Iterator[Record]) -> None:
        try:
            for kind, loc, lastmod, lns, md in records:
                if (kind == "url") != (self._body.format == "urlset"):
                    continue  # a <url> in an index or a <sitemap> in a urlset: not ours
                if kind == "url":
                    self._entry(loc, lastmod, lns, md)
                else:
                    self._child(loc, lastmod)
                if self.done:
                    return
        except XmlError as exc:
            self._stop(BAD_XML, str(exc))
            return
        xml = self._xml
        if xml is not None and xml.foreign_namespace is not None and not self._warned_ns:
            self._warned_ns = True
            self._note(WRONG_NAMESPACE, f"entries in namespace {xml.foreign_namespace!r}")

    # -- entries -------------------------------------------------------------

    def _counted(self) -> bool:
        """Count one entry; False (and stop) past the per-file cap."""
        if self.count >= self.limits.max_sitemap_entries:
            self._stop(
                TOO_MANY,
                f"more than {self.limits.max_sitemap_entries} entries; the rest are ignored",
            )
            return False
        self.count += 1
        return True

    def _valid_loc(self, loc: str) -> bool:
        problem = check_loc(loc, self.limits.max_url_length)
        if problem is None:
            return True
        shown = loc if len(loc) <= 200 else loc[:200] + "..."
        self._note(problem, f"{problem.explanation} <loc>: {shown or '(empty)'}")
        return False

    def _lastmod(self, text: str, loc: str) -> datetime | None:
        if not text:
            return None
        parsed = parse_w3c_datetime(text)
        if parsed is None:
            self._note(BAD_LASTMOD, f"<lastmod> {text[:80]!r} of {loc} is not a W3C datetime")
        return parsed

    def _child(self, loc: str, lastmod: str) -> None:
        if not self._valid_loc(loc) or not self._counted():
            return
        self._out.append(ChildSitemap(loc, self.url, self._lastmod(lastmod, loc)))

    def _entry(
        self,
        loc: str,
        lastmod: str | None,
        lns: list[dict[str, str]] | tuple[()],
        md: tuple[tuple[str, str], ...],
    ) -> None:
        fast = len(loc) <= self._max_url and loc.startswith(_HTTP_PREFIXES) and " " not in loc
        if not (fast or self._valid_loc(loc)) or not self._counted():
            return
        links = tuple(self._links(loc, lns)) if lns else ()
        when = None
        if lastmod:
            when = parse_w3c_datetime(lastmod)
            if when is None:
                self._lastmod(lastmod, loc)  # says why
        self._out.append(SitemapEntry(loc, self.url, when, links, md))

    def _links(self, loc: str, lns: list[dict[str, str]]) -> Iterator[Link]:
        for attrs in lns:
            given = dict(attrs)
            href = (attrs.pop("href", "") or "").strip()
            rels = (attrs.pop("rel", "") or "").split()
            if not href or not rels:
                missing = " and ".join(k for k, v in (("href", href), ("rel", rels)) if not v)
                self._note(BAD_SIGNMAP_LINK, f"<rs:ln> of {loc} has no {missing}: {given}")
                continue
            target = href if href.startswith(_HTTP_PREFIXES) else urljoin(self.url, href)
            type_ = attrs.pop("type", None)
            profile = attrs.pop("profile", None)
            extra = tuple(sorted((str(k), str(v)) for k, v in attrs.items()))
            for rel in rels:
                yield Link(target, rel, loc, "signmap", type_, profile, extra)


def parse_sitemap(
    body: bytes, url: str, limits: Limits = DEFAULT_LIMITS, chunk_size: int = 1 << 20
) -> Iterator[SitemapItem]:
    """Parse a whole body, still in chunks, so memory stays bounded by the chunk."""
    parser = SitemapParser(url, limits)
    for start in range(0, len(body), chunk_size):
        yield from parser.feed(body[start : start + chunk_size])
        if parser.done:
            break
    yield from parser.close()
