"""Signposting stage of the pipeline (filled in by the signposting work, issue 3).

`collect` reads every typed link for a landing page (HTTP Link headers, HTML
<link>, linksets, Signmap links) into `report.signposts`; `crosscheck` holds
them against each Dataset once the Datasets are known.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.fetch import Fetcher
from adapter.limits import DEFAULT_LIMITS, Limits
from adapter.models import DatasetReport, Fetched, Link


def collect(
    report: DatasetReport,
    fetched: Fetched,
    fetcher: Fetcher,
    sitemap_links: Sequence[Link] = (),
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Fill `report.signposts` and add link-level findings to `report.findings`."""
    report.signposts.extend(sitemap_links)


def crosscheck(
    report: DatasetReport,
    fetcher: Fetcher,
    *,
    follow: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Add findings where the signposts and each Dataset of `report` disagree."""
