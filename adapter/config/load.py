"""YAML file -> validated, frozen `AdapterConfig`, with every problem at once.

The file is read safely, with secrets from the environment
(`adapter.config.yaml_source`); `defaults:` are deep-merged under each node (a node's
values win, lists are replaced, not joined); then each node is validated into
`adapter.config.settings` models. Every problem, whatever its kind, is collected and
raised together as one `ConfigError` whose lines read
``FILE: nodes[1].schedule.cron: reason (line N)``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ValidationError

from adapter.config.errors import Problem, describe_error, kind_of, problems_error
from adapter.config.settings import AdapterConfig, NodeSettings
from adapter.config.yaml_source import (
    TooLarge,
    YamlPath,
    compose,
    plaintext_password,
    read_text,
    substitute_env,
)
from adapter.discovery.sitegraph import SITEGRAPH_SUFFIXES

TOP_KEYS = (
    "store_url",
    "log_format",
    "log_level",
    "parallel_nodes",
    "parallel_discoveries",
    "check_processes",
    "auth",
    "access_log",
    "ops_token",
    "defaults",
    "nodes",
)
DEFAULT_SECTIONS = ("schedule", "politeness", "scope", "limits", "checks", "dataone", "sync")
SCHEDULE_KINDS = ("cron", "interval_minutes")


def _merge(base: Any, override: Any) -> Any:
    """Deep-merge mappings (override wins); anything else is replaced by `override`."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return copy.deepcopy(override)


def _node_with_defaults(defaults: Mapping[str, Any], node: Any) -> Any:
    if not isinstance(node, Mapping):
        return node
    merged = dict(node)
    for section, default in defaults.items():
        own = node.get(section)
        if section == "schedule" and _names_kind(own):  # the node's own kind of schedule wins
            default = {k: v for k, v in default.items() if k not in SCHEDULE_KINDS}
        merged[section] = _merge(default, own) if section in node else copy.deepcopy(default)
    return merged


def _names_kind(schedule: Any) -> bool:
    return isinstance(schedule, Mapping) and any(k in schedule for k in SCHEDULE_KINDS)


def _has_path(data: Any, path: YamlPath) -> bool:
    for key in path:
        in_list = isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data)
        if not (in_list or (isinstance(data, Mapping) and key in data)):
            return False
        data = data[key]
    return True


def _check_defaults(defaults: Any, problems: list[Problem]) -> dict[str, Any]:
    if defaults is None:
        return {}
    if not isinstance(defaults, Mapping):
        problems.append(Problem(("defaults",), "must be a mapping of sections"))
        return {}
    good: dict[str, Any] = {}
    for key, value in defaults.items():
        if key not in DEFAULT_SECTIONS:
            problems.append(Problem(("defaults", key), _unknown(str(key), list(DEFAULT_SECTIONS))))
        elif value is not None and not isinstance(value, Mapping):
            problems.append(Problem(("defaults", key), "must be a mapping of keys to values"))
        elif value is not None:
            good[key] = value
    return good


