"""The `adapter` command: a thin shell over the library.

Each verb lives in `adapter/commands/<area>.py` and is imported only when it
runs, so `adapter check-dataset` does not pay for the database layer or the
scheduler. Exit codes: 0 ok, 1 the checked thing fails, 2 usage,
configuration or environment error.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import sys
from dataclasses import dataclass

import click

from adapter import __version__
from adapter.errors import AdapterError
from adapter.startup import collector_done, collector_paused


@dataclass(frozen=True, slots=True)
class Verb:
    """Where a verb's click command lives, and its one-line help for `adapter --help`.

    The help is kept here so that listing the verbs imports none of them (0.7 s
    of imports before; tests/test_cli_help.py keeps it equal to the command's own).
    """

    target: str  # "module:attribute" of a click command
    short_help: str


COMMANDS: dict[str, Verb] = {
    "check-dataset": Verb(
        "adapter.commands.check:check_dataset_command",
        "Check whether DataONE can harvest the Dataset on the landing page URL.",
    ),
    "findings": Verb(
        "adapter.commands.check:findings",
        "List every finding code the adapter can report, with its severity and meaning.",
    ),
    "discover": Verb(
        "adapter.commands.discover:discover",
        "List the landing pages URL's robots.txt and sitemaps lead to, as they are found.",
    ),
    "sync": Verb(
        "adapter.commands.sync:sync",
        "Harvest member nodes into the store: discover, then process new and changed pages.",
    ),
    "runs": Verb("adapter.commands.sync:runs", "The run history: what each sync run saw and did."),
    "pages": Verb(
        "adapter.commands.pages:pages",
        "The store's landing pages with their last outcome (`pages show URL`: one's report).",
    ),
    "db": Verb("adapter.commands.sync:db", "The store's schema."),
    "import": Verb(
        "adapter.commands.imports:import_group",
        "Import a member node's objects from other software into the store.",
    ),
    "queue": Verb(
        "adapter.commands.queue:queue", "The outbox of sync records: list, show, export, ack."
    ),
    "notify": Verb(
        "adapter.commands.notify:notify",
        "COAR Notify: what repositories sent to the inbox, and what the adapter sent them.",
    ),
    "demo": Verb(
        "adapter.commands.demo:demo",
        "Sync the bundled demo repository into a local store and show where to look next.",
    ),
    "config": Verb("adapter.commands.config:config", "Work with the YAML configuration file."),
    "schedule": Verb(
        "adapter.commands.config:schedule",
        "Keep every node in sync on its schedule until SIGTERM or SIGINT (SIGHUP reloads).",
    ),
    "status": Verb(
        "adapter.commands.config:status",
        "Per node: the last run (when, how long, counts, errors) and the next one.",
    ),
    "serve": Verb(
        "adapter.commands.serve:serve",
        "Serve the DataONE Member Node read API (v2 and v1) for each node.",
    ),
    "worker": Verb(
        "adapter.commands.worker:worker",
        "Claim and process the due pages of NODEs (all configured nodes when none).",
    ),
    "web": Verb(
        "adapter.commands.web:web",
        "Serve the check page: a landing page URL, DOI or pasted HTML/JSON-LD in, the report out.",
    ),
}

# The end of `adapter --help`: definition lists, so click wraps them to the terminal.
EXAMPLES = (
    ("adapter check-dataset https://example.org/d/1", "check one landing page"),
    ("adapter check-dataset --file draft.html", "check a page before it is published"),
    ("adapter demo", "the whole job on a bundled repository, offline"),
    ("adapter sync https://example.org/ --store sqlite:///h.db", "one sync run"),
    ("adapter runs --store sqlite:///h.db", "what the runs did"),
    ("adapter pages --store sqlite:///h.db --not-harvestable", "which pages, and why"),
    ("adapter COMMAND --help", "a command's options and examples"),
)
EXIT_CODES = (
    ("0", "ok"),
    ("1", "the checked thing fails (not harvestable, a run failed, nothing found)"),
    ("2", "a usage, configuration or environment error (one line says which)"),
    ("130", "stopped by Ctrl-C (SIGTERM stops schedule, serve and worker with 0)"),
)
ENVIRONMENT = (
    ("ADAPTER_CONFIG", "the configuration file of config, schedule and status"),
    ("ADAPTER_LIMITS", "limit overrides, name=value,... (e.g. max_page_bytes=5000000)"),
    ("ADAPTER_DEMO_URL", "where config/demo.yaml finds the demo repository"),
    ("${VAR}", "in a configuration file: secrets such as ADAPTER_DB_PASSWORD"),
    ("COLUMNS", "the width of the output (default: the terminal's)"),
)


def _load(name: str) -> click.Command | None:
    module_name, _, attr = COMMANDS[name].target.partition(":")
    try:
        with collector_paused():
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    command = getattr(module, attr, None)
    return command if isinstance(command, click.Command) else None


class LazyGroup(click.Group):
    """Verbs imported only when one runs; `--help` lists them from COMMANDS alone."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _load(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name].short_help) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for title, rows in (
            ("Examples", EXAMPLES),
            ("Exit codes", EXIT_CODES),
            ("Environment", ENVIRONMENT),
        ):
            with formatter.section(title):
                formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={
        "help_option_names": ["-h", "--help"],
        "max_content_width": 100,  # click fits help to the terminal (COLUMNS) up to this
    },
)
@click.version_option(__version__, prog_name="adapter")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """DataONE slender-node adapter: harvest schema.org Dataset landing pages for DataONE."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def main() -> None:
    atexit.register(collector_done)  # first, so that it runs after every other exit handler
    try:
        rv = cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except AdapterError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:  # a second Ctrl-C, outside click's own handling
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except OSError as exc:  # the environment: a folder, a port, a file the user named
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as exc:  # pragma: no cover - click returns it instead
        sys.exit(exc.exit_code)
    sys.exit(rv if isinstance(rv, int) else 0)
