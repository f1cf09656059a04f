"""A `DatasetReport` laid out for the check page: plain values the templates only print.

The order is the text report's (`adapter.report.text.render_text`): the verdict,
the Datasets, the findings by stage, the signposts beside what the Dataset
says, and the Link header and `<link>` elements the page should carry. Pure:
no I/O, nothing escaped here (the templates escape every value).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from adapter.dataone.index.preview import preview
from adapter.doi import doi_url
from adapter.findings import Finding, Severity, Stage
from adapter.jsonld.framed import first_literal
from adapter.manydatasets import CodeTotal, Many, folded_codes, numbers, summarize
from adapter.models import ChecklistItem, DatasetReport, DatasetResult, MediaObjectRef
from adapter.pipeline import LINKED_JSONLD_UNREACHABLE
from adapter.report.text import (
    ORDER,
    STAGES,
    dataset_says,
    findings_by_stage,
    link_findings,
    row_codes,
    stages_reached,
    worked_examples,
)
from adapter.report.verdicts import blockers, could_not_check, to_fix
from adapter.signposting.crosscheck import primary_dataset
from adapter.signposting.links import SIGNPOSTING_RELS, anchored_at, group, url_key
from adapter.signposting.proposal import PROPOSAL, link_key, propose
from adapter.signposting.proposal import html_link as _html_link
from adapter.signposting.stage import landing_urls

STAGE_TITLES: dict[str, str] = {
    Stage.FETCH: "Fetch: the landing page over HTTP",
    Stage.ROBOTS: "Robots: robots.txt",
    Stage.EXTRACT: "Extract: JSON-LD blocks in the page",
    Stage.NORMALIZE: "Normalize: JSON-LD to a schema.org Dataset",
    Stage.DATAONE: "DataONE: what DataONE needs from the Dataset",
    Stage.SOSO: "science-on-schema.org: recommendations, blocking only under the soso profile",
    Stage.SIGNPOSTING: "Signposting: typed links beside the Dataset",
}
_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True, slots=True)
class Verdict:
    word: str  # HARVESTABLE, NOT HARVESTABLE, COULD NOT CHECK, NOT MODIFIED
    tone: str  # ok | bad | neutral: the CSS class
    url: str
    final_url: str | None
    status: str
    errors: int
    warnings: int
    info: int
    to_fix: list[str]  # codes of the errors (an unmet requirement's own codes), in order
    path: list[str]
    why_unchecked: str = ""  # COULD NOT CHECK: why the page never answered
    why_code: str = ""


@dataclass(frozen=True, slots=True)
class CheckItem:
    label: str
    essential: bool
    state: str  # ok | missing | improve | not reached
    codes: list[str]  # the codes that say why it is not ok


@dataclass(frozen=True, slots=True)
class FindingView:
    severity: str
    code: str
    message: str
    where: str
    about: str  # "" for the page, "Dataset", "Dataset 2"
    example: str = ""  # the JSON-LD to write, for the errors that have a worked example


@dataclass(frozen=True, slots=True)
class FoldedCode:
    """One code of the Datasets shown folded, in one line instead of once per Dataset."""

    severity: str
    code: str
    count: int  # folded Datasets that have it
    numbers: str  # which: "4, 5, 6, ..., 214"


@dataclass(frozen=True, slots=True)
class StageView:
    key: str
    title: str
    state: str  # ok | not reached | errors | warnings | info
    findings: list[FindingView]
    folded: list[FoldedCode] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class MediaView:
    url: str
    formats: str
    via: str


@dataclass(frozen=True, slots=True)
class DatasetView:
    label: str
    name: str
    harvestable: bool
    id: str
    doi: str
    doi_link: str
    identifiers: list[str]
    encoding: list[MediaView]
    distributions: list[MediaView]
    where: str
    # what DataONE search would show: (label, text) rows, "-" where it shows nothing
    search: list[tuple[str, str]]
    search_missing: list[str]  # the labels of the rows search would leave empty
    number: int = 1  # its place on the page (1-based): the anchor #dataset-N
    whole: bool = True  # shown in full; else folded (a page with many Datasets)
    blockers: list[str] = field(default_factory=list)  # the codes that keep it out
    codes: list[tuple[str, str]] = field(default_factory=list)  # (severity, code), once each


@dataclass(frozen=True, slots=True)
class SignpostRow:
    rel: str
    href: str
    type_profile: str
    source: str  # where the page says it, or "the Dataset only"
    in_dataset: bool  # the Dataset says the same
    missing: bool  # the Dataset says it, the page does not link it
    codes: list[str]


@dataclass(frozen=True, slots=True)
class ProposalView:
    link_header: str
    html_links: str
    needed: bool  # the page's signposting needs fixing (the report proposes it)
    added: list[str] = field(default_factory=list)  # <link> elements the page lacks
    kept: int = 0  # links the page publishes, kept in the header as they are


@dataclass(frozen=True, slots=True)
class ManyView:
    """The totals of a page with many Datasets (`adapter.manydatasets`), shown first."""

    total: int
    harvestable: int
    not_harvestable: int
    codes: list[CodeTotal]
    whole: list[int]  # the numbers of the Datasets shown in full
    folded: int


@dataclass(slots=True)
class ReportView:
    verdict: Verdict
    profile: str  # the requirement profile the checklist is of
    checklist: list[CheckItem]
    datasets: list[DatasetView]
    stages: list[StageView]
    signposts: list[SignpostRow]
    other_links: list[SignpostRow]
    other_rels: list[str]
    proposal: ProposalView | None
    codes: list[str] = field(default_factory=list)  # every code, for the summary
    many: ManyView | None = None  # a page with many Datasets: totals, most folded


def report_view(report: DatasetReport, pasted: str | None = None) -> ReportView:
    """`pasted`: the placeholder address of content that was pasted, not fetched (the
    page then names no address it was not given, and no HTTP status it never got)."""
    shown = verdict(report)
    many = summarize(report.datasets)
    if pasted is not None:
        url = "(pasted content: no address given)" if report.url == pasted else report.url
        shown = replace(shown, url=url, final_url=None, status="pasted, not fetched")
    view = ReportView(
        verdict=shown,
        profile=report.profile,
        checklist=checklist(report),
        datasets=[
            _dataset(d, i, len(report.datasets), many is None or i in many.whole)
            for i, d in enumerate(report.datasets, 1)
        ],
        stages=stages(report, many),
        signposts=signpost_rows(report),
        other_links=_other_links(report),
        other_rels=_other_rels(report),
        proposal=proposal(report),
        codes=list(dict.fromkeys(f.code for f in report.all_findings())),
        many=_many(many),
    )
    if pasted is not None and report.url == pasted:
        _unaddressed(view, pasted)
    return view


NO_ADDRESS = "https://YOUR-LANDING-PAGE/"


def _unaddressed(view: ReportView, pasted: str) -> None:
    """Content pasted without an address: the placeholder address the check read it at is
    never shown as if it were the page's; the advice says where the page's own goes."""
    view.stages = [
        replace(
            s,
            findings=[
                replace(
                    f,
                    message=f.message.replace(pasted, NO_ADDRESS),
                    example=f.example.replace(pasted, NO_ADDRESS),
                    where=f.where.replace(pasted, NO_ADDRESS),
                )
                for f in s.findings
            ],
        )
        for s in view.stages
    ]
    view.signposts = [replace(r, href=r.href.replace(pasted, NO_ADDRESS)) for r in view.signposts]
    if view.proposal is not None:
        p = view.proposal
        view.proposal = replace(
            p,
            link_header=p.link_header.replace(pasted, NO_ADDRESS),
            html_links=p.html_links.replace(pasted, NO_ADDRESS),
            added=[a.replace(pasted, NO_ADDRESS) for a in p.added],
        )


def verdict(report: DatasetReport) -> Verdict:
    every = report.all_findings()
    unchecked = could_not_check(report)
    if report.not_modified:
        word, tone = "NOT MODIFIED", "neutral"
    elif report.harvestable:
        word, tone = "HARVESTABLE", "ok"
    elif unchecked is not None:
        word, tone = "COULD NOT CHECK", "neutral"
    else:
        word, tone = "NOT HARVESTABLE", "bad"
    return Verdict(
        word=word,
        tone=tone,
        url=report.url,
        final_url=report.final_url if report.final_url != report.url else None,
        status=f"HTTP {report.status}" if report.status is not None else "no HTTP answer",
        errors=sum(f.severity is Severity.ERROR for f in every),
        warnings=sum(f.severity is Severity.WARNING for f in every),
        info=sum(f.severity is Severity.INFO for f in every),
        to_fix=[] if unchecked else to_fix(report),
        path=list(report.path) if len(report.path) > 1 else [],
        why_unchecked=unchecked.message if unchecked else "",
        why_code=unchecked.code if unchecked else "",
    )


def checklist(report: DatasetReport) -> list[CheckItem]:
    """The profile's requirements, each ok or not for the Dataset the page is about."""
    pages = landing_urls(report)
    dataset, _ = primary_dataset(report.datasets, report.signposts, pages)
    found = CheckItem("a schema.org Dataset on the page", True, "ok", [])
    if dataset is None:
        codes = [f.code for f in report.findings if f.severity is Severity.ERROR][:3]
        # the record it links to could not be read: say so beside "no Dataset"
        codes += [f.code for f in report.findings if f.code == LINKED_JSONLD_UNREACHABLE.code][:1]
        reached = report.fetched is not None and not report.not_modified
        found = CheckItem(found.label, True, "missing" if reached else "not reached", codes)
        return [found]
    return [found, *(_item(i) for i in dataset.checklist)]


