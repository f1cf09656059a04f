"""Capped decompression: a gzip bomb ends in an error, never in memory exhaustion."""

from __future__ import annotations

import zlib

GZIP_MAGIC = b"\x1f\x8b"


class DecompressionLimit(Exception):
    """The decompressed data would pass the cap."""


class DecompressionFailed(Exception):
    """The compressed data is broken or truncated."""


class CappedDecoder:
    """Incremental gzip/zlib/deflate decoder that never outputs more than `max_bytes`."""

    def __init__(self, encoding: str, max_bytes: int) -> None:
        if encoding == "gzip":
            wbits = 16 + zlib.MAX_WBITS
        elif encoding == "deflate":
            wbits = zlib.MAX_WBITS  # zlib-wrapped; raw deflate retried below
        else:
            raise ValueError(f"unsupported encoding {encoding}")
        self._encoding = encoding
        self._obj = zlib.decompressobj(wbits)
        self._max = max_bytes
        self._out = 0
        self._first = True

    def feed(self, data: bytes) -> bytes:
        try:
            chunk = self._obj.decompress(data, self._max - self._out + 1)
        except zlib.error as exc:
            if self._first and self._encoding == "deflate":
                # servers send raw deflate under "deflate" as often as zlib streams
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                self._first = False
                return self.feed(data)
            raise DecompressionFailed(str(exc)) from exc
        self._first = False
        self._out += len(chunk)
        if self._out > self._max or self._obj.unconsumed_tail:
            raise DecompressionLimit(f"decompressed size passes {self._max} bytes")
        return chunk

    def finish(self) -> bytes:
        if not self._obj.eof:
            raise DecompressionFailed("compressed stream is truncated")
        return b""


def gunzip_capped(data: bytes, max_bytes: int) -> bytes:
    """Decompress a whole gzip member, at most `max_bytes` of output."""
    decoder = CappedDecoder("gzip", max_bytes)
    out = decoder.feed(data)
    decoder.finish()
    return out
