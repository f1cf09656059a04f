"""An mnlite node's settings as the adapter's node configuration, and what has no equivalent.

mnlite keeps a node's values in `node.json` (the Node document's `node` section,
opersist's `default_submitter` / `default_owner`, the spider's `sitemap_urls` and
`url_rules`) and its spider settings in `settings.json` (`lastmod_filter`,
`url_match`, `which_jsonld`, `use_at_id`, `dedup_nodes`, `start_point`,
`reversed`; some installs keep them in node.json's `spider` section, read too).
Each setting that changes what is harvested maps to the node's YAML, or a note
says why it has none:

| mnlite | adapter |
|---|---|
| spider.sitemap_urls | start.sitemap_urls |
| url_match (a substring), spider.url_rules (regexes) | scope.include (regexes) |
| use_at_id | dataone.series_id_scheme: mnlite-at-id (else mnlite) |
| lastmod_filter | none: the frontier refetches a page when its lastmod moves |
| which_jsonld | none: every JSON-LD block is read, each Dataset its own series |
| alternate identifiers | none needed: they stay in the object's bytes |
| dedup_nodes | built in: a seriesId another node of the store holds is not written |
| access rules, replication, subjects | dataone.access_policy, replication, submitter, ... |

Pure: dictionaries in, the YAML mapping and the notes out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from adapter.store.mnlite import Thing


@dataclass(frozen=True, slots=True)
class SettingNote:
    """One mnlite setting: its value and what the adapter's configuration does with it."""

    setting: str
    value: str
    equivalent: str | None  # the YAML key it became, or None: no equivalent
    note: str


def _spider(node_json: dict[str, Any], settings_json: dict[str, Any]) -> dict[str, Any]:
    spider = node_json.get("spider")
    merged = dict(spider) if isinstance(spider, dict) else {}
    merged.update(settings_json)
    return merged


def _urls(value: object) -> list[str]:
    if isinstance(value, str):
        return [u for u in value.split() if u]
    if isinstance(value, list):
        return [str(u) for u in value if u]
    return []


def _common(values: Sequence[Any], fallback: Any) -> Any:
    """The value most things carry (mnlite sets these per object, the adapter per node)."""
    counted = Counter(values)
    return counted.most_common(1)[0][0] if counted else fallback


def _access_policy(things: Sequence[Thing]) -> list[dict[str, Any]] | None:
    common = _common([t.access for t in things if t.access], None)
    if not common:
        return None
    by_subject: dict[str, list[str]] = {}
    for rule in common:
        perms = by_subject.setdefault(rule.subject, [])
        if rule.permission not in perms:
            perms.append(rule.permission)
    return [{"subject": s, "permissions": p} for s, p in by_subject.items()]


def _replication(things: Sequence[Thing]) -> dict[str, Any]:
    common = _common(
        [
            (
                bool(t.replication_allowed),
                t.number_replicas or 0,
                t.replication_preferred,
                t.replication_blocked,
            )
            for t in things
        ],
        (False, 0, (), ()),
    )
    allowed, replicas, preferred, blocked = common
    return {
        "allowed": allowed,
        "number_replicas": replicas,
        "preferred": list(preferred),
        "blocked": list(blocked),
    }


