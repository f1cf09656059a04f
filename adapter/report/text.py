"""A `DatasetReport` as a repository manager reads it: text, the verdict first.

The text puts the verdict first, then the Datasets, the findings by stage and
the links: every finding shows its severity, its code (to look up with
`adapter findings`), the message and where. The signposts are a table: one row
per statement (anchor, rel, href) with all its sources, what the Dataset says
for the same relation and the findings about it; rows the Dataset has but the
page does not link read "(no link)", so gaps show as plainly as disagreements.
Links about other resources (the link set's item/metadata contexts) follow in
their own table; other relations (stylesheet, icon, ...) are only counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.dataone.examples import example_for
from adapter.dataone.index.preview import preview
from adapter.dataone.soso.codes import ABSENT as SOSO_ABSENT
from adapter.dataone.soso.codes import PROPERTIES as SOSO_PROPERTIES
from adapter.doi import doi_url
from adapter.findings import Finding, Severity, Stage
from adapter.jsonld.framed import first_literal
from adapter.manydatasets import Many, folded_codes, numbers, summarize
from adapter.models import DatasetReport, DatasetResult, MediaObjectRef
from adapter.page.findings import SITEMAP_GIVEN
from adapter.report.verdicts import blockers, could_not_check, to_fix
from adapter.signposting.crosscheck import primary_dataset
from adapter.signposting.datasetlinks import dataset_links
from adapter.signposting.links import SIGNPOSTING_RELS, Signpost, anchored_at, group, url_key
from adapter.signposting.stage import landing_urls

# The human report
STAGES = (
    Stage.FETCH,
    Stage.EXTRACT,
    Stage.NORMALIZE,
    Stage.DATAONE,
    Stage.SOSO,
    Stage.SIGNPOSTING,
)
_STAGE_TITLES: dict[str, str] = {
    Stage.FETCH: "fetch (the landing page over HTTP)",
    Stage.ROBOTS: "robots (robots.txt)",
    Stage.RENDER: "render (the page's JavaScript run in a browser)",
    Stage.EXTRACT: "extract (JSON-LD blocks in the page)",
    Stage.NORMALIZE: "normalize (JSON-LD to a schema.org Dataset)",
    Stage.DATAONE: "dataone (what DataONE needs from the Dataset)",
    Stage.SOSO: "soso (science-on-schema.org recommendations; "
    "blocking only under the soso profile)",
    Stage.SIGNPOSTING: "signposting (typed links vs the Dataset)",
}
SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def render_text(report: DatasetReport) -> str:
    lines = [_verdict(report), *_summary(report)]
    many = summarize(report.datasets)
    if many is not None:  # totals first, a line per Dataset, the few shown whole below
        lines += ["", *many_lines(report.datasets, many)]
    for i, dataset in enumerate(report.datasets, start=1):
        if many is not None and i not in many.whole:
            continue
        lines += ["", *_dataset_lines(dataset, i, len(report.datasets))]
        lines += checklist_lines(dataset, report.profile)
        lines += search_lines(dataset)
    lines += ["", *_findings_lines(report, many)]
    lines += ["", *signpost_lines(report)]
    return "\n".join(lines) + "\n"


def many_lines(datasets: Sequence[DatasetResult], many: Many) -> list[str]:
    """The totals of a page with many Datasets, then one verdict line per Dataset."""
    out = [
        f"{many.total} Datasets: {many.harvestable} harvestable, "
        f"{many.not_harvestable} not harvestable",
        "  findings across them (Datasets that have each, the first of them):",
    ]
    width = max(len(t.code) for t in many.codes) if many.codes else 0
    for t in many.codes:
        out.append(
            f"    {t.severity.upper():<8} {t.code:<{width}}  {t.datasets:>4} of {many.total}"
            f"  (first: Dataset {t.first})"
        )
    shown = ", ".join(str(n) for n in sorted(many.whole))
    out += ["", f"Each Dataset (shown whole below: {shown}; the JSON report has every one)"]
    for i, d in enumerate(datasets, start=1):
        verdict = "harvestable" if d.harvestable else "not harvestable"
        name = first_literal(d.framed, "name") or "(no name)"
        doi = f"  doi:{d.doi}" if d.doi else ""
        why = blockers(d)
        tail = f"  <- {', '.join(why)}" if why else ""
        out.append(f"  {i:>4}. [{verdict}] {name}{doi}{tail}")
    return out


def _verdict(report: DatasetReport) -> str:
    if report.not_modified:
        return f"NOT MODIFIED  {report.url}  (HTTP 304: unchanged since the last check)"
    why = could_not_check(report)
    if why is not None and not report.harvestable:
        return f"COULD NOT CHECK  {report.url}\n  why: {why.message} ({why.code})"
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
    if report.rendered:
        out.append("  rendered: read from the page as a browser built it (its JavaScript run)")
    status = f"HTTP {report.status}" if report.status is not None else "no HTTP answer"
    datasets = _plural(len(report.datasets), "Dataset")
    if len(report.datasets) > 1:
        datasets += f" ({sum(d.harvestable for d in report.datasets)} harvestable)"
    out.append(
        f"  {status}; {datasets}; "
        f"{_plural(counts[Severity.ERROR], 'error')}, "
        f"{_plural(counts[Severity.WARNING], 'warning')}, {counts[Severity.INFO]} info"
    )
    blocking = to_fix(report)
    if blocking and not report.not_modified and could_not_check(report) is None:
        out.append(f"  to fix: {', '.join(blocking)}")
    out += _recommended(every)
    return out


def _recommended(every: Sequence[Finding]) -> list[str]:
    """One line for the soso/ findings: the properties to improve (warnings), to consider."""
    improve: dict[str, None] = {}
    consider: dict[str, None] = {}
    for f in every:
        prop = SOSO_PROPERTIES.get(f.code)
        if prop == "distribution":
            prop = "distribution checksums"
        if prop is not None:
            (improve if f.severity is Severity.WARNING else consider)[prop] = None
    consider = {p: None for p in consider if p not in improve}
    parts = [f"improve {', '.join(improve)}" if improve else ""]
    parts.append(f"consider {', '.join(consider)}" if consider else "")
    said = "; ".join(p for p in parts if p)
    return [f"  science-on-schema.org: {said}"] if said else []


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


def checklist_lines(d: DatasetResult, profile: str) -> list[str]:
    """The profile's requirements, each met ([x]) or not ([ ]), with the codes that say why."""
    if not d.checklist:
        return []
    blocking = [i for i in d.checklist if i.blocking]
    met = sum(i.met for i in blocking)
    out = [f"  profile {profile}: {met} of {len(blocking)} requirements met"]
    for item in d.checklist:
        mark = "[x]" if item.met else "[ ]"
        kind = "" if item.blocking else " (recommended)"
        codes = f"  <- {', '.join(item.codes)}" if item.codes else ""
        out.append(f"    {mark} {item.label}{kind}{codes}")
    return out


