"""Discovery of a node's sitegraphs: each fetched once per run, with a conditional GET.

The stream is discovery's (`adapter.discovery.walk`): a `SitemapEntry` per Dataset of
the graph (its document attached) and per landing page a catalogue references, findings
as values, and after each graph a `GraphRead` saying how it went, which the sync keeps
once the entries before it are in the store. A graph that could not be read, or passed
a cap, yields a finding and no `GraphRead` of a whole read: nothing leaves for it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from adapter.discovery.sitegraph import (
    GRAPH_ACCEPT,
    SITEGRAPH_READ,
    SITEGRAPH_UNREADABLE,
    GraphRead,
    GraphState,
    fetch_failed,
    read_sitegraph,
    too_large,
)
from adapter.discovery.walk import wanted
from adapter.errors import FetchError
from adapter.findings import Finding
from adapter.http import findings as fetch_findings
from adapter.http.fetcher import Fetcher
from adapter.limits import Limits
from adapter.models import Fetched, SitemapEntry

Item = SitemapEntry | Finding | GraphRead


def discover_sitegraphs(
    urls: Sequence[str],
    fetcher: Fetcher,
    *,
    limits: Limits,
    states: Mapping[str, GraphState] | None = None,
    include: Sequence[re.Pattern[str]] = (),
    exclude: Sequence[re.Pattern[str]] = (),
) -> Iterator[Item]:
    """Every Dataset and referenced landing page of each sitegraph, then how it went."""
    for url in urls:
        yield from _graph(url, fetcher, limits, (states or {}).get(url), include, exclude)


def fetch_sitegraph(
    url: str,
    fetcher: Fetcher,
    limits: Limits,
    etag: str | None = None,
    last_modified: str | None = None,
) -> Fetched | Finding:
    """The graph's GET (conditional with validators), capped at max_sitegraph_bytes; a
    304 to a conditional GET is an answer, any other status but 200 a finding."""
    try:
        fetched = fetcher.get(
            url,
            accept=GRAPH_ACCEPT,
            max_bytes=limits.max_sitegraph_bytes,
            etag=etag,
            last_modified=last_modified,
        )
    except FetchError as exc:
        too_big = exc.code == fetch_findings.TOO_LARGE.code
        return too_large(url, limits) if too_big else fetch_failed(url, exc.message)
    if fetched.status == 200 or (fetched.status == 304 and (etag or last_modified)):
        return fetched
    return SITEGRAPH_UNREADABLE.at(url, f"The sitegraph {url} answered HTTP {fetched.status}.")


def _graph(
    url: str,
    fetcher: Fetcher,
    limits: Limits,
    state: GraphState | None,
    include: Sequence[re.Pattern[str]],
    exclude: Sequence[re.Pattern[str]],
) -> Iterator[Item]:
    etag, modified = (state.etag, state.last_modified) if state else (None, None)
    fetched = fetch_sitegraph(url, fetcher, limits, etag, modified)
    if isinstance(fetched, Finding):
        yield fetched
        return
    if fetched.status == 304:
        yield SITEGRAPH_READ.at(url, "not modified since the last run (304): Datasets as they were")
        yield GraphRead(url, None, unchanged=True)
        return
    checksum = hashlib.sha256(fetched.body).hexdigest()
    if state is not None and state.checksum == checksum:
        kept = GraphState(fetched.etag, fetched.last_modified, checksum, state.datasets)
        yield SITEGRAPH_READ.at(url, "the same bytes as at the last run: Datasets as they were")
        yield GraphRead(url, kept, unchanged=True)
        return
    graph = read_sitegraph(fetched, limits)
    if state is not None and state.datasets and not graph.datasets and graph.readable:
        graph.whole = graph.readable = False  # an outage page, not every Dataset gone
        message = (
            f"The sitegraph {url} holds no Dataset where its last read held {state.datasets}; "
            "it is taken as unreadable (a maintenance page, a broken export), not as every "
            "Dataset gone: nothing is archived."
        )
        graph.findings.append(SITEGRAPH_UNREADABLE.at(url, message))
    yield from graph.findings
    if not graph.readable:
        return
    for found in graph.datasets:
        if wanted(found.address, include, exclude):
            yield SitemapEntry(found.address, url, document=found.document)
    for entry in graph.references:
        if wanted(entry.loc, include, exclude):
            yield replace(entry, sitemap=url)
    yield SITEGRAPH_READ.at(url, graph.summary())
    if graph.whole:
        state = GraphState(fetched.etag, fetched.last_modified, checksum, len(graph.datasets))
        yield GraphRead(url, state, whole=True)
