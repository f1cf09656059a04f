"""Whether a checked page was read whole: the sync archives a series only a page read
whole no longer lists, so a Dataset hidden in what could not be read is never archived.
"""

from __future__ import annotations

from adapter.findings import Stage
from adapter.jsonld import normalize as normalize_stage
from adapter.models import DatasetReport
from adapter.page import findings as page_findings
from adapter.pipeline.read import LINKED_JSONLD
from adapter.render import findings as render_findings

# a page read whole may still carry these extraction findings; any other fetch/,
# extract/ or pipeline/ finding, or unreadable JSON-LD, means a Dataset may hide
# in what could not be read, so the page's series are all kept
_READ_WHOLE_EXTRACT = frozenset(
    t.code
    for t in (page_findings.NO_JSONLD, page_findings.REPAIRED_JSON, LINKED_JSONLD,
              page_findings.NON_JSONLD_MARKUP)
)  # fmt: skip
_UNREADABLE_JSONLD = frozenset(
    t.code
    for t in (
        normalize_stage.INVALID_JSONLD,
        normalize_stage.REMOTE_CONTEXT,
        normalize_stage.EMBEDDING_TOO_LARGE,
    )
)
_NOT_READ_WHOLE = frozenset({Stage.FETCH, Stage.ROBOTS, Stage.PIPELINE})
# rendering that did not finish (or lost a request): its scripts may have had more to write
_RENDERED_PART = frozenset(
    t.code for t in (render_findings.RENDER_FAILED, render_findings.BUDGET_SPENT,
                     render_findings.REQUEST_FAILED)
)  # fmt: skip


def read_whole(report: DatasetReport) -> bool:
    """Whether every JSON-LD of the page was read, so no Dataset hides in what was not
    (the sync archives a series only a page read whole no longer lists)."""
    for f in report.all_findings():
        if f.stage in _NOT_READ_WHOLE or f.code in _UNREADABLE_JSONLD or f.code in _RENDERED_PART:
            return False
        if f.stage == Stage.EXTRACT and f.code not in _READ_WHOLE_EXTRACT:
            return False
    return True