def search_lines(d: DatasetResult) -> list[str]:
    """ "In DataONE search": what its index would show of the Dataset ("-": nothing)."""
    if not d.dataone_index:
        return []
    out = ["  In DataONE search:"]
    out += [f"    {label:<10} {text}" for label, text in preview(d.dataone_index)]
    return out


def _refs(title: str, refs: list[MediaObjectRef]) -> list[str]:
    if not refs:
        return [f"  {title:<14} -"]
    out = []
    for i, r in enumerate(refs):
        head = title if i == 0 else ""
        formats = ", ".join(r.encoding_format) or "no encodingFormat"
        if r.format_property != "encodingFormat":
            formats = f"{r.format_property}: {formats}"
        notes = [f"via {r.property}"] if r.property == "subjectOf" else []
        if r.content_url and r.link_property != "contentUrl":
            notes.append(f"from {r.link_property}, not contentUrl")
        if r.reference:
            target = f"(only a reference to {r.reference}, not on the page)"
        else:
            target = r.content_url or "(no contentUrl)"
        tail = f"  ({'; '.join(notes)})" if notes else ""
        out.append(f"  {head:<14} {target}  [{formats}]{tail}")
    return out


def findings_by_stage(
    report: DatasetReport, many: Many | None = None
) -> dict[str, list[tuple[str, Finding]]]:
    """The page's findings and those of each Dataset shown whole, tagged with whose they are,
    by stage: what the text report and the check page both list."""
    tagged: list[tuple[str, Finding]] = [("", f) for f in report.findings]
    several = len(report.datasets) > 1
    for i, d in enumerate(report.datasets, start=1):
        if many is None or i in many.whole:
            tagged += [(f"Dataset {i}" if several else "Dataset", f) for f in d.findings]
    staged: dict[str, list[tuple[str, Finding]]] = {}
    for tag, f in tagged:
        staged.setdefault(f.stage, []).append((tag, f))
    return staged


