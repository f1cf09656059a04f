"""The DOI normalizer: every spelling in the wild gives the same lowercase 10.x/y."""

from __future__ import annotations

import string
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.doi import doi_uri, doi_url, is_placeholder, looks_like_doi_attempt, normalize_doi

# A DOI suffix: visible characters; '%' is left out because a percent-encoded
# form is decoded (no registered DOI we know of has a literal '%XX' in it).
_suffix_chars = st.characters(
    min_codepoint=33,
    max_codepoint=0x2FFF,
    blacklist_characters="%",
    blacklist_categories=("Z", "C"),
)
dois = st.builds(
    lambda reg, sub, suffix: f"10.{reg}{sub}/{suffix}",
    st.integers(min_value=1000, max_value=999_999_999).map(str),
    st.sampled_from(["", ".1", ".20.3"]),
    st.text(_suffix_chars, min_size=1, max_size=40).filter(lambda s: s[-1] not in ".,;"),
)

_ASCII_UPPER = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)

SPELLINGS = [
    "{d}",
    "doi:{d}",
    "DOI:{d}",
    "doi: {d}",
    "DOI: {d}",
    "info:doi/{d}",
    "urn:doi:{d}",
    "https://doi.org/{d}",
    "http://doi.org/{d}",
    "HTTPS://DOI.ORG/{d}",
    "https://dx.doi.org/{d}",
    "http://dx.doi.org/{d}",
    "https://www.doi.org/{d}",
    "doi.org/{d}",
    "  {d}  ",
    "https://doi.org/{q}",
    "doi:{q}",
]


@given(dois, st.sampled_from(SPELLINGS), st.booleans())
def test_every_spelling_round_trips(doi: str, spelling: str, upper: bool) -> None:
    text = spelling.format(d=doi, q=quote(doi, safe=""))
    if upper:
        text = text.translate(_ASCII_UPPER)
    assert normalize_doi(text) == doi.translate(_ASCII_LOWER)


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
@given(dois)
def test_canonical_forms_round_trip(doi: str) -> None:
    canonical = normalize_doi(doi)
    assert canonical is not None
    assert normalize_doi(doi_uri(canonical)) == canonical
    assert normalize_doi(doi_url(canonical)) == canonical
    assert canonical == canonical.translate(_ASCII_LOWER)


@given(st.text(max_size=200))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    result = normalize_doi(text)
    assert result is None or result.startswith("10.")
    is_placeholder(text)
    looks_like_doi_attempt(text)


@given(
    st.one_of(st.none(), st.integers(), st.lists(st.text()), st.dictionaries(st.text(), st.text()))
)
def test_non_text_is_not_a_doi(value: object) -> None:
    assert normalize_doi(value) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10.5061/DRYAD.HM55B", "10.5061/dryad.hm55b"),
        ("https://doi.org/10.5066/F7VX0DMQ", "10.5066/f7vx0dmq"),
        ("doi:10.1000.10/ABC(1)", "10.1000.10/abc(1)"),
        ("https://doi.org/10.5061%2Fdryad.x", "10.5061/dryad.x"),
        ("doi:10.5061/dryad.x.", "10.5061/dryad.x"),
    ],
)
def test_known_spellings(text: str, expected: str) -> None:
    assert normalize_doi(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "doi:null",
        "",
        "Dataset of fish counts",
        "10.5061",
        "10./x",
        "doi:",
        "ark:/13030/tf5p30086k",
        "https://example.org/10.5061/x",
        "11.5061/x",
        "10.5061/with space",
        "x" * 2000,
    ],
)
def test_not_dois(text: str) -> None:
    assert normalize_doi(text) is None


@pytest.mark.parametrize("text", ["doi:null", "DOI: NULL", "", "  ", "n/a", "None", "doi:"])
def test_placeholders(text: str) -> None:
    assert is_placeholder(text)


def test_doi_attempts_are_told_apart_from_free_text() -> None:
    assert looks_like_doi_attempt("doi:10.5061")
    assert looks_like_doi_attempt("https://doi.org/dryad.x")
    assert not looks_like_doi_attempt("Dataset of fish counts")
    assert not looks_like_doi_attempt("10.5061/dryad.x")
