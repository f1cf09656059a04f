"""Whether a checked page was read whole, and so which series it still publishes: the sync
archives a series only a page read whole no longer lists, so a Dataset hidden in what could
not be read is never archived.
"""

from __future__ import annotations

from adapter.dataone.records import Candidate, metadata_series_id, possible_series_ids
from adapter.dataone.resourcemap import series_id as map_series_id
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


def listed_series(report: DatasetReport, candidates: list[Candidate]) -> frozenset[str] | None:
    """The series ids the page still publishes, or None when that is not known.

    Known when the page answered 200 and its JSON-LD was read whole: every series
    each Dataset may be filed under (harvestable or not, under any profile or
    scheme: a Dataset that fails a check, or a stricter profile, keeps its
    series), their resource maps, the metadata copies they link in a DataONE format
    (fetched or not), and the candidates. Any other live series of the page has
    lost its source and is archived (a Dataset removed, a DOI changed, a copy
    no longer linked)."""
    if report.not_modified or report.fetched is None or report.status != 200:
        return None
    if not read_whole(report):
        return None
    listed = {c.series_id for c in candidates}
    for dataset in report.datasets:
        for sid in possible_series_ids(dataset):
            listed |= {sid, map_series_id(sid)}
            for ref in dataset.encoding:
                listed |= {metadata_series_id(sid, f) for f in ref.encoding_format}
    return frozenset(listed)
