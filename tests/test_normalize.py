"""Golden tests for extract + normalize over fixtures/pages, plus the normalizer's own rules.

Each `fixtures/pages/<case>.html` (or `.jsonld`, served as application/ld+json)
has a `<case>.expected.json`: the blocks read, the finding codes (with severity
and where), and every framed Dataset. The tests only compare. To regenerate the
goldens deliberately after a reviewed change, run

    .venv/bin/python -m tests.test_normalize --regen

and review the diff (`git diff fixtures/pages`) before committing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from adapter.extract import extract
from adapter.normalize import normalize

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"
CONTENT_TYPES = {".html": "text/html", ".jsonld": "application/ld+json"}


def _cases() -> list[Path]:
    return sorted(p for p in PAGES.iterdir() if p.suffix in CONTENT_TYPES)


def run_case(page: Path) -> dict[str, Any]:
    """What the extract and normalize stages make of one fixture page."""
    url = f"https://repo.example/dataset/{page.stem}"
    extraction = extract(
        page.read_bytes(), url=url, content_type=CONTENT_TYPES[page.suffix], charset=None
    )
    datasets, findings = normalize(extraction.blocks, base_url=extraction.base_url or url)
    return {
        "url": url,
        "js_rendered": extraction.js_rendered,
        "blocks": [
            {"index": b.index, "syntax": b.syntax, "repairs": list(b.repairs)}
            for b in extraction.blocks
        ],
        "findings": [
            {"code": f.code, "severity": str(f.severity), "where": f.where}
            for f in extraction.findings + findings
        ],
        "datasets": [
            {"id": d.id, "block_index": d.block_index, "where": d.where, "framed": d.framed}
            for d in datasets
        ],
    }


def _expected_path(page: Path) -> Path:
    return page.with_name(page.stem + ".expected.json")


@pytest.mark.parametrize("page", _cases(), ids=lambda p: p.name)
def test_golden(page: Path) -> None:
    expected_file = _expected_path(page)
    assert expected_file.exists(), f"no golden for {page.name}; see the module docstring"
    expected = json.loads(expected_file.read_text("utf-8"))
    assert run_case(page) == expected


def test_there_are_enough_golden_cases() -> None:
    assert len(_cases()) >= 15


def _regenerate() -> None:
    for page in _cases():
        text = json.dumps(run_case(page), indent=2, ensure_ascii=False, sort_keys=True)
        _expected_path(page).write_text(text + "\n", "utf-8")
        print(f"wrote {_expected_path(page).name}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regen"]:
        sys.exit("usage: python -m tests.test_normalize --regen")
    _regenerate()
