"""The one place the stages are composed: one landing page in, one report out.

`compose.check_landing_page` is what `adapter check-dataset` and the sync run for every page;
`landing` fetches the page into the report, `read` gives the Datasets of a response (embedded,
or in the JSON-LD document the page links to), and `wholeness` says whether a checked page was
read whole (and so which series it still publishes). The names callers use are here.
"""

from adapter.pipeline.compose import INTERNAL_ERROR, CheckOptions, check_landing_page
from adapter.pipeline.landing import fetch_failure, fetch_page, get_page, status_finding
from adapter.pipeline.read import LINKED_JSONLD, LINKED_JSONLD_UNREACHABLE, linked_failure
from adapter.pipeline.wholeness import listed_series, read_whole

__all__ = [
    "INTERNAL_ERROR",
    "LINKED_JSONLD",
    "LINKED_JSONLD_UNREACHABLE",
    "CheckOptions",
    "check_landing_page",
    "fetch_failure",
    "fetch_page",
    "get_page",
    "linked_failure",
    "listed_series",
    "read_whole",
    "status_finding",
]
