"""MkDocs hook: the reference pages, generated from the code at build time so they cannot drift.

The finding catalogue, the configuration keys with their defaults, the limits,
the report's JSON schema and the command-line help are read from the installed
`adapter` package; nothing generated is written into the docs folder.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

import click
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

LIMIT_DOCS: dict[str, str] = {}
STAGE_TITLES = {
    "fetch": "Fetch: the landing page over HTTP",
    "robots": "robots.txt",
    "sitemap": "Sitemaps",
    "discover": "Discovery",
    "extract": "Extract: JSON-LD blocks in the page",
    "normalize": "Normalize: JSON-LD to a schema.org Dataset",
    "dataone": "DataONE requirements",
    "soso": "science-on-schema.org recommendations",
    "signposting": "Signposting: typed links against the Dataset",
    "resolve": "Resolving a URL to its landing page",
    "follow": "Following signposting targets",
    "pipeline": "The adapter itself",
    "sync": "Sync runs",
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, text in reference_pages().items():
        files.append(File.generated(config, path, content=text))
    for plot in sorted((ROOT / "benchmarks").glob("*.svg")):  # BENCHMARKS.md links them there
        files.append(File.generated(config, f"benchmarks/{plot.name}", content=plot.read_bytes()))
    return files


ROOT = Path(__file__).resolve().parent.parent
# files at the repository's top that the site shows as pages of their own
TOP_FILES = {
    "architecture.md": "ARCHITECTURE.md",
    "benchmarks.md": "BENCHMARKS.md",
    "reliability.md": "RELIABILITY.md",
    "changelog.md": "CHANGELOG.md",
}


def reference_pages() -> dict[str, str]:
    return {
        # a top file's links into docs/ (BENCHMARKS.md's plots) are beside it on the site
        **{
            page: (ROOT / name).read_text("utf-8").replace("](docs/", "](")
            for page, name in TOP_FILES.items()
        },
        "reference/findings.md": findings_page(),
        "reference/configuration.md": configuration_page(),
        "reference/limits.md": limits_page(),
        "reference/report.md": report_page(),
        "reference/cli.md": cli_page(),
    }


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def findings_page() -> str:
    from adapter.findings import catalogue

    lines = [
        "# Finding codes",
        "",
        "Every code the adapter can report, generated from the code (`adapter findings` prints",
        "the same list). An **error** keeps DataONE from harvesting the Dataset as it stands; a",
        "**warning** is harvestable but should be fixed; **info** is worth knowing. The node's",
        "requirement profile (`checks.profile`) adds a `dataone/profile-unmet` error for each",
        "requirement a Dataset does not meet, and `checks.required` makes more warnings",
        "blocking (see the configuration reference).",
    ]
    by_stage: dict[str, list[Any]] = {}
    for t in catalogue():
        by_stage.setdefault(t.code.split("/")[0], []).append(t)
    for stage, declared in by_stage.items():
        lines += ["", f"## {STAGE_TITLES.get(stage, stage)}", ""]
        for t in declared:
            anchor = t.code.replace("/", "-")
            lines += [
                f"### `{t.code}` {{ #{anchor} }}",
                "",
                f"**{t.severity}** — {t.explanation}",
                "",
            ]
    return "\n".join(lines) + "\n"


def _comments(cls: type) -> dict[str, str]:
    """The trailing `# comment` of each field line in the class's source."""
    try:
        source, _start = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return {}
    out: dict[str, str] = {}
    tree = ast.parse(textwrap.dedent("".join(source)))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            line = source[node.lineno - 1]
            comment = line.split("#", 1)[1].strip() if "#" in line else ""
            if comment and not comment.startswith(("type:", "noqa")):
                out[node.target.id] = comment
    return out


