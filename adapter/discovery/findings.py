"""Discovery findings: the walk's (`discover/...`) and the sitemap reader's (`sitemap/...`)."""

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

# Read by adapter.discovery.sitemap: one sitemap file's problems.
BAD_XML = FindingType(
    "sitemap/bad-xml",
    Severity.ERROR,
    "The sitemap is not well-formed XML (or is empty); entries before the error are kept.",
)
HTML = FindingType(
    "sitemap/html",
    Severity.ERROR,
    "An HTML page (often an error or login page) was served where a sitemap was expected.",
)
ENTITIES = FindingType(
    "sitemap/entities-refused",
    Severity.ERROR,
    "The sitemap declares XML entities in a DTD; sitemaps never need them, and they are "
    "the vehicle of entity-expansion and external-entity attacks, so the file is not read.",
)
UNSUPPORTED = FindingType(
    "sitemap/unsupported-format",
    Severity.ERROR,
    "The document is XML but neither a <urlset> nor a <sitemapindex> (RSS and Atom feeds are "
    "not read).",
)
WRONG_NAMESPACE = FindingType(
    "sitemap/wrong-namespace",
    Severity.WARNING,
    "The sitemap's <url> or <sitemap> elements are not in the sitemaps.org 0.9 namespace; "
    "the file was read anyway.",
)
BAD_GZIP = FindingType(
    "sitemap/bad-gzip",
    Severity.ERROR,
    "The gzip-compressed sitemap is broken or cut short; entries before the break are kept.",
)
TOO_LARGE = FindingType(
    "sitemap/too-large",
    Severity.ERROR,
    "The sitemap passes the protocol's 50 MB (uncompressed) limit; it was read up to the cap "
    "and the landing pages after it are missed. Split it into several files under an index.",
)
TOO_MANY = FindingType(
    "sitemap/too-many-entries",
    Severity.ERROR,
    "The sitemap lists more than the protocol's 50,000 URLs (or sitemaps); the rest are missed. "
    "Split it into several files under an index.",
)
LOC_TOO_LONG = FindingType(
    "sitemap/loc-too-long",
    Severity.WARNING,
    "A <loc> is longer than 2,048 characters (the protocol's limit); it was skipped.",
)
LOC_NOT_HTTP = FindingType(
    "sitemap/loc-not-http",
    Severity.WARNING,
    "A <loc> is not an http or https URL; it was skipped.",
)
LOC_RELATIVE = FindingType(
    "sitemap/loc-relative",
    Severity.WARNING,
    "A <loc> is empty or relative; the protocol requires full URLs starting with the scheme. "
    "It was skipped.",
)
BAD_LASTMOD = FindingType(
    "sitemap/bad-lastmod",
    Severity.WARNING,
    "A <lastmod> is not a W3C datetime (e.g. 2024-05-01 or 2024-05-01T10:00:00Z); the entry "
    "is kept without it, so changes to that page cannot be detected from the sitemap.",
)
BAD_SIGNMAP_LINK = FindingType(
    "sitemap/bad-signmap-link",
    Severity.WARNING,
    "A Signmap <rs:ln> lacks its mandatory href or rel attribute; it was skipped.",
)
MORE = FindingType(
    "sitemap/more-findings",
    Severity.INFO,
    "The same problem repeats in this file; only the first ten are listed one by one.",
)
