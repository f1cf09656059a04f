"""Synthetic repositories for the worker and politeness tests, and node configurations.

Pages come from `benchmarks/synthrepo.py` (about 18 KB each, a 5 KB Dataset
JSON-LD, a sitemap index and robots.txt), written into tmp_path with the
fixture origin `https://repo.example`, so `tests.support.fixture_server` serves them
and logs every request. Large sites are served by `synthrepo.serve` (nginx).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from benchmarks import synthrepo
from tests.support.fixture_server import MAIN_ORIGIN
from tests.support.zygote import WarmProcess, adapter_popen

ROOT = Path(__file__).resolve().parents[2]
NODE_ID = "urn:node:WORKERS"


def fixture_site(sites: Path, name: str, pages: int, robots_extra: str = "") -> Path:
    """A synthetic site under `sites/name` for `start_site(name, sites)`."""
    root = sites / name
    synthrepo.generate(root, pages, MAIN_ORIGIN)
    rules = {
        f"/dataset/{i}": {"file": f"dataset/{i}.html", "content_type": "text/html"}
        for i in range(pages)
    }
    (root / "_headers.json").write_text(json.dumps(rules), "utf-8")
    if robots_extra:
        robots = root / "robots.txt"
        robots.write_text(robots.read_text().replace("Allow: /\n", f"Allow: /\n{robots_extra}"))
    return root


def write_config(
    path: Path,
    store_url: str,
    robots_url: str,
    *,
    rate: float,
    concurrency: int,
) -> Path:
    path.write_text(
        f"""
store_url: "{store_url}"
log_level: WARNING
nodes:
  - id: {NODE_ID}
    name: Synthetic Workers Repository
    start:
      robots_urls: ["{robots_url}"]
    politeness:
      requests_per_second: {rate}
      concurrency: {concurrency}
    dataone:
      submitter: "http://orcid.org/0000-0002-1825-0097"
      rights_holder: "CN=workers,DC=dataone,DC=org"
      contact_subject: "http://orcid.org/0000-0002-1825-0097"
""",
        "utf-8",
    )
    return path


def adapter_process(*args: str, cwd: Path) -> WarmProcess:
    """A real `adapter` process (output kept for the failure message), forked with its
    imports done (tests/support/zygote.py)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return adapter_popen(*args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
