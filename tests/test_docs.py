"""The README, the documentation site, the CLI, the finding catalogue, the limits and CI agree.

The site's reference pages are generated from the code (docs/hooks.py); these
tests read what the hook generates, so a broken generator fails here.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import fields
from pathlib import Path

import click

from adapter.cli import COMMANDS, cli
from adapter.findings import catalogue
from adapter.limits import Limits

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest"
MAIN_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/adapter demo"


def test_readme_gives_the_two_setup_commands_and_ci_runs_the_test_one() -> None:
    assert MAIN_COMMAND in README
    assert TEST_COMMAND in README
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text()


def _reference(page: str) -> str:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    pages: dict[str, str] = hooks.reference_pages()
    return pages[page]


def test_every_finding_code_is_in_the_reference_with_its_severity() -> None:
    page = _reference("reference/findings.md")
    entries = dict(re.findall(r"^### `([a-z]+/[a-z0-9-]+)`.*\n\n\*\*(\w+)\*\*", page, re.M))
    declared = {t.code: str(t.severity) for t in catalogue()}
    assert entries == declared


def test_every_limit_is_documented() -> None:
    page = _reference("reference/limits.md")
    for f in fields(Limits):
        assert f"| `{f.name}` |" in page, f.name
        assert f.metadata.get("doc"), f"{f.name} has no documentation"


def test_every_command_exists_has_help_and_is_in_the_readme() -> None:
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None, f"adapter {name} does not load"
        assert command.help, f"adapter {name} has no help text"
        assert f"adapter {name}" in README, name
