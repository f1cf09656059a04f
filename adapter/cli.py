"""The `adapter` command: a thin shell over the library.

Each verb lives in `adapter/commands/<area>.py` and is imported only when it
runs, so `adapter check-dataset` does not pay for the database layer or the
scheduler. Exit codes: 0 ok, 1 the checked thing fails, 2 usage,
configuration or environment error.
"""

from __future__ import annotations

import importlib
import logging
import sys

import click

from adapter import __version__
from adapter.errors import AdapterError

# verb -> "module:attribute" of a click command
COMMANDS: dict[str, str] = {
    "check-dataset": "adapter.commands.check:check_dataset_command",
    "findings": "adapter.commands.check:findings",
    "discover": "adapter.commands.discover:discover",
    "sync": "adapter.commands.sync:sync",
    "runs": "adapter.commands.sync:runs",
    "pages": "adapter.commands.pages:pages",
    "db": "adapter.commands.sync:db",
    "queue": "adapter.commands.queue:queue",
    "demo": "adapter.commands.demo:demo",
    "config": "adapter.commands.config:config",
    "schedule": "adapter.commands.config:schedule",
    "status": "adapter.commands.config:status",
    "serve": "adapter.commands.serve:serve",
    "worker": "adapter.commands.worker:worker",
    "web": "adapter.commands.web:web",
}


def _load(name: str) -> click.Command | None:
    module_name, _, attr = COMMANDS[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    command = getattr(module, attr, None)
    return command if isinstance(command, click.Command) else None


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _load(name) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _load(cmd_name) if cmd_name in COMMANDS else None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="adapter")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """DataONE slender-node adapter: harvest schema.org Dataset landing pages for DataONE."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def main() -> None:
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
