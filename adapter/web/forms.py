"""The request's fields: the query string, a urlencoded form, or a multipart upload.

The body is read up to a cap given by the caller (a page's worth of pasted
HTML plus the form's other fields); a longer one is refused before it is read.
"""

from __future__ import annotations

import email.parser
import email.policy
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl


class TooLarge(ValueError):
    """The request body is over the cap."""


@dataclass(slots=True)
class Form:
    fields: dict[str, str] = field(default_factory=dict)
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # name -> (filename, body)

    def get(self, name: str) -> str:
        return self.fields.get(name, "")


def query_form(environ: dict[str, Any]) -> Form:
    return Form(dict(parse_qsl(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)))


def body_form(environ: dict[str, Any], max_bytes: int) -> Form:
    """The POSTed form; raises TooLarge past `max_bytes`."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > max_bytes:
        raise TooLarge(f"the form is {length} bytes, more than {max_bytes}")
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    kind = str(environ.get("CONTENT_TYPE", ""))
    if kind.split(";", 1)[0].strip().lower() == "multipart/form-data":
        return multipart(body, kind)
    text = body.decode("utf-8", "replace")
    return Form(dict(parse_qsl(text, keep_blank_values=True)))


def multipart(body: bytes, content_type: str) -> Form:
    """multipart/form-data: text fields as str, file fields as (filename, bytes)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1", "replace")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    form = Form()
    if not message.is_multipart():
        return form
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            form.files[name] = (filename, data)
        else:
            form.fields[name] = data.decode(part.get_content_charset() or "utf-8", "replace")
    return form
