"""Signposting stage of the pipeline (filled in by the signposting work, issue 3).

`attach` reads every typed link for a landing page (HTTP Link headers, HTML
<link>, linksets, Signmap links), stores them on the report and adds the
cross-check findings for each Dataset.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.fetch import Fetcher
from adapter.models import DatasetReport, Fetched, Link


def attach(
    report: DatasetReport,
    fetched: Fetched,
    fetcher: Fetcher,
    sitemap_links: Sequence[Link] = (),
) -> None:
    """Fill `report.signposts` and add signposting findings to the report and its Datasets."""
    report.signposts.extend(sitemap_links)