def _findings_lines(report: DatasetReport, many: Many | None = None) -> list[str]:
    staged = findings_by_stage(report, many)
    folded = folded_codes(report.datasets, many) if many is not None else {}
    reached = stages_reached(report)
    examples = worked_examples(report)
    out = ["Findings by stage"]
    order = [*STAGES, *sorted(set(staged) - set(STAGES))]
    for stage in order:
        items = staged.get(stage, [])
        if not items and stage not in folded:
            if stage in STAGES:
                state = "ok" if stage in reached else "not reached"
                out.append(f"  {_STAGE_TITLES[stage]}: {state}")
            continue
        out.append(f"  {_STAGE_TITLES.get(stage, stage)}:")
        items.sort(key=lambda tf: SEVERITY_ORDER[tf[1].severity])
        out += _grouped(items) if stage == Stage.SOSO else _finding_lines(items, examples)
        rest = folded.get(stage, {})
        for code in sorted(rest, key=lambda c: (SEVERITY_ORDER[rest[c][0]], -len(rest[c][1]), c)):
            found = rest[code][1]
            count = _plural(len(found), "other Dataset")
            out.append(f"    {'':<8} {code}: {count} ({numbers(found)})")
    return out


def worked_examples(report: DatasetReport) -> dict[int, str]:
    """id(finding) -> the JSON-LD to write, for the findings that have a worked example."""
    links = anchored_at(report.signposts, landing_urls(report))
    out: dict[int, str] = {}
    for d in report.datasets:
        for f in d.findings:
            example = example_for(f.code, d, links)
            if example:
                out[id(f)] = example
    return out


def _finding_lines(
    items: Sequence[tuple[str, Finding]], examples: dict[int, str] | None = None
) -> list[str]:
    out = []
    for tag, f in items:
        out.append(f"    {f.severity.upper():<8} {f.code}")
        message = f.message + (f"\n{examples[id(f)]}" if examples and id(f) in examples else "")
        out.append("             " + message.replace("\n", "\n             "))
        where = ", ".join(x for x in (tag, f"at {f.where}" if f.where else "") if x)
        if where:
            out.append(f"             ({where})")
    return out


_SHOWN_PER_CODE = 2  # recommendations repeated per creator or file: the rest as one line


def _grouped(items: Sequence[tuple[str, Finding]]) -> list[str]:
    """Recommendations, kept short: the properties not given on one line per severity and
    Dataset, and a code repeated many times (a creator without ORCID each) shown twice."""
    out: list[str] = []
    absent: dict[tuple[Severity, str], list[Finding]] = {}
    rest: dict[tuple[str, str], list[tuple[str, Finding]]] = {}
    for tag, f in items:
        if f.code in SOSO_ABSENT:
            absent.setdefault((f.severity, tag), []).append(f)
        else:
            rest.setdefault((tag, f.code), []).append((tag, f))
    for (severity, tag), found in absent.items():
        props = ", ".join(SOSO_PROPERTIES[f.code] for f in found)
        out.append(f"    {severity.upper():<8} not given: {props}" + (f"  ({tag})" if tag else ""))
        out.append("             " + ", ".join(f.code for f in found))
    for same in rest.values():
        out += _finding_lines(same[:_SHOWN_PER_CODE])
        more = same[_SHOWN_PER_CODE:]
        if more:
            wheres = [f.where or "?" for _, f in more]
            shown = ", ".join(wheres[:6]) + (", ..." if len(wheres) > 6 else "")
            out.append(f"    {'':<8} ... and {len(more)} more {more[0][1].code}: {shown}")
    return out


def stages_reached(report: DatasetReport) -> set[str]:
    """The stages that ran, so an empty one reads "ok" only when it really checked something.

    Without a Dataset, normalize ran only if it said something (it always does when it
    reads a block: at least normalize/no-dataset); a CSV, an XML record or a JS-built
    page gives it nothing to read.
    """
    if report.fetched is None or not 200 <= (report.status or 0) < 300:
        return {Stage.FETCH}
    if any(f.code == SITEMAP_GIVEN.code for f in report.findings):
        return {Stage.FETCH, Stage.EXTRACT}  # a sitemap is not read as a page
    if not report.datasets:
        ran = any(f.stage == Stage.NORMALIZE for f in report.findings)
        return {Stage.FETCH, Stage.EXTRACT, Stage.SIGNPOSTING} | (
            {Stage.NORMALIZE} if ran else set()
        )
    return set(STAGES)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# The signpost table
