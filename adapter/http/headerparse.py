"""A response's header block parsed without the `email` package when it is plain.

http.client hands every response's header lines to `email.parser`, a general MIME parser:
about a fifth of the CPU of a GET on the bench (BENCHMARKS.md). A block whose every line is
`name: value` (a token name, no folding) builds the same `HTTPMessage` directly; anything
else (folded lines, a line with no colon, a multipart or message type, a block cut off before
its blank line) goes to http.client's own parse, defects and all.
"""

from __future__ import annotations

import http.client
import io
import re
from typing import IO, Any

_READ_LINES = getattr(http.client, "_read_headers", None)  # its own capped line reader (private)
_EMAIL_PARSE = http.client.parse_headers
# a field line as RFC 9110 spells it: a token, a colon, a value without CR or LF, the line end
_FIELD = re.compile(r"[!#-'*+\-.0-9A-Z^-z|~]+:[^\r\n]*\r?\n")
_BLANK = ("\r\n", "\n")
_MIME = ("multipart/", "message/")  # the types `email.parser` reads a payload for


def parse_headers(fp: IO[bytes], _class: type = http.client.HTTPMessage) -> Any:
    """`http.client.parse_headers`: the same message, without `email` for a plain block."""
    raw: list[bytes] = _READ_LINES(fp)  # type: ignore[misc]
    lines = [line.decode("iso-8859-1") for line in raw]
    if _class is not http.client.HTTPMessage or not _plain(lines):
        return _EMAIL_PARSE(io.BytesIO(b"".join(raw)), _class)
    message = http.client.HTTPMessage()
    for line in lines[:-1]:  # as email's compat32 policy stores a field
        name, value = line.split(":", 1)
        message._headers.append((name, value.lstrip(" \t").rstrip("\r\n")))  # type: ignore[attr-defined]
    message.set_payload("")
    return message


def _plain(lines: list[str]) -> bool:
    if not lines or lines[-1] not in _BLANK:
        return False
    for line in lines[:-1]:
        if not _FIELD.fullmatch(line):
            return False
        if line[:13].lower() == "content-type:" and line[13:].strip().lower().startswith(_MIME):
            return False
    return True


def install() -> None:
    """Parse response headers this way in the whole process (http.client's one hook); where
    http.client has no line reader to share, its own parse stays."""
    if _READ_LINES is not None:
        http.client.parse_headers = parse_headers  # type: ignore[assignment]
