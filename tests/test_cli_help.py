"""`adapter --help`: every verb listed without importing any, with examples, exit codes and
the environment, fitted to the terminal; each verb's help has its examples and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from adapter.cli import COMMANDS, ENVIRONMENT, _load
from tests.support.cli import run_in_process

ROOT = Path(__file__).resolve().parents[1]

# what `adapter --help` loaded, printed after the help
PROBE = """
import sys
from adapter.cli import cli
cli.main(["--help"], standalone_mode=False)
print("MODULES", " ".join(sorted(sys.modules)))
"""


def help_text(*args: str, columns: int) -> str:
    """`adapter ARGS --help` through the entry point, in the test process."""
    result = run_in_process([*args, "--help"], ROOT, env={"COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_short_help_is_the_commands_own(name: str) -> None:
    command = _load(name)
    assert command is not None
    assert COMMANDS[name].short_help == command.get_short_help_str(limit=1000)


def test_help_imports_no_command_module_and_no_database_layer() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    modules = result.stdout.split("MODULES", 1)[1].split()
    heavy = [
        m for m in modules if m.startswith(("adapter.commands", "sqlalchemy", "adapter.pipeline"))
    ]
    assert heavy == []
    for name in COMMANDS:
        assert name in result.stdout


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_top_level_help_fits_the_terminal_and_documents_exits_and_environment(
    columns: int,
) -> None:
    text = help_text(columns=columns)
    assert max(len(line) for line in text.splitlines()) <= columns
    for section in ("Examples:", "Exit codes:", "Environment:"):
        assert section in text
    for code in ("130", "ADAPTER_LIMITS"):
        assert code in text
    for variable, _ in ENVIRONMENT:
        assert variable in text


def _verbs() -> list[list[str]]:
    out = []
    for name in sorted(COMMANDS):
        command = _load(name)
        if isinstance(command, click.Group):
            out += [[name, sub] for sub in command.commands]
            if command.epilog:
                out.append([name])
        else:
            out.append([name])
    return out


@pytest.mark.parametrize("verb", _verbs(), ids=" ".join)
def test_each_verb_has_examples_and_exit_codes(verb: list[str]) -> None:
    command = _load(verb[0])
    assert command is not None
    for sub in verb[1:]:
        assert isinstance(command, click.Group)
        command = command.commands[sub]
    parent = command if len(verb) == 1 else _load(verb[0])
    assert parent is not None
    text = (command.epilog or "") + (parent.epilog or "")
    assert "Examples:" in text and "Exit codes:" in text