def _item(item: ChecklistItem) -> CheckItem:
    if item.met:
        state = "improve" if item.codes else "ok"
    else:
        state = "missing" if item.blocking else "improve"
    return CheckItem(item.label, item.blocking, state, list(item.codes))


def _many(many: Many | None) -> ManyView | None:
    if many is None:
        return None
    return ManyView(
        total=many.total,
        harvestable=many.harvestable,
        not_harvestable=many.not_harvestable,
        codes=many.codes,
        whole=sorted(many.whole),
        folded=many.folded(),
    )


def _dataset(d: DatasetResult, index: int, count: int, whole: bool = True) -> DatasetView:
    """One Dataset; a folded one without its search preview (its codes say what is wrong)."""
    rows = preview(d.dataone_index) if d.dataone_index and whole else []
    ordered = sorted(d.findings, key=lambda f: _SEVERITY_ORDER[f.severity])
    return DatasetView(
        label=f"Dataset {index} of {count}" if count > 1 else "Dataset",
        name=first_literal(d.framed, "name") or "(no name)",
        harvestable=d.harvestable,
        id=d.id or "",
        doi=d.doi or "",
        doi_link=doi_url(d.doi) if d.doi else "",
        identifiers=list(d.identifiers),
        encoding=[_media(r) for r in d.encoding],
        distributions=[_media(r) for r in d.distributions],
        where=d.where or "",
        search=rows,
        search_missing=[label for label, text in rows if text == "-"],
        number=index,
        whole=whole,
        blockers=blockers(d),
        codes=list(dict.fromkeys((str(f.severity), f.code) for f in ordered)),
    )