def _type_name(annotation: Any) -> str:
    """A reader's name for a field type: Annotated validators dropped, unions and lists spelled."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        named = [_type_name(a) for a in args if a is not type(None)]
        return " or ".join(named) + (" (optional)" if type(None) in args else "")
    if origin in (tuple, list):
        return "list of " + _type_name(args[0]) if args else "list"
    if isinstance(annotation, type):
        return {"str": "text", "int": "integer", "float": "number", "bool": "true/false"}.get(
            annotation.__name__, annotation.__name__
        )
    return str(annotation)


def _default(field: Any) -> str:
    if field.default is PydanticUndefined:
        return "*(required)*" if field.default_factory is None else "*(see below)*"
    value = field.default
    if isinstance(value, BaseModel):
        return "*(see below)*"
    if value in ((), None, ""):
        return "—"
    return f"`{value!r}`" if not isinstance(value, str) else f"`{value}`"


def _model_rows(model: type[BaseModel], prefix: str, rows: list[str], nested: list[Any]) -> None:
    notes = _comments(model)
    for name, field in model.model_fields.items():
        key = field.alias or name
        annotation = field.annotation
        inner = [a for a in getattr(annotation, "__args__", ()) if isinstance(a, type)]
        sub = (
            annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel)
            else None
        )
        sub = sub or next((a for a in inner if issubclass(a, BaseModel)), None)
        path = f"{prefix}{key}"
        if sub is not None and sub is not model:
            nested.append((sub, path))
        doc = (
            notes.get(name, "") or LIMIT_DOCS.get(name, "")
            if prefix.endswith("limits.")
            else notes.get(name, "")
        )
        if sub is not None and not doc:
            own = sub.__dict__.get("__doc__") or ""
            doc = own.strip().split("\n")[0] or "see the keys below"
        rows.append(
            f"| `{path}` | {_cell(_type_name(annotation))} | {_default(field)} | {_cell(doc)} |"
        )


def configuration_page() -> str:
    from adapter.config.settings import AdapterConfig, NodeSettings
    from adapter.limits import documented

    LIMIT_DOCS.update({name: f"{doc} ({unit}; see Limits)" for name, _d, unit, doc in documented()})

    lines = [
        "# Configuration keys",
        "",
        "Every key of the YAML configuration, generated from the settings models that validate it",
        "(`adapter config check FILE` validates a file and names the key of every problem).",
        "Secrets come from the environment (`${VAR}`), never from the file.",
    ]
    for title, model, prefix in (
        ("The file", AdapterConfig, ""),
        ("A node (`nodes[]`)", NodeSettings, "nodes[]."),
    ):
        lines += ["", f"## {title}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        rows: list[str] = []
        queue: list[Any] = []
        _model_rows(model, prefix, rows, queue)
        while queue:
            sub, path = queue.pop(0)
            if sub is not NodeSettings:  # the nodes have a section of their own
                _model_rows(sub, f"{path}.", rows, queue)
        lines += rows
    return "\n".join(lines) + "\n"


def limits_page() -> str:
    from adapter.limits import documented

    lines = [
        "# Limits",
        "",
        "Every cap on size, time and depth, with its default. A node overrides them under",
        "`limits:`; `ADAPTER_LIMITS=name=value,...` overrides them for a whole process.",
        "",
        "| limit | default | unit | what it bounds |",
        "|---|---|---|---|",
    ]
    for name, default, unit, doc in documented():
        lines.append(f"| `{name}` | `{default}` | {unit} | {_cell(doc)} |")
    return "\n".join(lines) + "\n"


def report_page() -> str:
    import adapter.report.jsonview

    doc = inspect.getdoc(adapter.report.jsonview) or ""
    return (
        "# The JSON report\n\n`adapter check-dataset --json` prints it.\n\n"
        + doc.replace("::\n", ":\n\n```text").replace("\nA finding's", "```\n\nA finding's", 1)
        + "\n"
    )


def cli_page() -> str:
    from adapter.cli import COMMANDS, cli

    lines = [
        "# Command line",
        "",
        "Generated from `adapter --help` and each command's own help.",
        "",
    ]
    root = click.Context(cli, info_name="adapter")
    lines += ["## `adapter`", "", "```text", cli.get_help(root), "```", ""]
    for name in COMMANDS:
        command = cli.get_command(root, name)
        if command is None:
            continue
        lines += _command_help(command, f"adapter {name}", root)
    return "\n".join(lines) + "\n"


def _command_help(command: click.Command, name: str, parent: click.Context) -> list[str]:
    ctx = click.Context(command, info_name=name.split()[-1], parent=parent)
    out = [f"## `{name}`", "", "```text", command.get_help(ctx), "```", ""]
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            child = command.get_command(ctx, sub)
            if child is not None:
                out += _command_help(child, f"{name} {sub}", ctx)
    return out


if __name__ == "__main__":  # `python docs/hooks.py DIR`: write the pages to look at them
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "site-reference")
    for path, text in reference_pages().items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(text)
