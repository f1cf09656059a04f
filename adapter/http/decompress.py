"""Capped decompression: a gzip bomb ends in an error, never in memory exhaustion."""

from __future__ import annotations

import zlib

GZIP_MAGIC = b"\x1f\x8b"


class DecompressionLimit(Exception):
    """The decompressed data would pass the cap."""


class DecompressionFailed(Exception):
    """The compressed data is broken or truncated."""


class CappedDecoder:
    """Incremental gzip/zlib/deflate decoder that never outputs more than `max_bytes`.

    Concatenated gzip members (what `cat a.gz b.gz` and some servers produce)
    are decoded one after another; bytes after the last member that do not
    start another member (zero padding) are ignored, as gzip(1) does.
    """

    def __init__(self, encoding: str, max_bytes: int) -> None:
        if encoding == "gzip":
            self._wbits = 16 + zlib.MAX_WBITS
        elif encoding == "deflate":
            self._wbits = zlib.MAX_WBITS  # zlib-wrapped; raw deflate retried below
        else:
            raise ValueError(f"unsupported encoding {encoding}")
        self._encoding = encoding
        self._obj = zlib.decompressobj(self._wbits)
        self._max = max_bytes
        self._out = 0
        self._first = True
        self._trailing = False  # past the last member: input is ignored

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        while data and not self._trailing:
            if self._obj.eof:
                if self._encoding == "gzip" and data.startswith(GZIP_MAGIC[: len(data)]):
                    self._obj = zlib.decompressobj(self._wbits)  # the next member
                else:
                    self._trailing = True
                    break
            chunk, data = self._feed_member(data)
            out.append(chunk)
        return b"".join(out)

    def _feed_member(self, data: bytes) -> tuple[bytes, bytes]:
        """Decode into the current member; returns output and the input left after it."""
        try:
            chunk = self._obj.decompress(data, self._max - self._out + 1)
        except zlib.error as exc:
            if self._first and self._encoding == "deflate":
                # servers send raw deflate under "deflate" as often as zlib streams
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                self._wbits = -zlib.MAX_WBITS
                self._first = False
                return self._feed_member(data)
            raise DecompressionFailed(str(exc)) from exc
        self._first = False
        self._out += len(chunk)
        if self._out > self._max or self._obj.unconsumed_tail:
            raise DecompressionLimit(f"decompressed size passes {self._max} bytes")
        return chunk, (self._obj.unused_data if self._obj.eof else b"")

    def finish(self) -> bytes:
        if not self._obj.eof and not self._trailing:
            raise DecompressionFailed("compressed stream is truncated")
        return b""


def gunzip_capped(data: bytes, max_bytes: int) -> bytes:
    """Decompress a whole gzip file (all its members), at most `max_bytes` of output.

    Raises DecompressionLimit past the cap and DecompressionFailed on broken data.
    """
    decoder = CappedDecoder("gzip", max_bytes)
    out = decoder.feed(data)
    decoder.finish()
    return out