def _media(r: MediaObjectRef) -> MediaView:
    return MediaView(
        url=r.content_url or "(no contentUrl)",
        formats=", ".join(r.encoding_format) or "no encodingFormat",
        via=r.property if r.property == "subjectOf" else "",
    )


def stages(report: DatasetReport, many: Many | None = None) -> list[StageView]:
    """The findings by stage (the code's first part), errors first; empty stages say why.

    With many Datasets, the folded ones' findings are one line per code, not one each."""
    by_stage = findings_by_stage(report, many)
    folded = folded_codes(report.datasets, many) if many is not None else {}
    reached = stages_reached(report)  # the text report's rule, so both say "ok" alike
    examples = worked_examples(report)
    out = []
    for key in [*STAGES, *sorted((set(by_stage) | set(folded)) - set(STAGES))]:
        items = sorted(by_stage.get(key, []), key=lambda tf: _SEVERITY_ORDER[tf[1].severity])
        rest = sorted(
            (FoldedCode(str(sev), code, len(ns), numbers(ns)) for code, (sev, ns) in
             folded.get(key, {}).items()),
            key=lambda c: (_SEVERITY_ORDER[Severity(c.severity)], -c.count, c.code),
        )  # fmt: skip
        if not items and not rest and key not in STAGES:
            continue
        views = [_finding(tag, f, examples.get(id(f), "")) for tag, f in items]
        quiet = "ok" if key in reached else "not reached"
        severities = [str(f.severity) for _, f in items] + [c.severity for c in rest]
        state = min(severities, key=lambda x: _SEVERITY_ORDER[Severity(x)], default=quiet)
        out.append(StageView(key, STAGE_TITLES.get(key, key), state, views, rest))
    return out


