"""A sitegraph in `adapter check-dataset`: every Dataset of it checked, a report each.

The Datasets are cut out of the graph and checked as the sync checks them
(`adapter.discovery.sitegraph.dataset_response` through `check_landing_page`), so a
repository manager sees what each record would be. Totals come first; `URL#id` or
`--dataset ID` picks one Dataset. JSON (``schema_version`` 1)::

    {"schema_version": 1, "sitegraph": str, "totals": {"datasets": int,
     "harvestable": int, "not_harvestable": int, "references": int},
     "findings": [Finding], "references": [str], "reports": [report]}

where each report is `adapter.report.jsonview.to_json`'s. Exit codes: 0 every Dataset checked is
harvestable, 1 one is not (or the graph holds none), 2 the graph could not be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapter.commands.args import BadValue
from adapter.discovery.graphs import fetch_sitegraph
from adapter.discovery.sitegraph import SiteGraph, dataset_response, read_sitegraph
from adapter.discovery.walk import plural
from adapter.findings import Finding, Severity
from adapter.http.fetcher import Fetcher
from adapter.models import DatasetReport, Fetched
from adapter.pipeline import CheckOptions, check_landing_page
from adapter.report.jsonview import to_json
from adapter.report.text import render_text

RULE = "=" * 72


@dataclass(slots=True)
class GraphCheck:
    """A sitegraph's Datasets, checked."""

    graph: SiteGraph
    reports: list[DatasetReport] = field(default_factory=list)

    @property
    def harvestable(self) -> int:
        return sum(r.harvestable for r in self.reports)

    def exit_code(self) -> int:
        if not self.graph.readable:
            return 2
        return 0 if self.reports and self.harvestable == len(self.reports) else 1


def read_graph(url: str, fetcher: Fetcher, options: CheckOptions) -> SiteGraph:
    """The graph at `url` (no fragment), or an unreadable one with the finding saying why."""
    got = fetch_sitegraph(url, fetcher, options.limits)
    if isinstance(got, Finding):
        return SiteGraph(url, findings=[got], whole=False, readable=False)
    return read_sitegraph(got, options.limits)


def graph_of(fetched: Fetched | None, options: CheckOptions) -> SiteGraph | None:
    """The page `check-dataset` fetched as a sitegraph, when it reads as one."""
    if fetched is None or fetched.status != 200:
        return None
    graph = read_sitegraph(fetched, options.limits)
    return graph if graph.is_sitegraph() else None


def check_graph(
    graph: SiteGraph, fetcher: Fetcher, options: CheckOptions, pick: str | None
) -> GraphCheck:
    """Each Dataset of the graph (or the one `pick` names by @id, url or address) checked."""
    found = graph.datasets
    if pick:
        one = graph.find(pick)
        if one is None:
            ids = ", ".join(d.id or d.address for d in graph.datasets[:10]) or "none"
            more = " ..." if len(graph.datasets) > 10 else ""
            raise BadValue(
                f"no Dataset {pick!r} in the sitegraph {graph.url}; it holds: {ids}{more}"
            )
        found = [one]
    reports = [
        check_landing_page(
            d.address, fetcher, options, prefetched=dataset_response(d.address, d.document)
        )
        for d in found
    ]
    for report in reports:
        report.path[:0] = [graph.url]  # reached through the graph
    return GraphCheck(graph, reports)


def graph_text(check: GraphCheck) -> str:
    """Totals and the graph's findings first, a line per Dataset, then each report."""
    graph, reports = check.graph, check.reports
    lines = [f"Sitegraph {graph.url}"]
    if not graph.readable:
        lines.append("  COULD NOT CHECK: the graph could not be read.")
    else:
        bad = len(reports) - check.harvestable
        lines.append(
            f"  {plural(len(reports), 'Dataset')} checked: {check.harvestable} harvestable, "
            f"{bad} not harvestable; {plural(len(graph.references), 'landing page')} referenced"
        )
    for f in graph.findings:
        lines.append(f"  {f.severity} {f.code}: {f.message}")
    for report in reports:
        word = "harvestable    " if report.harvestable else "NOT harvestable"
        errors = sorted({f.code for f in report.all_findings() if f.severity is Severity.ERROR})
        lines.append(f"  {word}  {report.url}" + (f"  ({', '.join(errors)})" if errors else ""))
    for ref in graph.references:  # landing pages of their own: the sync fetches them
        lines.append(f"  {'page':<15}  {ref.loc}  (a landing page: check it on its own)")
    out = "\n".join(lines) + "\n"
    for report in reports:
        out += f"\n{RULE}\n" + render_text(report)
    return out


def graph_json(check: GraphCheck) -> dict[str, Any]:
    graph, reports = check.graph, check.reports
    return {
        "schema_version": 1,
        "sitegraph": graph.url,
        "totals": {
            "datasets": len(reports),
            "harvestable": check.harvestable,
            "not_harvestable": len(reports) - check.harvestable,
            "references": len(graph.references),
        },
        "findings": [f.as_dict() for f in graph.findings],
        "references": [r.loc for r in graph.references],
        "reports": [to_json(r) for r in reports],
    }
