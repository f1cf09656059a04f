"""The bytes of one sitemap file: gunzipped by magic bytes, capped, and sniffed.

Real sitemaps arrive gzipped under `.xml` names and `text/xml` types, as plain
text, or as an HTML error page; none of the headers can be trusted. This layer
decides from the bytes alone, decompresses with a cap (a gzip bomb stops at
the cap, never in memory), counts decoded bytes so a file is read exactly up
to `max_sitemap_bytes`, and refuses documents that declare entities before
any XML parser sees them. It reports problems as a `Problem` (kind and
message); the parser turns them into findings. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from adapter.http.decompress import (
    GZIP_MAGIC,
    CappedDecoder,
    DecompressionFailed,
    DecompressionLimit,
)

Format = Literal["urlset", "sitemapindex", "text"]
ProblemKind = Literal["too-large", "bad-gzip", "html", "entities", "unsupported", "bad-xml"]

# Compressed bytes per decoder call. deflate expands at most ~1032:1, so one call
# yields at most ~4.2 MB and our own byte count reaches the cap before the
# decoder's guard (cap + GZIP_SLACK) trips: the file is read exactly up to the cap.
GZIP_SLICE = 4 * 1024
GZIP_SLACK = 8 * 1024 * 1024
BATCH = 1024 * 1024  # decoded bytes handed on at a time
MAX_PROLOG = 1024 * 1024  # bytes before the root element we are willing to wait for
_WHITESPACE = b"\xef\xbb\xbf \t\r\n"
# a name holds no "<": without that, a run of "<" backtracks quadratically
_ROOT = re.compile(rb"<(?![?!])([^\s/<>]+)[\s/>]")


@dataclass(frozen=True, slots=True)
class Problem:
    kind: ProblemKind
    message: str


def sniff(head: bytes) -> Format | Problem | None:
    """The format of a document from its first bytes; None while more are needed."""
    start = head.lstrip(_WHITESPACE)
    if not start:
        return None
    if not start.startswith(b"<"):
        return "text"
    match = _ROOT.search(start)
    if match is None:
        if len(head) > MAX_PROLOG:
            return Problem("bad-xml", "no XML root element in the first megabyte")
        return None
    prolog = start[: match.start()].lower()
    local = match.group(1).split(b":")[-1].lower()
    if b"<!doctype html" in prolog or local == b"html":
        return Problem("html", "an HTML page was served where a sitemap was expected")
    if b"<!entity" in prolog:
        return Problem("entities", "the document declares XML entities; it is not read")
    if local == b"urlset":
        return "urlset"
    if local == b"sitemapindex":
        return "sitemapindex"
    name = local.decode("ascii", "replace")
    return Problem("unsupported", f"a <{name}> document, not a <urlset> or <sitemapindex>")


class SitemapBody:
    """Feed raw chunks; get decoded, capped bytes once the format is known."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.format: Format | None = None
        self.problem: Problem | None = None  # set once: reading stops there
        self.gzipped = False
        self._raw_head = b""
        self._head = b""  # decoded bytes kept until the format is known
        self._gzip: CappedDecoder | None = None
        self._started = False
        self._size = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded bytes ready for the format's reader (none until the format is known)."""
        if self.problem is not None or not data:
            return
        if not self._started:
            self._raw_head += data
            if len(self._raw_head) < 2:
                return
            data, self._raw_head = self._raw_head, b""
            self._started = True
            if data.startswith(GZIP_MAGIC):
                self.gzipped = True
                self._gzip = CappedDecoder("gzip", self.max_bytes + GZIP_SLACK)
        if self._gzip is None:
            yield from self._decoded(data)
            return
        yield from self._gunzip(self._gzip, data)

    def finish(self) -> Iterator[bytes]:
        """The last bytes; sets `problem` for a cut-short gzip or a body with no format."""
        if self.problem is not None:
            return
        if not self._started and self._raw_head:
            self._started = True
            yield from self._decoded(self._raw_head)
        if self._gzip is not None:
            try:
                self._gzip.finish()
            except DecompressionFailed as exc:
                self.problem = Problem("bad-gzip", f"gzip data cut short: {exc}")
                return
        if self.format is None and self.problem is None:
            if not self._head.strip(_WHITESPACE):
                self.problem = Problem("bad-xml", "the sitemap is empty")
                return
            found = sniff(self._head + b" ")  # a lone root tag, e.g. "<urlset"
            if isinstance(found, Problem) or found is None:
                self.problem = found or Problem("bad-xml", "no XML root element: not a sitemap")
                return
            self.format = found
            head, self._head = self._head, b""
            yield head

    def _gunzip(self, decoder: CappedDecoder, data: bytes) -> Iterator[bytes]:
        batch: list[bytes] = []
        size = 0
        for start in range(0, len(data), GZIP_SLICE):
            try:
                decoded = decoder.feed(data[start : start + GZIP_SLICE])
            except (DecompressionLimit, DecompressionFailed) as exc:
                yield from self._decoded(b"".join(batch))
                if self.problem is None:
                    self.problem = (
                        Problem("too-large", f"decompressed sitemap passes {self._cap()}")
                        if isinstance(exc, DecompressionLimit)
                        else Problem("bad-gzip", f"broken gzip data: {exc}")
                    )
                return
            batch.append(decoded)
            size += len(decoded)
            if size >= BATCH:
                yield from self._decoded(b"".join(batch))
                batch, size = [], 0
                if self.problem is not None:
                    return
        yield from self._decoded(b"".join(batch))

    def _decoded(self, data: bytes) -> Iterator[bytes]:
        over = self._size + len(data) > self.max_bytes
        if over:
            data = data[: max(0, self.max_bytes - self._size)]
        self._size += len(data)
        if self.format is None:
            self._head += data
            found = sniff(self._head)
            if isinstance(found, Problem):
                self.problem = found
                return
            if found is None:
                if over:
                    self.problem = Problem("too-large", f"sitemap passes {self._cap()}")
                return
            self.format = found
            data, self._head = self._head, b""
        if data:
            yield data
        if over:
            self.problem = Problem("too-large", f"sitemap passes {self._cap()}; read up to it")

    def _cap(self) -> str:
        return f"the limit of {self.max_bytes} bytes"
