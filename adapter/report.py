"""A `DatasetReport` as a repository manager reads it (text) and as programs read it (JSON).

The text puts the verdict first, then the Datasets, the findings by stage and
the links: every finding shows its severity, its code (to look up with
`adapter findings`), the message and where. The signposts are a table: one row
per statement (anchor, rel, href) with all its sources, what the Dataset says
for the same relation and the findings about it; rows the Dataset has but the
page does not link read "(no link)", so gaps show as plainly as disagreements.
Links about other resources (the link set's item/metadata contexts) follow in
their own table; other relations (stylesheet, icon, ...) are only counted.

JSON schema, ``schema_version`` 1 (stable: fields are only ever added; a
removal or a change of meaning bumps the version)::

    {
      "schema_version": 1,
      "url": str,                 # as given
      "final_url": str | null,    # after redirects (null: never answered)
      "status": int | null,       # HTTP status of the landing page
      "not_modified": bool,       # a conditional GET answered 304
      "rendered": bool,           # read from the DOM a browser rendered (its JavaScript
                                  # run: --render, rendering.mode); render/ findings say how
      "harvestable": bool,        # no page-level error and at least one clean Dataset
      "verdict": str,             # "harvestable" | "not-harvestable" | "could-not-check"
                                  # (the landing page never answered: nothing was checked)
      "profile": str,             # the requirement profile that decided `harvestable`:
                                  # "dataone" | "soso" | "mnlite" | "custom"
      "path": [str],              # every URL visited to reach the Dataset, in order
      "summary": {"datasets": int, "errors": int, "warnings": int, "info": int},
      "datasets": [{
        "id": str | null,         # the Dataset's @id
        "name": str | null,
        "block": int | null,      # the page's JSON-LD block it came from (1-based)
        "where": str | null,      # where in that block: "block 2 $['@graph'][1]"
        "doi": str | null,        # canonical lowercase 10.x/y
        "harvestable": bool,
        "identifiers": [str],     # every identifier as published
        "persistent_identifiers": [{"scheme": "doi"|"ark"|"handle"|"urn"|"http",
                                    "value": str,      # its series form: doi:10.x/y,
                                                       # ark:/12345/x, hdl:p/s, ...
                                    "published": str}],
        "encoding": [MediaObject],       # encoding and subjectOf metadata links
        "distributions": [MediaObject],
        "checklist": [CheckItem], # the profile's requirements, in the profile's order
        "dataone_index": {str: str | [str]},  # the Solr fields DataONE's indexer would fill
                                  # ("title", "abstract", "author", "origin", "pubDate",
                                  # "keywords", "licenseUrl", "northBoundCoord", ...): a string
                                  # where it keeps one value, a list where it keeps every
                                  # value; absent where the index would be empty
        "findings": [Finding]     # about this Dataset
      }],
      "signposts": [Link],        # FAIR Signposting relations only (cite-as, describedby,
                                  # item, license, type, author, collection, describes,
                                  # linkset), from every source
      "other_links": [Link],      # every other typed link (stylesheet, icon, canonical,
                                  # alternate, schema.DC, ...), kept apart
      "findings": [Finding]       # about the page (fetch, extract, normalize, links)
    }
    MediaObject = {"property": "encoding"|"subjectOf"|"distribution",
                   "contentUrl": str|null,     # the entry's contentUrl, as published
                   "encodingFormat": [str],    # the entry's encodingFormat, as published
                   "url": str|null,            # the entry's url (a page about the file)
                   "fileFormat": [str],        # the entry's fileFormat, when it has no
                                               # encodingFormat
                   "link": str|null,           # the URL the adapter reads the entry by
                   "linkProperty": str|null,   # where `link` came from: "contentUrl",
                                               # "contentURL", "url", or the property
                                               # itself (a plain URL as the value)
                   "reference": str|null,      # the @id of a node the page does not
                                               # describe (a dataone/dangling-reference)
                   "identifier": str|null, "dateModified": str|null, "where": str}
    CheckItem = {"requirement": str,   # its name: doi-identifier, encoding, license, ...
                 "label": str,         # what it asks, in words
                 "blocking": bool,     # unmet, the Dataset is not harvestable (else advice)
                 "met": bool,
                 "codes": [str]}       # finding codes that explain it (unmet: why; met:
                                       # advice beside it); dataone/profile-unmet where the
                                       # Dataset itself lacks it
    Link = {"rel", "href", "type", "profile", "anchor", "source"}  (strings; type/profile
            may be null)
    Finding = {"code": str, "severity": "error"|"warning"|"info", "message": str,
               "where": str|null, "url": str}

A finding's or MediaObject's `where` is a JSON path into the framed Dataset
(``$.identifier[1].value``), a block of the page (``block 2``) or a link; a
Dataset's `where` is its block and the JSON path of the Dataset in the
publisher's block; one read from the JSON-LD document the page links to says
``document <url> $`` (its `block` is 1, the document itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from adapter.dataone.examples import example_for
from adapter.dataone.index.preview import preview
from adapter.dataone.profiles import PROFILE_UNMET
from adapter.dataone.profiles import as_json as checklist_json
from adapter.dataone.soso.codes import ABSENT as SOSO_ABSENT
from adapter.dataone.soso.codes import PROPERTIES as SOSO_PROPERTIES
from adapter.doi import doi_url
from adapter.findings import Finding, Severity, Stage
from adapter.http import findings as fetch_findings
from adapter.jsonld.framed import first_literal
from adapter.manydatasets import Many, folded_codes, numbers, summarize
from adapter.models import DatasetReport, DatasetResult, Link, MediaObjectRef
from adapter.page.findings import SITEMAP_GIVEN
from adapter.signposting.crosscheck import primary_dataset
from adapter.signposting.datasetlinks import dataset_links
from adapter.signposting.links import SIGNPOSTING_RELS, Signpost, anchored_at, group, url_key
from adapter.signposting.stage import landing_urls

SCHEMA_VERSION = 1


def to_json(report: DatasetReport) -> dict[str, Any]:
    """The report as plain JSON values, in the documented schema."""
    every = report.all_findings()
    return {
        "schema_version": SCHEMA_VERSION,
        "url": report.url,
        "final_url": report.final_url,
        "status": report.status,
        "not_modified": report.not_modified,
        "rendered": report.rendered,
        "harvestable": report.harvestable,
        "verdict": verdict(report),
        "profile": report.profile,
        "path": list(report.path),
        "summary": {
            "datasets": len(report.datasets),
            "errors": sum(f.severity == "error" for f in every),
            "warnings": sum(f.severity == "warning" for f in every),
            "info": sum(f.severity == "info" for f in every),
        },
        "datasets": [_dataset(d) for d in report.datasets],
        "signposts": [_link(x) for x in report.signposts if x.rel in SIGNPOSTING_RELS],
        "other_links": [_link(x) for x in report.signposts if x.rel not in SIGNPOSTING_RELS],
        "findings": [f.as_dict() for f in report.findings],
    }


def _dataset(d: DatasetResult) -> dict[str, Any]:
    return {
        "id": d.id,
        "name": first_literal(d.framed, "name"),
        "block": d.block,
        "where": d.where,
        "doi": d.doi,
        "harvestable": d.harvestable,
        "identifiers": list(d.identifiers),
        "persistent_identifiers": [
            {"scheme": p.scheme, "value": p.value, "published": p.published} for p in d.pids
        ],
        "encoding": _media(d.encoding),
        "distributions": _media(d.distributions),
        "checklist": checklist_json(d.checklist),
        "dataone_index": {
            k: v if isinstance(v, str) else list(v) for k, v in d.dataone_index.items()
        },
        "findings": [f.as_dict() for f in d.findings],
    }


def _media(refs: Iterable[MediaObjectRef]) -> list[dict[str, Any]]:
    """Each value under the property the page used: a `url` is never shown as a contentUrl."""
    return [
        {
            "property": r.property,
            "contentUrl": r.content_url if r.link_property == "contentUrl" else None,
            "encodingFormat": list(r.encoding_format)
            if r.format_property == "encodingFormat"
            else [],
            "url": r.page_url,
            "fileFormat": list(r.encoding_format) if r.format_property == "fileFormat" else [],
            "link": r.content_url,
            "linkProperty": r.link_property if r.content_url else None,
            "reference": r.reference,
            "identifier": r.identifier,
            "dateModified": r.date_modified,
            "where": r.where,
        }
        for r in refs
    ]


def _link(link: Link) -> dict[str, Any]:
    return {
        "rel": link.rel,
        "href": link.href,
        "type": link.type,
        "profile": link.profile,
        "anchor": link.anchor,
        "source": link.source,
    }


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
_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


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


# The landing page never answered (refused, DNS, a timeout or the check's deadline, an
# address refused, a paused host): nothing about the page was learned.
UNREACHED = frozenset(
    t.code
    for t in (
        fetch_findings.CONNECTION,
        fetch_findings.TIMEOUT,
        fetch_findings.UNSAFE_URL,
        fetch_findings.HOST_PAUSED,
        fetch_findings.RATE_LIMITED,
    )
) | {"robots/unreachable"}  # its robots.txt could not be read: the page was not asked


def could_not_check(report: DatasetReport) -> Finding | None:
    """The finding that says why the page was never checked, or None when it was."""
    if report.fetched is not None or report.status is not None or report.datasets:
        return None
    return next((f for f in report.findings if f.code in UNREACHED), None)


def verdict(report: DatasetReport) -> str:
    """harvestable | not-harvestable | could-not-check: not checked is not refused."""
    if report.harvestable:
        return "harvestable"
    return "could-not-check" if could_not_check(report) else "not-harvestable"


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


def blockers(d: DatasetResult) -> list[str]:
    """The codes that keep one Dataset from being harvested, in order: an unmet requirement
    of the profile by the codes that say why (as the report's "to fix" line does)."""
    unmet = [
        code
        for item in d.checklist
        if item.blocking and not item.met
        for code in item.codes
        if code != PROFILE_UNMET.code
    ]
    codes: list[str] = []
    for f in d.findings:
        if f.severity is Severity.ERROR:
            codes += unmet if f.code == PROFILE_UNMET.code and unmet else [f.code]
    return list(dict.fromkeys(codes))


def to_fix(report: DatasetReport) -> list[str]:
    """The codes of the errors, in order; a profile's unmet requirement by the codes behind it."""
    codes = [f.code for f in report.findings if f.severity is Severity.ERROR]
    for d in report.datasets:
        codes += blockers(d)
    return list(dict.fromkeys(codes))


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


def _findings_lines(report: DatasetReport, many: Many | None = None) -> list[str]:
    tagged: list[tuple[str, Finding]] = [("", f) for f in report.findings]
    several = len(report.datasets) > 1
    folded = folded_codes(report.datasets, many) if many is not None else {}
    for i, d in enumerate(report.datasets, start=1):
        if many is None or i in many.whole:
            tagged += [(f"Dataset {i}" if several else "Dataset", f) for f in d.findings]
    by_stage: dict[str, list[tuple[str, Finding]]] = {}
    for tag, f in tagged:
        by_stage.setdefault(f.stage, []).append((tag, f))
    reached = _reached(report)
    examples = worked_examples(report)
    out = ["Findings by stage"]
    order = [*STAGES, *sorted(set(by_stage) - set(STAGES))]
    for stage in order:
        items = by_stage.get(stage, [])
        if not items and stage not in folded:
            if stage in STAGES:
                state = "ok" if stage in reached else "not reached"
                out.append(f"  {_STAGE_TITLES[stage]}: {state}")
            continue
        out.append(f"  {_STAGE_TITLES.get(stage, stage)}:")
        items.sort(key=lambda tf: _SEVERITY_ORDER[tf[1].severity])
        out += _grouped(items) if stage == Stage.SOSO else _finding_lines(items, examples)
        rest = folded.get(stage, {})
        for code in sorted(rest, key=lambda c: (_SEVERITY_ORDER[rest[c][0]], -len(rest[c][1]), c)):
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


def _reached(report: DatasetReport) -> set[str]:
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
    own = [s for s in group(landing) if s.rel in SIGNPOSTING_RELS]
    others = [
        s
        for s in group(report.signposts)
        if url_key(s.anchor) not in {url_key(p) for p in pages} and s.rel in SIGNPOSTING_RELS
    ]
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


# -- the part of a report a sync keeps on the page's frontier row ----------------------

MAX_REPORT_FINDINGS = 200
MAX_REPORT_TEXT = 64_000  # characters of the text report kept for `adapter pages show`


def report_summary(report: DatasetReport) -> dict[str, Any]:
    """The part of a report kept on the frontier row (findings capped)."""
    summary = {
        "url": report.url,
        "final_url": report.final_url,
        "status": report.status,
        "not_modified": report.not_modified,
        "rendered": report.rendered,
        "harvestable": report.harvestable,
        "profile": report.profile,  # the operator view shows it, and checks again under it
        "datasets": [
            {"doi": d.doi, "harvestable": d.harvestable, "checklist": checklist_json(d.checklist)}
            for d in report.datasets
        ],
        "text": capped_text(render_text(report)),  # what `adapter pages show` prints
    }
    return capped_findings(summary, report.all_findings())


def capped_findings(summary: dict[str, Any], findings: list[Finding]) -> dict[str, Any]:
    """`summary` with its findings replaced by `findings`, at most MAX_REPORT_FINDINGS of them.

    The sync's own findings (`sync/...`) are appended to the stored text report
    too, under a heading of their own, so `adapter pages show` says why a page
    that reads as harvestable was not synced.
    """
    if len(findings) > MAX_REPORT_FINDINGS:  # keep errors and warnings over advice (soso/ info)
        findings = sorted(findings, key=lambda f: _SEVERITY_ORDER[f.severity])  # errors kept first
    out = {
        **summary,
        "findings": [f.as_dict() for f in findings[:MAX_REPORT_FINDINGS]],
        "findings_dropped": max(0, len(findings) - MAX_REPORT_FINDINGS),
    }
    text = summary.get("text")
    extra = [f for f in findings if f.stage == Stage.SYNC]  # no DOI, duplicate DOI, ...
    if isinstance(text, str) and extra and "\nFound by the sync\n" not in text:
        lines = ["", "Found by the sync"]
        for f in extra:
            lines.append(f"  {f.severity.upper():<8} {f.code}")
            lines.append("             " + f.message.replace("\n", "\n             "))
        out["text"] = capped_text(text + "\n".join(lines) + "\n")
    return out


def capped_text(text: str) -> str:
    """At most MAX_REPORT_TEXT characters of a text report, saying what was cut."""
    if len(text) <= MAX_REPORT_TEXT:
        return text
    cut = len(text) - MAX_REPORT_TEXT
    return (
        text[:MAX_REPORT_TEXT]
        + f"\n... ({cut} more characters; `adapter check-dataset URL` prints the whole report)\n"
    )
