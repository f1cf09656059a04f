"""The finding catalogue lists every code declared anywhere in the package.

Types register on import, and `catalogue()` imports every module by walking
the package; a fresh interpreter (nothing imported beforehand by other tests)
must still list every `FindingType(...)` that the source declares.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def declared_in_source() -> set[str]:
    codes: set[str] = set()
    for path in (ROOT / "adapter").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "FindingType"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                codes.add(node.args[0].value)
    return codes


@pytest.mark.slow  # over 1 s (tests/support/timing.py)
def test_a_fresh_catalogue_lists_every_declared_code() -> None:
    script = "import json; from adapter.findings import catalogue; "
    script += "print(json.dumps([t.code for t in catalogue()]))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    listed = set(json.loads(out.stdout))
    declared = declared_in_source()
    assert len(declared) > 100
    assert declared == listed


def test_every_code_names_a_known_stage_and_an_unknown_one_fails_at_import() -> None:
    from adapter.findings import Finding, FindingType, Severity, Stage, catalogue

    assert {t.code.partition("/")[0] for t in catalogue()} <= set(Stage)
    with pytest.raises(ValueError, match="names no known stage"):
        FindingType("signpostng/cite-as-missing", Severity.WARNING, "a misspelt stage")
    finding = Finding("normalize/no-dataset", Severity.ERROR, "none")
    assert finding.stage == Stage.NORMALIZE and finding.stage != Stage.EXTRACT