ORDER = (
    "cite-as",
    "type",
    "author",
    "license",
    "describedby",
    "item",
    "collection",
    "describes",
    "linkset",
)


def signpost_lines(report: DatasetReport) -> list[str]:
    if not report.signposts:
        return ["Signposts: none"]
    pages = landing_urls(report)
    landing = anchored_at(report.signposts, pages)
    # one grouping for both: a group's links share its anchor, so grouping the page's own
    # links alone gives the groups of all of them anchored at the page, in the same order
    grouped = [s for s in group(report.signposts) if s.rel in SIGNPOSTING_RELS]
    own_keys = {url_key(p) for p in pages if p}  # as anchored_at keys them
    page_keys = {url_key(p) for p in pages}
    own = [s for s in grouped if url_key(s.anchor) in own_keys]
    others = [s for s in grouped if url_key(s.anchor) not in page_keys]
    ignored = sorted({x.rel for x in landing if x.rel not in SIGNPOSTING_RELS})
    findings = link_findings(report)
    says = dataset_says(report, pages)
    rows: list[tuple[str, ...]] = [("rel", "target", "type / profile", "from", "findings")]
    for rel in ORDER:
        mine = [s for s in own if s.rel == rel]
        for s in mine:
            rows.append((rel, s.href, _tp(s), ", ".join(s.sources), _codes(findings, rel, s.href)))
        for i, (url, formats) in enumerate(says.get(rel, [])):
            label = rel if not mine and i == 0 else ""
            rows.append((label, f"Dataset: {url}", formats, "", _codes(findings, rel, url)))
    out = ["Signposts of the landing page (beside what the Dataset says)", *_table(rows)]
    if others:
        rows = [("anchor", "rel", "target", "type / profile", "from")]
        rows += [(s.anchor, s.rel, s.href, _tp(s), ", ".join(s.sources)) for s in others]
        out += ["", "Links about other resources (from link sets and Signmaps)", *_table(rows)]
    if ignored:
        out.append(
            f"  (also {len(ignored)} other relation(s) not used by signposting: "
            f"{', '.join(ignored)})"
        )
    return out


def _tp(s: Signpost) -> str:
    return " ".join(x for x in (s.type or "-", s.profile or "") if x)


def link_findings(report: DatasetReport) -> list[Finding]:
    """The findings a signpost row may show: the signposting stage's, and any other whose
    `where` names a link (`rel=describedby https://...`: its linked document failed)."""
    return [
        f
        for f in report.all_findings()
        if f.stage == Stage.SIGNPOSTING or (f.where or "").startswith("rel=")
    ]


def row_codes(findings: Sequence[Finding], rel: str, href: str | None) -> list[str]:
    """Codes of the findings about one signpost row: they name the relation and (if any)
    the target. Shared by the text report and the check page."""
    out = []
    for f in findings:
        about_rel = rel in f.code or f"rel={rel}" in f"{f.where or ''} {f.message}"
        if about_rel and (href is None or href in f.message or url_key(href) in f.message):
            out.append(f.code)
    return list(dict.fromkeys(out))


def _codes(findings: Sequence[Finding], rel: str, href: str | None) -> str:
    out = [code.removeprefix("signposting/") for code in row_codes(findings, rel, href)]
    return "! " + ", ".join(out) if out else ""


def dataset_says(report: DatasetReport, pages: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Per relation, (URL, encodingFormat) pairs from the Dataset the links are about."""
    dataset, _ = primary_dataset(report.datasets, report.signposts, pages)
    if dataset is None:
        return {}
    d = dataset_links(dataset, pages[-1])
    cite = [doi_url(d.doi)] if d.doi else [d.id] if d.id else []
    return {
        "cite-as": [(c, "") for c in cite],
        "type": [(t, "") for t in [*d.types, *d.additional_types]],
        "author": [(p.ids[0], "") for p in d.people if p.ids],
        "license": [(r.url, "") for r in d.licenses],
        "describedby": [(r.url, " ".join(r.formats)) for r in d.metadata],
        "item": [(r.url, " ".join(r.formats)) for r in d.parts],
        "collection": [(r.url, "") for r in d.collections],
    }


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    out = []
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(len(widths))]
        out.append(("  " + "  ".join([*cells, row[-1]])).rstrip())
    return out
