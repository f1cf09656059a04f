"""Discovery findings: the FindingTypes `adapter.discover` reports, codes unchanged."""

from __future__ import annotations

from adapter.findings import FindingType, Severity

NO_SITEMAPS = FindingType(
    "discover/no-sitemap",
    Severity.ERROR,
    "No sitemap could be found: robots.txt lists no Sitemap line and there is no sitemap.xml "
    "at the entry URL or the host root. Add `Sitemap: <url>` to robots.txt.",
)
NOT_LISTED = FindingType(
    "discover/sitemap-not-in-robots",
    Severity.WARNING,
    "robots.txt lists no Sitemap line; a sitemap.xml was found by guessing its place. List it "
    "in robots.txt so harvesters find it.",
)
SITEMAP_FAILED = FindingType(
    "discover/sitemap-unavailable",
    Severity.ERROR,
    "A sitemap could not be read (HTTP error status); the landing pages it lists are missed.",
)
CYCLE = FindingType(
    "discover/sitemap-cycle",
    Severity.WARNING,
    "A sitemap index lists itself or one of the indexes that led to it; the loop was cut.",
)
TOO_DEEP = FindingType(
    "discover/sitemap-too-deep",
    Severity.ERROR,
    "Sitemap indexes are nested deeper than the limit; the deeper ones were not read and their "
    "landing pages are missed.",
)
TOO_MANY_SITEMAPS = FindingType(
    "discover/too-many-sitemaps",
    Severity.ERROR,
    "More sitemap files than the limit for one discovery; the rest were not read and their "
    "landing pages are missed.",
)
OUT_OF_SCOPE = FindingType(
    "discover/out-of-scope",
    Severity.WARNING,
    "A sitemap lists a URL on another host. The sitemaps protocol allows that only when the "
    "other host's robots.txt lists the sitemap (cross-submission); the node configuration can "
    "also allow the host. The URL was skipped.",
)
SITEMAP_READ = FindingType(
    "discover/sitemap-read",
    Severity.INFO,
    "One sitemap file was read: its kind, entries, duplicates and filtered URLs.",
)
