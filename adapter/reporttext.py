"""The human report: the verdict first, then the Datasets, the findings by stage, the links.

Written for a repository manager reading a terminal: every finding shows its
severity, its code (to look up with `adapter findings`), the message and where.
"""

from __future__ import annotations

from adapter.findings import Finding, Severity
from adapter.jsonld.framed import first_literal
from adapter.models import DatasetReport, DatasetResult, MediaObjectRef

STAGES = ("fetch", "extract", "normalize", "dataone", "signposting")
_STAGE_TITLES = {
    "fetch": "fetch (the landing page over HTTP)",
    "robots": "robots (robots.txt)",
    "extract": "extract (JSON-LD blocks in the page)",
    "normalize": "normalize (JSON-LD to a schema.org Dataset)",
    "dataone": "dataone (what DataONE needs from the Dataset)",
    "signposting": "signposting (typed links vs the Dataset)",
}
_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def render_text(report: DatasetReport) -> str:
    lines = [_verdict(report), *_summary(report)]
    for i, dataset in enumerate(report.datasets, start=1):
        lines += ["", *_dataset_lines(dataset, i, len(report.datasets))]
    lines += ["", *_findings_lines(report)]
    lines += ["", *_signpost_lines(report)]
    return "\n".join(lines) + "\n"


def _verdict(report: DatasetReport) -> str:
    if report.not_modified:
        return f"NOT MODIFIED  {report.url}  (HTTP 304: unchanged since the last check)"
    word = "HARVESTABLE" if report.harvestable else "NOT HARVESTABLE"
    return f"{word}  {report.url}"


def _summary(report: DatasetReport) -> list[str]:
    out: list[str] = []
    if report.final_url and report.final_url != report.url:
        out.append(f"  reached {report.final_url}")
    if len(report.path) > 2 or (report.path and report.path[-1] != report.final_url):
        out.append(f"  path: {' -> '.join(report.path)}")
    every = report.all_findings()
    counts = {s: sum(f.severity is s for f in every) for s in Severity}
    status = f"HTTP {report.status}" if report.status is not None else "no HTTP answer"
    datasets = _plural(len(report.datasets), "Dataset")
    if len(report.datasets) > 1:
        datasets += f" ({sum(d.harvestable for d in report.datasets)} harvestable)"
    out.append(
        f"  {status}; {datasets}; "
        f"{_plural(counts[Severity.ERROR], 'error')}, "
        f"{_plural(counts[Severity.WARNING], 'warning')}, {counts[Severity.INFO]} info"
    )
    blocking = list(dict.fromkeys(f.code for f in every if f.severity is Severity.ERROR))
    if blocking and not report.not_modified:
        out.append(f"  to fix: {', '.join(blocking)}")
    return out


def _dataset_lines(d: DatasetResult, index: int, count: int) -> list[str]:
    name = first_literal(d.framed, "name") or "(no name)"
    verdict = "harvestable" if d.harvestable else "not harvestable"
    label = f"Dataset {index} of {count}" if count > 1 else "Dataset"
    out = [f"{label}: {name}  [{verdict}]"]
    out.append(f"  @id            {d.id or '-'}")
    out.append(f"  DOI            {d.doi or '-'}")
    out.append(f"  identifiers    {', '.join(d.identifiers) or '-'}")
    out += _refs("encoding", d.encoding)
    out += _refs("distributions", d.distributions)
    return out


def _refs(title: str, refs: list[MediaObjectRef]) -> list[str]:
    if not refs:
        return [f"  {title:<14} -"]
    out = []
    for i, r in enumerate(refs):
        head = title if i == 0 else ""
        formats = ", ".join(r.encoding_format) or "no encodingFormat"
        via = f" via {r.property}" if r.property == "subjectOf" else ""
        out.append(f"  {head:<14} {r.content_url or '(no contentUrl)'}  [{formats}]{via}")
    return out


def _findings_lines(report: DatasetReport) -> list[str]:
    tagged: list[tuple[str, Finding]] = [("", f) for f in report.findings]
    several = len(report.datasets) > 1
    for i, d in enumerate(report.datasets, start=1):
        tag = f"Dataset {i}" if several else "Dataset"
        tagged += [(tag, f) for f in d.findings]
    by_stage: dict[str, list[tuple[str, Finding]]] = {}
    for tag, f in tagged:
        by_stage.setdefault(f.code.split("/", 1)[0], []).append((tag, f))
    reached = _reached(report)
    out = ["Findings by stage"]
    order = [*STAGES, *sorted(set(by_stage) - set(STAGES))]
    for stage in order:
        items = by_stage.get(stage, [])
        if not items:
            if stage in STAGES:
                state = "ok" if stage in reached else "not reached"
                out.append(f"  {_STAGE_TITLES[stage]}: {state}")
            continue
        out.append(f"  {_STAGE_TITLES.get(stage, stage)}:")
        items.sort(key=lambda tf: _SEVERITY_ORDER[tf[1].severity])
        for tag, f in items:
            out.append(f"    {f.severity.upper():<8} {f.code}")
            out.append("             " + f.message.replace("\n", "\n             "))
            where = ", ".join(x for x in (tag, f"at {f.where}" if f.where else "") if x)
            if where:
                out.append(f"             ({where})")
    return out


def _reached(report: DatasetReport) -> set[str]:
    if report.fetched is None or not 200 <= (report.status or 0) < 300:
        return {"fetch"}
    if not report.datasets:
        return {"fetch", "extract", "normalize", "signposting"}
    return set(STAGES)


def _signpost_lines(report: DatasetReport) -> list[str]:
    from adapter.signposttable import signpost_lines  # the signposting area owns the table

    return signpost_lines(report)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
