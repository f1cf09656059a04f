"""mypy's configuration covers lxml once, in pyproject.toml, not per import.

lxml ships no type hints; one `ignore_missing_imports` override for `lxml.*`
replaces a `# type: ignore[import-untyped]` on every import, which hid any
other error on those lines.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_lxml_is_an_untyped_import_in_the_mypy_overrides() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    ignored = {
        module
        for override in config["tool"]["mypy"]["overrides"]
        if override.get("ignore_missing_imports")
        for module in override["module"]
    }
    assert "lxml.*" in ignored


def test_lxml_imports_carry_no_type_ignore() -> None:
    readers = 0
    for path in sorted((ROOT / "adapter").rglob("*.py")):
        for line in path.read_text("utf-8").splitlines():
            if "lxml" in line and line.lstrip().startswith(("import ", "from ")):
                readers += 1
                assert "type: ignore" not in line, f"{path.name}: {line}"
    assert readers >= 3  # extract, htmllinks and jsshell read HTML with lxml
