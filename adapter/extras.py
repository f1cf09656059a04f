"""The optional parts of the adapter (pyproject.toml's extras): is one installed, and if not, what
to install, in one line.

Why: the base install is what `adapter demo` and a SQLite node need. PostgreSQL's driver,
granian, pyshacl and Playwright are extras, so a feature that needs one checks for it where the
command starts and says which extra to install, instead of failing with an ImportError deep
inside SQLAlchemy or a forked worker.
"""

from __future__ import annotations

import importlib.util

from adapter.errors import ConfigError

PACKAGE = "dataone-slender-adapter"
# the module a feature imports -> the extra that installs it
EXTRAS = {
    "psycopg": "postgres",
    "granian": "granian",
    "pyshacl": "shacl",
    "playwright": "render",
    "coarnotify": "notify",
}


class MissingExtra(ConfigError):
    """A feature was asked for whose extra is not installed (exit 2, as any ConfigError)."""


def installed(module: str) -> bool:
    """Whether `module` can be imported (without importing it: some take a second)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module set to None
        return False


def install_hint(module: str) -> str:
    extra = EXTRAS[module]
    return f"pip install '{PACKAGE}[{extra}]' (in a checkout: pip install -e '.[{extra}]')"


def require(module: str, feature: str) -> None:
    """MissingExtra naming `feature`, the missing module and the extra, unless it is installed."""
    if not installed(module):
        raise MissingExtra(
            f"{feature} needs {module}, which is not installed: {install_hint(module)}"
        )
