"""Configuration problems in words an operator understands.

Pydantic's messages ("Input should be a valid number, unable to parse string
as a number") are translated into what to write instead, with the key path
and the line of the file; unknown keys get the allowed keys and a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from adapter.config.settings import field_model, known_keys
from adapter.errors import ConfigError

PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True, slots=True)
class Problem:
    path: tuple[str | int, ...]
    reason: str
    line: int | None = None


def key_path(path: Sequence[str | int]) -> str:
    """('nodes', 1, 'schedule', 'cron') -> 'nodes[1].schedule.cron'; odd keys quoted."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not PLAIN_KEY.fullmatch(str(part)):
            text += f"[{json.dumps(str(part))}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def kind_of(value: Any) -> str:
    """A value as an operator would name it: 'a list', "'fast'", 'nothing (null)'."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if value is None:
        return "nothing (null)"
    return _shown(value)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _parent_model(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return None
        if isinstance(part, int):
            continue
        current = field_model(current, part)
    return current


def _unknown_key(model: type[BaseModel], loc: Sequence[str | int]) -> str:
    parent = _parent_model(model, loc[:-1])
    if parent is None:
        return "unknown key"
    known = known_keys(parent)
    close = get_close_matches(str(loc[-1]), known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown key{hint}; allowed here: {', '.join(known)}"


_SIMPLE = {
    "missing": "required key is missing",
    "string_type": "must be text, got {kind}",
    "int_type": "must be a whole number, got {kind}",
    "int_parsing": "must be a whole number, got {kind}",
    "int_from_float": "must be a whole number, got {kind}",
    "float_type": "must be a number, got {kind}",
    "float_parsing": "must be a number, got {kind}",
    "bool_type": "must be true or false, got {kind}",
    "bool_parsing": "must be true or false, got {kind}",
    "list_type": "must be a list, got {kind}",
    "tuple_type": "must be a list, got {kind}",
    "dict_type": "must be a mapping of keys to values, got {kind}",
    "model_type": "must be a mapping of keys to values, got {kind}",
    "model_attributes_type": "must be a mapping of keys to values, got {kind}",
    "greater_than": "must be greater than {gt}, got {kind}",
    "greater_than_equal": "must be at least {ge}, got {kind}",
    "less_than": "must be less than {lt}, got {kind}",
    "less_than_equal": "must be at most {le}, got {kind}",
    "string_too_short": "must not be empty",
    "too_short": "must hold at least {min_length} item(s)",
    "literal_error": "must be one of {expected}, got {kind}",
    "enum": "must be one of {expected}, got {kind}",
}


def describe_error(model: type[BaseModel], error: ErrorDetails) -> str:
    """One pydantic error as an operator-facing reason."""
    kind = error["type"]
    loc = tuple(error["loc"])
    if kind == "extra_forbidden":
        return _unknown_key(model, loc)
    template = _SIMPLE.get(kind)
    if template is not None:
        context = {k: _number(v) for k, v in (error.get("ctx") or {}).items()}
        return template.format(kind=kind_of(error.get("input")), **context)
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return message


def _line(lines: Mapping[tuple[str | int, ...], int], path: tuple[str | int, ...]) -> int | None:
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


class ConfigProblems(ConfigError):
    """A ConfigError that keeps its problems apart, for `adapter config check --json`."""

    def __init__(self, name: str, problems: Sequence[Problem]) -> None:
        self.name = name
        self.problems = tuple(problems)
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        return [f"{self.name}: {key_path(p.path)}: {p.reason}{_at(p.line)}" for p in self.problems]

    def as_dicts(self) -> list[dict[str, Any]]:
        return [
            {"file": self.name, "path": key_path(p.path), "reason": p.reason, "line": p.line}
            for p in self.problems
        ]


def _at(line: int | None) -> str:
    return f" (line {line})" if line else ""


def problems_error(
    name: str, problems: Sequence[Problem], lines: Mapping[tuple[str | int, ...], int]
) -> ConfigProblems:
    """Every distinct problem, located and in file order, as one ConfigError.

    Its message has one line per problem: 'FILE: key.path: reason (line N)'.
    """
    located = [Problem(p.path, p.reason, p.line or _line(lines, p.path)) for p in problems]
    located.sort(key=lambda p: p.line or 0)
    unique = list(dict.fromkeys(located))
    return ConfigProblems(name, unique)