def node_config(
    node_id: str,
    node_json: dict[str, Any],
    settings_json: dict[str, Any],
    things: Sequence[Thing],
) -> tuple[dict[str, Any], list[SettingNote], list[str]]:
    """The node's YAML mapping, a note per harvest setting, and warnings on the node's values."""
    node = node_json.get("node") if isinstance(node_json.get("node"), dict) else {}
    assert isinstance(node, dict)
    spider = _spider(node_json, settings_json)
    notes: list[SettingNote] = []
    warnings: list[str] = []
    if node.get("node_id") and node.get("node_id") != node_id:
        warnings.append(
            f"node.json names the node {node['node_id']}; the records are imported as {node_id}"
        )
    submitter = str(
        node_json.get("default_submitter")
        or _common([t.submitter for t in things if t.submitter], None)
        or node.get("subject")
        or ""
    )
    owner = str(
        node_json.get("default_owner")
        or _common([t.rights_holder for t in things if t.rights_holder], None)
        or submitter
    )
    dataone: dict[str, Any] = {
        "submitter": submitter,
        "rights_holder": owner,
        "contact_subject": str(node.get("contact_subject") or submitter),
        "replication": _replication(things),
        "checksum_algorithm": "MD5",
        "series_id_scheme": "mnlite",
        "resource_maps": False,  # mnlite published none: no new object for an unchanged Dataset
    }
    policy = _access_policy(things)
    if policy is not None:
        dataone["access_policy"] = policy
    varied = {t.access for t in things if t.access}
    if len(varied) > 1:
        warnings.append(
            f"the things carry {len(varied)} different access policies; the adapter serves one "
            "per node, the most common (dataone.access_policy): check it"
        )
    raw: dict[str, Any] = {
        "id": node_id,
        "name": str(node.get("name") or node_id.removeprefix("urn:node:")),
        "description": str(node.get("description") or ""),
        "start": _start(spider, things, notes),
        "checks": {"profile": "mnlite"},
        "dataone": dataone,
    }
    include = _include(spider, notes)
    if include:
        raw["scope"] = {"include": include}
    if _flag(spider.get("use_at_id")):
        dataone["series_id_scheme"] = "mnlite-at-id"
        notes.append(
            SettingNote(
                "use_at_id",
                str(spider.get("use_at_id")),
                "dataone.series_id_scheme",
                "mnlite-at-id: the Dataset's @id is its seriesId, else its first identifier",
            )
        )
    notes.extend(_without_equivalent(spider))
    return raw, notes, warnings


def _flag(value: object) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true", "yes")


def _start(spider: dict[str, Any], things: Sequence[Thing], notes: list[SettingNote]) -> Any:
    urls = _urls(spider.get("sitemap_urls"))
    if urls:
        notes.append(
            SettingNote("sitemap_urls", " ".join(urls), "start.sitemap_urls", "the same URLs")
        )
        return {"sitemap_urls": urls}
    origins = sorted(
        {f"{p.scheme}://{p.netloc}/" for t in things if t.source for p in [urlsplit(t.source)]}
    )
    notes.append(
        SettingNote(
            "sitemap_urls",
            "(none)",
            "start.entry_urls",
            "node.json names no sitemap; the sync starts from the pages' hosts' robots.txt",
        )
    )
    return {"entry_urls": origins[:1] or ["https://example.org/"]}


def _include(spider: dict[str, Any], notes: list[SettingNote]) -> list[str]:
    include: list[str] = []
    match = spider.get("url_match")
    if isinstance(match, str) and match:
        include.append(re.escape(match))
        notes.append(
            SettingNote("url_match", match, "scope.include", "a URL must contain it (as a regex)")
        )
    rules = spider.get("url_rules")
    for rule in rules if isinstance(rules, list) else []:
        pattern = rule[0] if isinstance(rule, list | tuple) and rule else rule
        if isinstance(pattern, str) and pattern:
            include.append(pattern)
            notes.append(
                SettingNote("url_rules", pattern, "scope.include", "the same regular expression")
            )
    return include


def _without_equivalent(spider: dict[str, Any]) -> list[SettingNote]:
    notes = []
    explain = {
        "lastmod_filter": (
            "not carried over: mnlite crawled only entries newer than it; the adapter's "
            "frontier fetches a page again only when its lastmod moves (or after "
            "sync.recheck_after_hours), and a page left out of discovery would be archived"
        ),
        "which_jsonld": (
            "no equivalent: the adapter reads every JSON-LD block of a page and syncs each "
            "Dataset as its own series; a Dataset mnlite left out starts a new series"
        ),
        "dedup_nodes": (
            "built in: import those nodes into the same store; a seriesId another node of "
            "the store holds is never written (sync/doi-of-other-node)"
        ),
        "alt_identifiers": (
            "no setting needed: every identifier stays in the object's bytes, and the "
            "seriesId follows dataone.series_id_scheme"
        ),
        "start_point": "no equivalent needed: the frontier resumes a sync where it stopped",
        "reversed": "no equivalent needed: the order pages are fetched in changes nothing",
    }
    for key, why in explain.items():
        if key in spider:
            notes.append(SettingNote(key, str(spider[key]), None, why))
    return notes
