"""The two errors that block most pages come with JSON-LD to write, filled from the page."""

from __future__ import annotations

import json

from adapter.report.text import render_text
from adapter.web.checking import Checker
from adapter.web.view import report_view

PAGE = "https://repo.example.org/ds/7"
ISO = f"{PAGE}?format=iso19139"
FILES = [f"https://repo.example.org/files/7/{n}.csv" for n in ("a", "b")]


def html(links: list[str]) -> bytes:
    dataset = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "@id": PAGE,
        "identifier": "https://doi.org/10.5555/ex.7",
        "name": "Core logs",
        "description": "Logs of seven cores.",
        "url": PAGE,
        "dateModified": "2024-03-01",
    }
    return (
        "<!DOCTYPE html><html><head><title>x</title>"
        + "".join(links)
        + f'<script type="application/ld+json">{json.dumps(dataset)}</script>'
        + "</head><body></body></html>"
    ).encode()


def snippet(text: str, after: str) -> object:
    """The JSON object the example proposes (a property inside the Dataset's braces)."""
    start = text.index(after) + len(after)
    body = text[start:].split("\n\n", 1)[0]
    return json.loads("{" + body.split("\n", 1)[1] + "}")


def test_the_page_own_links_fill_the_encoding_and_distribution_examples() -> None:
    links = [
        f'<link rel="describedby" href="{ISO}" type="application/xml">',
        *(f'<link rel="item" href="{f}" type="text/csv">' for f in FILES),
    ]
    report = Checker().check_content(html(links), PAGE)
    view = report_view(report)
    found = {f.code: f.example for s in view.stages for f in s.findings if f.example}
    encoding = found["dataone/encoding-missing"]
    assert encoding.startswith("The page already links its metadata record")
    assert snippet(encoding, "as:") == {
        "encoding": {
            "@type": "MediaObject",
            "contentUrl": ISO,
            "encodingFormat": "http://www.isotc211.org/2005/gmd",
            "dateModified": "2024-03-01",
        }
    }
    distribution = found["dataone/distribution-missing"]
    assert snippet(distribution, "as:") == {
        "distribution": [
            {"@type": "DataDownload", "contentUrl": f, "encodingFormat": "text/csv"} for f in FILES
        ]
    }
    text = render_text(report)
    assert f'"contentUrl": "{ISO}"' in text and f'"contentUrl": "{FILES[1]}"' in text


def test_with_nothing_on_the_page_the_example_says_so() -> None:
    report = Checker().check_content(html([]), PAGE)
    view = report_view(report)
    found = {f.code: f.example for s in view.stages for f in s.findings if f.example}
    assert found["dataone/encoding-missing"].startswith("The page links no metadata record")
    assert "RECORD.xml" in found["dataone/encoding-missing"]
    assert found["dataone/distribution-missing"].startswith("The page links no data file")
