"""Reading one response body under its caps: decoded bytes, wire bytes, the deadline.

Content-Encoding is decoded here, not by urllib3, so the byte cap holds after
decompression (a gzip bomb ends at the cap) and on the wire too (a gzip
stream of empty blocks, which decodes to nothing, cannot run on forever).
"""

from __future__ import annotations

import re
import socket

import urllib3

from adapter.errors import FetchError
from adapter.http.connections import Exchange
from adapter.http.decompress import CappedDecoder, DecompressionFailed, DecompressionLimit
from adapter.http.findings import BAD_ENCODING, CONNECTION, TIMEOUT, TOO_LARGE
from adapter.limits import Limits

WIRE_SLACK = 65_536  # compressed bytes allowed past the cap (an incompressible body's overhead)
CHUNK = 65_536


def caused_by(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first exception of `kinds` in exc's chain (causes, contexts and wrapped args)."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, kinds):
            return cur
        todo.extend(e for e in (cur.__cause__, cur.__context__) if e is not None)
        todo.extend(a for a in cur.args if isinstance(a, BaseException))
        reason = getattr(cur, "reason", None)
        if isinstance(reason, BaseException):
            todo.append(reason)
    return None


def short(exc: BaseException) -> str:
    """What went wrong in words: the root cause's own sentence where it is a known one,
    else the exception's text without object reprs or control characters, at most 200."""
    for kinds, words in _KNOWN:
        if caused_by(exc, kinds) is not None:
            return words
    text = _REPR.sub("", str(exc))
    text = "".join(c if c.isprintable() else " " for c in text)
    return text if len(text) <= 200 else text[:200] + "..."


_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>:? ?")
_KNOWN: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((socket.gaierror,), "the host name does not resolve (DNS)"),
    ((ConnectionRefusedError,), "the server refused the connection"),
    ((ConnectionResetError,), "the server reset the connection"),
)


def timeout_error(url: str, limits: Limits) -> FetchError:
    return FetchError(
        TIMEOUT.code, url, f"not complete within total_timeout ({limits.total_timeout:g} s)"
    )


def limit_name(limits: Limits, cap: int) -> str:
    """Name the Limits field a byte cap came from, so the finding says which limit to raise."""
    for name in ("max_page_bytes", "max_sitemap_bytes", "max_metadata_bytes", "max_robots_bytes"):
        if getattr(limits, name) == cap:
            return f"{name} ({cap} bytes)"
    return f"the size limit ({cap} bytes)"


def _decoder(url: str, encoding: str, cap: int) -> CappedDecoder | None:
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return CappedDecoder("deflate" if encoding == "deflate" else "gzip", cap)
    raise FetchError(
        BAD_ENCODING.code,
        url,
        f"Content-Encoding {encoding!r} was not asked for (we accept gzip, deflate)",
    )


def read_body(
    resp: urllib3.BaseHTTPResponse,
    url: str,
    cap: int,
    ex: Exchange,
    limits: Limits,
    truncate: bool,
) -> tuple[bytes, bool]:
    """At most `cap` decoded bytes before the deadline; with `truncate`, the head past the cap."""
    encoding = resp.headers.get("content-encoding", "").strip().lower()
    decoder = _decoder(url, encoding, cap)
    declared = resp.headers.get("content-length", "").strip()
    if not truncate and decoder is None and declared.isdigit() and int(declared) > cap:
        raise FetchError(
            TOO_LARGE.code, url, f"Content-Length {declared} passes {limit_name(limits, cap)}"
        )
    chunks: list[bytes] = []
    size = 0
    wire = 0
    try:
        while True:
            if ex.expired or ex.clock.monotonic() > ex.deadline:
                raise timeout_error(url, limits)
            data = resp.read1(CHUNK, decode_content=False)
            if not data:
                break
            wire += len(data)
            if decoder is not None:
                if wire > cap + WIRE_SLACK:
                    if truncate:
                        return b"".join(chunks), True
                    raise FetchError(
                        TOO_LARGE.code,
                        url,
                        f"{encoding} body passes {limit_name(limits, cap)} on the wire, "
                        f"having decoded to {size} bytes",
                    )
                data = decoder.feed(data)
            size += len(data)
            if size > cap:
                if truncate:
                    chunks.append(data[: len(data) - (size - cap)])
                    return b"".join(chunks), True
                raise FetchError(TOO_LARGE.code, url, f"body passes {limit_name(limits, cap)}")
            chunks.append(data)
        if ex.expired:  # the watchdog's shutdown reads as a clean end of stream
            raise timeout_error(url, limits)
        if decoder is not None:
            decoder.finish()
    except DecompressionLimit as exc:
        if truncate:
            return b"".join(chunks), True
        raise FetchError(
            TOO_LARGE.code,
            url,
            f"{encoding} body decompresses past {limit_name(limits, cap)}",
        ) from exc
    except DecompressionFailed as exc:
        if ex.expired:
            raise timeout_error(url, limits) from exc
        raise FetchError(BAD_ENCODING.code, url, f"broken {encoding} body: {exc}") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        if ex.expired:
            raise timeout_error(url, limits) from exc
        if caused_by(exc, (TimeoutError,)) is not None:
            raise FetchError(
                TIMEOUT.code,
                url,
                f"the body stopped arriving for read_timeout ({limits.read_timeout:g} s)",
            ) from exc
        raise FetchError(CONNECTION.code, url, f"body cut off: {short(exc)}") from exc
    return b"".join(chunks), False
