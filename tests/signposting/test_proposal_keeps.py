"""The proposed signposting keeps every link the page publishes, as it spells it, and adds
only what is missing; when nothing is, it says so (a PANGAEA-like page, pasted)."""

from __future__ import annotations

import json

from adapter.web.checking import Checker
from adapter.web.view import report_view

PAGE = "https://doi.pangaea.de/10.1594/PANGAEA.123456"
DOI_URL = "https://doi.org/10.1594/PANGAEA.123456"
ISO = f"{PAGE}?format=metadata_iso19139"
DATACITE = f"{PAGE}?format=metadata_datacite4"
DATA = f"{PAGE}?format=textfile"


def page(*, distribution: bool, licence: str) -> bytes:
    dataset = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "@id": DOI_URL,
        "identifier": DOI_URL,
        "name": "Sea surface temperature at station 1",
        "description": "Hourly temperature, 2019.",
        "url": PAGE,
        "license": licence,
        "encoding": {
            "@type": "MediaObject",
            "contentUrl": ISO,
            "encodingFormat": "http://www.isotc211.org/2005/gmd",
            "dateModified": "2020-01-01",
        },
    }
    if distribution:
        dataset["distribution"] = {
            "@type": "DataDownload",
            "contentUrl": DATA,
            "encodingFormat": "text/tab-separated-values",
        }
    links = [
        f'<link rel="cite-as" href="{DOI_URL}">',
        '<link rel="type" href="https://schema.org/Dataset">',
        '<link rel="type" href="https://schema.org/AboutPage">',
        '<link rel="license" href="https://creativecommons.org/licenses/by/4.0/">',
        f'<link rel="describedby" href="{ISO}" type="application/xml" '
        'profile="http://www.isotc211.org/2005/gmd">',
        f'<link rel="describedby" href="{DATACITE}" type="application/xml">',
    ]
    return (
        "<!DOCTYPE html><html><head><title>x</title>"
        + "".join(links)
        + f'<script type="application/ld+json">{json.dumps(dataset)}</script>'
        + "</head><body></body></html>"
    ).encode()


def test_the_published_links_stay_and_only_the_missing_one_is_added() -> None:
    licence = "https://creativecommons.org/licenses/by/3.0/"  # the page's own header says 4.0
    report = Checker().check_content(page(distribution=True, licence=licence), PAGE)
    view = report_view(report)
    assert view.proposal is not None
    header = view.proposal.link_header
    for kept in (DOI_URL, ISO, DATACITE, "https://creativecommons.org/licenses/by/4.0/"):
        assert f"<{kept}>" in header, kept
    assert DOI_URL.lower() not in header  # the DOI keeps the page's spelling
    assert licence not in header  # the page's licence is not replaced
    assert view.proposal.kept == 6
    assert view.proposal.added == [
        f'<link rel="item" href="{DATA}" type="text/tab-separated-values">'
    ]
    assert [r.rel for r in view.signposts].count("cite-as") == 1  # no lower-cased second row


def test_when_nothing_is_missing_the_proposal_says_so() -> None:
    licence = "https://creativecommons.org/licenses/by/4.0/"
    report = Checker().check_content(page(distribution=False, licence=licence), PAGE)
    view = report_view(report)
    assert view.proposal is not None
    assert view.proposal.added == [] and not view.proposal.needed
    proposal = [f.message for f in report.findings if f.code == "signposting/proposal"]
    assert not proposal or "Nothing is missing" in proposal[0]