def _finding(tag: str, f: Finding, example: str = "") -> FindingView:
    message = f.message
    if f.code == PROPOSAL.code:  # shown whole in the copy box
        message = "The Link header and <link> elements to publish are in the copy box below."
    return FindingView(str(f.severity), f.code, message, f.where or "", tag, example)


def signpost_rows(report: DatasetReport) -> list[SignpostRow]:
    """The landing page's signposts by relation, and what its Dataset says for each."""
    if report.fetched is None and not report.signposts:
        return []
    pages = landing_urls(report)
    own = [s for s in group(anchored_at(report.signposts, pages)) if s.rel in SIGNPOSTING_RELS]
    says = dataset_says(report, pages)
    findings = link_findings(report)
    rows = []
    for rel in [*ORDER, *sorted({s.rel for s in own} - set(ORDER))]:
        said = says.get(rel, [])
        said_keys = {link_key(url) for url, _ in said}
        linked = set()
        for s in (s for s in own if s.rel == rel):
            linked.add(link_key(s.href))
            rows.append(
                SignpostRow(
                    rel=rel,
                    href=s.href,
                    type_profile=" ".join(x for x in (s.type, s.profile) if x),
                    source=", ".join(s.sources),
                    in_dataset=link_key(s.href) in said_keys,
                    missing=False,
                    codes=row_codes(findings, rel, s.href),
                )
            )
        for url, formats in said:
            if link_key(url) not in linked:
                rows.append(SignpostRow(rel, url, formats, "the Dataset only", True, True, []))
    return rows


def _other_links(report: DatasetReport) -> list[SignpostRow]:
    """Links about other resources (a link set's item and metadata contexts)."""
    pages = {url_key(p) for p in landing_urls(report)}
    return [
        SignpostRow(
            rel=s.rel,
            href=s.href,
            type_profile=" ".join(x for x in (s.type, s.profile) if x),
            source=f"{', '.join(s.sources)} (about {s.anchor})",
            in_dataset=False,
            missing=False,
            codes=[],
        )
        for s in group(report.signposts)
        if url_key(s.anchor) not in pages and s.rel in SIGNPOSTING_RELS
    ]


def _other_rels(report: DatasetReport) -> list[str]:
    landing = anchored_at(report.signposts, landing_urls(report))
    return sorted({x.rel for x in landing if x.rel not in SIGNPOSTING_RELS})


def proposal(report: DatasetReport) -> ProposalView | None:
    """The signposting to publish, derived from the Dataset the page's links are about."""
    pages = landing_urls(report)
    dataset, _ = primary_dataset(report.datasets, report.signposts, pages)
    if dataset is None:
        return None
    made = propose(dataset, pages[-1], published=anchored_at(report.signposts, pages))
    needed = any(f.code == PROPOSAL.code for f in report.findings) and not made.nothing_missing
    added = [_html_link(link) for link in made.added]
    return ProposalView(f"Link: {made.link_header}", made.html_links, needed, added, made.kept)
