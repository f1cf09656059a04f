"""Persistent identifiers beyond DOI, in the spellings repositories publish."""

from __future__ import annotations

import pytest

from adapter.identifiers import recognise

PAGE = "https://data.example.org/dataset/7"


@pytest.mark.parametrize(
    ("text", "scheme", "value"),
    [
        ("doi:10.5066/F7VX0DMQ", "doi", "doi:10.5066/f7vx0dmq"),
        ("https://doi.org/10.5066/F7VX0DMQ", "doi", "doi:10.5066/f7vx0dmq"),
        ("ark:/13030/m5br8st1", "ark", "ark:/13030/m5br8st1"),
        ("ark:13030/m5br8st1", "ark", "ark:/13030/m5br8st1"),  # the newer slashless form
        ("https://n2t.net/ark:/13030/m5br8st1", "ark", "ark:/13030/m5br8st1"),
        ("http://ark.example.org/ark:/B5072/fk2x", "ark", "ark:/b5072/fk2x"),  # NAAN case
        ("hdl:20.500.12345/LW-SM", "handle", "hdl:20.500.12345/LW-SM"),
        ("https://hdl.handle.net/20.500.12345/LW-SM", "handle", "hdl:20.500.12345/LW-SM"),
        ("http://hdl.handle.net/1721.1/12345", "handle", "hdl:1721.1/12345"),
        ("info:hdl/2027/mdp.39015", "handle", "hdl:2027/mdp.39015"),
        ("urn:nbn:fi:att-2022-ice-0031", "urn", "urn:nbn:fi:att-2022-ice-0031"),
        ("URN:NBN:de:tib-77", "urn", "urn:nbn:de:tib-77"),
        (
            "urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427",
            "urn",
            "urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427",
        ),
        ("https://data.example.org/id/dataset/7", "http", "https://data.example.org/id/dataset/7"),
        ("http://www.data.example.org/id/7", "http", "http://www.data.example.org/id/7"),
    ],
)
def test_recognised(text: str, scheme: str, value: str) -> None:
    found = recognise(text, PAGE)
    assert found is not None
    assert (found.scheme, found.value, found.published) == (scheme, value, text)


@pytest.mark.parametrize(
    "text",
    [
        "EX2211-CTD",  # a local id
        "https://elsewhere.example/records/991",  # someone else's host
        "https://data.example.org/",  # the site itself, no path
        "ark:/12/x",  # a NAAN is five characters or more
        "hdl:",
        "urn:x",
        "doi:null",
        "tbd",
        "ark:/13030/has space",
        "x" * 2000,
        "",
        None,
        42,
    ],
)
def test_not_persistent(text: object) -> None:
    assert recognise(text, PAGE) is None


def test_an_own_iri_needs_the_page() -> None:
    assert recognise("https://data.example.org/id/dataset/7") is None
