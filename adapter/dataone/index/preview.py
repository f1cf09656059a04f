"""What DataONE search shows of a Dataset, in a few lines a repository manager reads.

From the index fields (`compute.dataone_index`): title, first author, the first
words of the abstract, dates, place, keywords, licence and funding, each a
label and a line of text ("-" where the index would hold nothing), shared by
the text report and the check page's preview card.
"""

from __future__ import annotations

from collections.abc import Mapping

ABSTRACT_WORDS = 30
MAX_KEYWORDS = 12

IndexValues = Mapping[str, str | list[str]]


def _all(fields: IndexValues, name: str) -> list[str]:
    value = fields.get(name)
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _first(fields: IndexValues, name: str) -> str | None:
    found = _all(fields, name)
    return found[0] if found else None


def _day(solr: str | None) -> str | None:
    return solr[:10] if solr else None


def _listed(items: list[str], most: int) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" (and {len(items) - most} more)" if len(items) > most else "")


def preview(fields: IndexValues) -> list[tuple[str, str]]:
    """(label, text) rows of what DataONE search would show; "-" where it shows nothing."""
    return [
        ("title", _first(fields, "title") or "-"),
        ("author", _author(fields)),
        ("abstract", _abstract(fields)),
        ("dates", _dates(fields)),
        ("place", _place(fields)),
        ("keywords", _listed(_all(fields, "keywords"), MAX_KEYWORDS) or "-"),
        ("licence", _licence(fields)),
        ("funding", _funding(fields)),
    ]


def _author(fields: IndexValues) -> str:
    author = _first(fields, "author")
    if author is None:
        return "-"
    others = len(_all(fields, "origin")) - 1
    return author + (f" (and {others} more)" if others > 0 else "")


def _abstract(fields: IndexValues) -> str:
    words = (_first(fields, "abstract") or "").split()
    if not words:
        return "-"
    return " ".join(words[:ABSTRACT_WORDS]) + (" ..." if len(words) > ABSTRACT_WORDS else "")


def _dates(fields: IndexValues) -> str:
    parts = []
    published = _day(_first(fields, "pubDate"))
    if published:
        parts.append(f"published {published}")
    begin, end = _day(_first(fields, "beginDate")), _day(_first(fields, "endDate"))
    if begin or end:
        parts.append(f"covers {begin or '?'} to {end or '(open)'}")
    return "; ".join(parts) or "-"


def _place(fields: IndexValues) -> str:
    parts = []
    box = [_first(fields, n) for n in ("southBoundCoord", "westBoundCoord")]
    box += [_first(fields, n) for n in ("northBoundCoord", "eastBoundCoord")]
    if all(box):
        south, west, north, east = box
        parts.append(f"box S {south} W {west} N {north} E {east}")
    named = _all(fields, "namedLocation")
    if named:
        parts.append(_listed(named, 3))
    return "; ".join(parts) or "-"


def _licence(fields: IndexValues) -> str:
    names = _all(fields, "licenseName")
    urls = _all(fields, "licenseUrl")
    named = [n for n in names if n not in urls]
    if named:
        return _listed(named, 2) + (f" <{urls[0]}>" if urls else "")
    return _listed(urls, 2) or "-"


def _funding(fields: IndexValues) -> str:
    parts = [_listed(_all(fields, "funderName"), 3)]
    awards = _all(fields, "awardNumber") or _all(fields, "awardTitle")
    if awards:
        parts.append("award " + _listed(awards, 3))
    return "; ".join(p for p in parts if p) or "-"
