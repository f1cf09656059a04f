"""Response headers parsed without `email` give the message `email.parser` gives, byte for byte."""

from __future__ import annotations

import http.client
import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.http import headerparse

PIECES = [
    b"Link", b"Content-Type", b"content-type", b"X-A", b":", b": ", b" ", b"\t", b"\r\n",
    b"\n", b"\r", b"v", b"\xe9", b"<https://doi.org/10.5072/x>; rel=\"cite-as\"", b"(", b"\x00",
    b"multipart/mixed; boundary=b", b"message/rfc822", b"text/html", b"From ",
]  # fmt: skip
ENDS = [b"\r\n\r\n", b"\n\n", b"\r\n", b""]


def message_or_error(parse: Any, block: bytes) -> Any:
    """What a parse leaves: the message's state, or its exception."""
    try:
        return state(parse(io.BytesIO(block)))
    except http.client.HTTPException as exc:
        return repr(exc)


def state(message: Any) -> dict[str, Any]:
    """A message's attributes, its defects by type and its inner messages (message/rfc822)
    by their own state: equal when the two parses agree."""
    found = dict(vars(message))
    found["defects"] = [type(d) for d in message.defects]
    if isinstance(found["_payload"], list):
        found["_payload"] = [state(inner) for inner in found["_payload"]]
    return found


def same_as_email(block: bytes) -> None:
    assert message_or_error(headerparse.parse_headers, block) == message_or_error(
        headerparse._EMAIL_PARSE, block
    )


@pytest.mark.parametrize(
    "block",
    [
        b"Server: nginx\r\nContent-Type: text/html\r\nLink: <a>; rel=x\r\nLink: <b>; rel=y\r\n\r\n",
        b"\r\n",
        b"",  # the connection closed before any header
        b"Cut: off\r\n",  # ... or before the blank line
        b"Empty:\r\n\r\n",
        b"Spaced:  \t v \t \r\n\r\n",
        b"Folded: a\r\n b\r\n\r\n",
        b"NoColon\r\n\r\n",
        b": no name\r\n\r\n",
        b"Bad Name: x\r\n\r\n",
        b"Content-Type: multipart/mixed; boundary=x\r\n\r\n",
        b"Content-Type: Message/rfc822\r\n\r\n",
        b"Latin: caf\xe9\r\n\r\n",
        b"Bare: lf\nOther: lf\n\n",
        b"Inner: a\rb\r\n\r\n",
        b"From nobody\r\n\r\n",
    ],
)
def test_every_shape_of_header_block_gives_the_same_message(block: bytes) -> None:
    same_as_email(block)


@settings(max_examples=600)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.sampled_from(ENDS))
def test_any_header_block_gives_the_same_message(pieces: list[bytes], end: bytes) -> None:
    same_as_email(b"".join(pieces) + end)


def test_too_many_headers_is_refused_as_before() -> None:
    block = b"".join(b"X-%d: v\r\n" % i for i in range(101)) + b"\r\n"
    with pytest.raises(http.client.HTTPException, match="more than 100 headers"):
        headerparse.parse_headers(io.BytesIO(block))


def test_the_fetcher_reads_headers_this_way() -> None:
    import adapter.http.fetcher  # noqa: F401  (its import installs the parser)

    assert http.client.parse_headers is headerparse.parse_headers
