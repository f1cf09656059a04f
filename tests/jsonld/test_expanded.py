"""Expanded JSON-LD needs no @context: every term is already an IRI."""

from __future__ import annotations

import json

from adapter.web.checking import Checker

PAGE = "https://r.example/ds/1"


def codes(doc: object) -> tuple[list[str], list[str | None]]:
    report = Checker().check_content(json.dumps(doc).encode(), PAGE)
    return [f.code for f in report.all_findings()], [d.doi for d in report.datasets]


def test_an_expanded_document_is_read_without_a_context_finding() -> None:
    expanded = [
        {
            "@id": PAGE,
            "@type": ["http://schema.org/Dataset"],
            "http://schema.org/name": [{"@value": "Expanded"}],
            "http://schema.org/identifier": [{"@value": "doi:10.5555/e.1"}],
        }
    ]
    found, dois = codes(expanded)
    assert "normalize/no-context" not in found and dois == ["10.5555/e.1"]


def test_compact_terms_without_a_context_still_need_one() -> None:
    found, _ = codes({"@type": "Dataset", "name": "Compact"})
    assert "normalize/no-context" in found
