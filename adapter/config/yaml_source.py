"""Reading a configuration file: safe YAML, located keys, secrets from the environment.

PyYAML's safe loader builds plain data only (no Python objects). Walking the
node tree finds duplicate keys (which YAML lets the last one win silently),
records the line of every key path for error messages, and bounds the size
after alias expansion (YAML "billion laughs"). `${VAR}` in a string value is
replaced from the environment (`${VAR:-fallback}` when unset or empty, `$$`
for a literal `$`), so secrets (database passwords, tokens) never live in the
file; a password written into a URL itself is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from adapter.config.errors import Problem
from adapter.errors import ConfigError

MAX_FILE_BYTES = 1024 * 1024  # a configuration file larger than this is refused
MAX_VALUES = 100_000  # values visited after alias expansion (YAML alias bombs)
MAX_DEPTH = 32  # nesting of mappings and lists (a real configuration needs about 6)
ENV_REF = re.compile(r"\$\$|\$\{([^}]*)\}")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

YamlPath = tuple[str | int, ...]


def read_text(path: Path) -> str:
    """The file's text; ConfigError when it is missing, too large or not UTF-8."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_FILE_BYTES} bytes; is this the right file?")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader: plain data only, no Python objects, no includes."""


class TooLarge(Exception):
    """The document is larger or deeper than any configuration needs; the reason says which."""


def compose(text: str) -> tuple[Any, dict[YamlPath, int], list[Problem]]:
    """Parse YAML text: the data, the line of each key path, and structural problems.

    Walking the node tree finds duplicate keys (which PyYAML silently lets the
    last one win) and bounds the size after alias expansion and the nesting.
    Raises yaml.YAMLError for bad syntax and TooLarge for hostile sizes.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except RecursionError:
        raise TooLarge(f"nested deeper than {MAX_DEPTH} levels; refusing to load it") from None
    finally:
        loader.dispose()
    lines: dict[YamlPath, int] = {}
    problems: list[Problem] = []
    if node is not None:
        _walk(node, (), lines, problems, [0])
    return data, lines, problems


def _walk(
    node: yaml.Node,
    path: YamlPath,
    lines: dict[YamlPath, int],
    problems: list[Problem],
    seen: list[int],
) -> None:
    seen[0] += 1
    if seen[0] > MAX_VALUES:
        raise TooLarge(f"expands to more than {MAX_VALUES} values (YAML aliases?); refusing it")
    if len(path) > MAX_DEPTH:
        raise TooLarge(f"nested deeper than {MAX_DEPTH} levels; refusing to load it")
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        keys: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in keys and key != "<<":
                line = key_node.start_mark.line + 1
                problems.append(Problem((*path, key), "this key appears twice", line))
            keys.add(key)
            _walk(value_node, (*path, key), lines, problems, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines, problems, seen)


def _substitute(value: Any, path: YamlPath, problems: list[Problem], budget: list[int]) -> Any:
    """Replace ${VAR} and ${VAR:-fallback} in every string value; $$ is a literal $."""
    budget[0] -= 1
    if budget[0] < 0:
        return value
    if isinstance(value, str):
        missing: list[str] = []

        def replace(match: re.Match[str]) -> str:
            if match.group(0) == "$$":
                return "$"
            name, has_default, default = match.group(1).partition(":-")
            if not ENV_NAME.fullmatch(name):
                missing.append(f"{match.group(0)!r} is not an environment variable reference")
                return ""
            if os.environ.get(name):
                return os.environ[name]
            if has_default:
                return default
            if name in os.environ:
                return ""
            missing.append(f"environment variable {name} is not set")
            return ""

        result = ENV_REF.sub(replace, value)
        problems.extend(Problem(path, reason) for reason in missing)
        return result
    if isinstance(value, Mapping):
        return {k: _substitute(v, (*path, k), problems, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, (*path, i), problems, budget) for i, v in enumerate(value)]
    return value


def plaintext_password(url: Any) -> bool:
    """True when a URL carries a password that does not come from ${VAR}."""
    if not isinstance(url, str):
        return False
    password = urlsplit(url).password
    return bool(password) and "${" not in str(password)


def substitute_env(data: Mapping[str, Any], problems: list[Problem]) -> dict[str, Any]:
    """`data` with ${VAR} replaced in every string value; unset variables become problems."""
    result: dict[str, Any] = _substitute(dict(data), (), problems, [MAX_VALUES])
    return result
