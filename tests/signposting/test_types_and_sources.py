"""An AboutPage type link is a landing page marked, not a page about something else; one
source listing a record in two types is content negotiation, not a conflict."""

from __future__ import annotations

from adapter.models import Link
from adapter.signposting.crosscheck import _cardinality
from adapter.signposting.sources import check_sources

PAGE = "https://repo.example.org/ds/1"
REC = "https://repo.example.org/ds/1/metadata"


def link(rel: str, href: str, source: str = "header", type_: str | None = None) -> Link:
    return Link(href=href, rel=rel, anchor=PAGE, source=source, type=type_)  # type: ignore[arg-type]


def test_an_aboutpage_alone_asks_for_the_dataset_type_without_calling_it_not_a_dataset() -> None:
    found = _cardinality([link("type", "https://schema.org/AboutPage")], PAGE)
    codes = [f.code for f in found]
    assert "signposting/type-not-dataset" not in codes
    [missing] = [f for f in found if f.code == "signposting/type-missing"]
    assert "https://schema.org/Dataset" in missing.message
    other = _cardinality([link("type", "https://schema.org/ScholarlyArticle")], PAGE)
    assert "signposting/type-not-dataset" in [f.code for f in other]


def test_one_header_offering_a_record_in_two_types_is_not_a_conflict() -> None:
    one_source = [
        link("describedby", REC, type_="application/xml"),
        link("describedby", REC, type_="application/ld+json"),
    ]
    assert "signposting/conflicting-attributes" not in [
        f.code for f in check_sources(one_source, PAGE)
    ]
    two_sources = [
        link("describedby", REC, "header", "application/xml"),
        link("describedby", REC, "html", "application/ld+json"),
    ]
    assert "signposting/conflicting-attributes" in [
        f.code for f in check_sources(two_sources, PAGE)
    ]