def _unknown(key: str, known: list[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(key, known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown key{hint}; allowed here: {', '.join(known)}"


def _validate_nodes(
    raw_nodes: Any, defaults: Mapping[str, Any], problems: list[Problem]
) -> list[NodeSettings]:
    if not isinstance(raw_nodes, list) or not raw_nodes:
        problems.append(Problem(("nodes",), "must be a list with at least one node"))
        return []
    nodes: list[NodeSettings] = []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(raw_nodes):
        merged = _node_with_defaults(defaults, raw)
        try:
            nodes.append(NodeSettings.model_validate(merged))
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                loc = tuple(error["loc"])
                # a value that came from `defaults:` is reported there, once
                from_defaults = _has_path(defaults, loc) and not _has_path(raw, loc)
                path = ("defaults", *loc) if from_defaults else ("nodes", index, *loc)
                problems.append(Problem(path, describe_error(NodeSettings, error)))
        node_id = raw.get("id") if isinstance(raw, Mapping) else None
        if isinstance(node_id, str):
            if node_id in first_index:
                reason = f"{node_id} is already the id of nodes[{first_index[node_id]}]"
                problems.append(Problem(("nodes", index, "id"), reason + "; ids must be unique"))
            first_index.setdefault(node_id, index)
    return nodes


def parse_config(text: str, source: Path | None = None) -> AdapterConfig:
    """Validate configuration text; raise ConfigError listing every problem."""
    name = str(source) if source else "<config>"
    try:
        data, lines, problems = compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = f"not valid YAML: {getattr(exc, 'problem', None) or exc}"
        raise problems_error(name, [Problem((), reason, line)], {}) from None
    except TooLarge as exc:
        raise problems_error(name, [Problem((), str(exc))], {}) from None
    if not isinstance(data, Mapping):
        got = kind_of(data) if data is not None else "an empty file"
        reason = f"must be a mapping with a 'nodes' list, got {got}"
        raise problems_error(name, [Problem((), reason)], {})
    for key in data:
        if key not in TOP_KEYS:
            problems.append(Problem((str(key),), _unknown(str(key), list(TOP_KEYS))))
    if plaintext_password(data.get("store_url")):
        problems.append(
            Problem(
                ("store_url",),
                "holds a password; put it in an environment variable instead, "
                "e.g. postgresql://adapter:${PGPASSWORD}@db.example/adapter",
            )
        )
    data = substitute_env(dict(data), problems)
    if any(p.reason.startswith("this key") for p in problems):
        raise problems_error(name, problems, lines)  # which value was meant is unknown
    defaults = _check_defaults(data.get("defaults"), problems)
    nodes = _validate_nodes(data.get("nodes"), defaults, problems)
    top = {k: v for k, v in data.items() if k in TOP_KEYS and k not in ("defaults", "nodes")}
    try:
        config = AdapterConfig.model_validate({**top, "nodes": nodes or [_PLACEHOLDER]})
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            loc = tuple(error["loc"])
            if loc and loc[0] != "nodes":  # node problems were reported node by node
                problems.append(Problem(loc, describe_error(AdapterConfig, error)))
        config = None
    if problems or config is None:
        raise problems_error(name, problems, lines)
    return config.model_copy(update={"source": source})


def load_config(path: str | Path) -> AdapterConfig:
    """Read and validate a configuration file; ConfigError lists every problem."""
    path = Path(path)
    return parse_config(read_text(path), path)


def _url_place(url: str) -> str:
    path = urlsplit(url).path.lower()
    if path.endswith("/robots.txt"):
        return "robots_urls"
    if path.endswith((".xml", ".xml.gz", ".txt", ".gz")) or "sitemap" in path:
        return "sitemap_urls"
    if path.endswith(SITEGRAPH_SUFFIXES):
        return "sitegraph_urls"
    return "entry_urls"


# Quick mode's subjects when none is given: a node id is not a person, and DataONE
# reads submitter, rightsHolder and contactSubject as people (or groups) who can act.
# These DNs name no one, say what they are, and are easy to find and replace.
PLACEHOLDER_SUBJECTS: dict[str, str] = {
    "submitter": "CN=adapter-placeholder-submitter,DC=dataone,DC=org",
    "rights_holder": "CN=adapter-placeholder-rights-holder,DC=dataone,DC=org",
    "contact_subject": "CN=adapter-placeholder-contact,DC=dataone,DC=org",
}


def placeholder_subjects(node: NodeSettings) -> list[str]:
    """The `dataone` settings of a node that still hold a placeholder subject."""
    d1 = node.dataone
    values = {
        "submitter": d1.submitter,
        "rights_holder": d1.rights_holder,
        "contact_subject": d1.contact_subject,
    }
    return [key for key, value in values.items() if value == PLACEHOLDER_SUBJECTS[key]]


def placeholder_notices(node: NodeSettings) -> list[str]:
    """A line for the run summary when the node's records carry placeholder subjects.

    Quick mode (`adapter sync URL`) names no person: its submitter and rightsHolder
    are `PLACEHOLDER_SUBJECTS`. Every run says so, since what it writes carries them."""
    names = {"submitter": "submitter", "rights_holder": "rightsHolder"}
    held = [names[key] for key in placeholder_subjects(node) if key in names]
    if not held:
        return []
    values = ", ".join(PLACEHOLDER_SUBJECTS[k] for k in names if names[k] in held)
    settings = " and ".join(f"dataone.{k}" for k in names if names[k] in held)
    plural = "s" if len(held) > 1 else ""
    notice = (
        f"this node publishes placeholder {' and '.join(held)} subject{plural} ({values}); "
        f"set real ones with {settings} in a configuration file (`adapter sync --config FILE`)"
    )
    if "submitter" in held:  # DataONE never changes a published object's submitter
        notice += "; objects already published keep their submitter"
    return [notice]


def quick_node(url: str, node_id: str, **overrides: Any) -> NodeSettings:
    """A node for one URL with every other value at its default (`adapter sync URL`).

    The URL becomes a robots.txt, sitemap or entry URL by its shape; submitter,
    rights holder and contact are the `PLACEHOLDER_SUBJECTS` unless `dataone=`
    says otherwise. Overrides are sections as mappings (or settings), or
    top-level values such as `name=`.
    """
    raw: dict[str, Any] = {
        "id": node_id,
        "name": node_id.removeprefix("urn:node:") or node_id,
        "start": {_url_place(url): [url]},
        "dataone": dict(PLACEHOLDER_SUBJECTS),
    }
    for key, value in overrides.items():
        if isinstance(value, BaseModel):
            value = value.model_dump(by_alias=True, exclude_defaults=True)
        raw[key] = _merge(raw[key], value) if key in raw else value
    try:
        return NodeSettings.model_validate(raw)
    except ValidationError as exc:
        problems = [
            Problem(tuple(e["loc"]), describe_error(NodeSettings, e))
            for e in exc.errors(include_url=False)
        ]
        raise problems_error(f"node {node_id!r}", problems, {}) from None


_PLACEHOLDER = NodeSettings.model_validate(
    {
        "id": "urn:node:placeholder",
        "name": "placeholder",
        "start": {"entry_urls": ["https://placeholder.invalid/"]},
        "dataone": {"submitter": "x", "rights_holder": "x", "contact_subject": "x"},
    }
)
