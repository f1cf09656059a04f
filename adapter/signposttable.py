"""The signposts as a table for the human report: each link, who said it, what the Dataset
says for the same relation, and the findings about it on the same line.

One row per statement (anchor, rel, href) with all its sources; rows the Dataset has but
the page does not link get a "(no link)" row, so gaps show as plainly as disagreements.
Links about other resources (the link set's item/metadata contexts) follow in their own
table; other relations (stylesheet, icon, ...) are only counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.doi import doi_url
from adapter.findings import Finding
from adapter.models import DatasetReport
from adapter.signposting.crosscheck import primary_dataset
from adapter.signposting.datasetlinks import dataset_links
from adapter.signposting.links import SIGNPOSTING_RELS, Signpost, anchored_at, group, url_key
from adapter.signposting.stage import landing_urls

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
    findings = [f for f in report.all_findings() if f.code.startswith("signposting/")]
    says = _dataset_says(report, pages)
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


def _codes(findings: Sequence[Finding], rel: str, href: str | None) -> str:
    """Codes of the findings about this row: they name the relation and (if any) the target."""
    out = []
    for f in findings:
        about_rel = rel in f.code or f"rel={rel}" in f"{f.where or ''} {f.message}"
        if about_rel and (href is None or href in f.message or url_key(href) in f.message):
            out.append(f.code.removeprefix("signposting/"))
    return "! " + ", ".join(dict.fromkeys(out)) if out else ""


def _dataset_says(report: DatasetReport, pages: list[str]) -> dict[str, list[tuple[str, str]]]:
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
