"""RFC 9264 link sets, both formats, -> `Link` values with source "linkset".

`application/linkset` is the Link header syntax (newlines allowed), read by
the same RFC 8288 parser; `application/linkset+json` is a JSON object whose
sole member `linkset` is an array of link context objects. What real
repositories publish is read as far as it can be, each deviation a finding:
the misspelled `application/json+linkset` (FAIR-SP § 1.4 itself had it), a
wrapper object such as Dataverse's `{"data": {"linkset": ...}}`, relation
values or extension attributes that are strings instead of arrays, and
missing or relative anchors (FAIR-SP § 1.4 requires absolute ones).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from adapter.findings import Finding, FindingType, Severity
from adapter.limits import DEFAULT_LIMITS
from adapter.models import Link
from adapter.signposting.linkheader import (
    TOO_MANY,
    ParsedLinks,
    normalize_rel,
    parse_link_fields,
    resolve,
)
from adapter.signposting.links import url_key

JSON_TYPES = ("application/linkset+json", "application/json+linkset")
TEXT_TYPE = "application/linkset"
ACCEPT_LINKSET = (
    "application/linkset+json, application/linkset;q=0.9, application/json;q=0.5, */*;q=0.1"
)

TYPE_MISSING = FindingType(
    "signposting/linkset-type-missing",
    Severity.WARNING,
    "A 'linkset' link has no type attribute; FAIR Signposting (§ 2.2) requires it "
    "(application/linkset or application/linkset+json).",
)
UNREACHABLE = FindingType(
    "signposting/linkset-unreachable",
    Severity.WARNING,
    "A link set the page points to could not be fetched, so its links were not read.",
)
MEDIA_TYPE = FindingType(
    "signposting/linkset-media-type",
    Severity.WARNING,
    "A link set is served (or announced) with the wrong media type; use "
    "application/linkset+json or application/linkset.",
)
INVALID = FindingType(
    "signposting/linkset-invalid",
    Severity.WARNING,
    "A link set does not follow RFC 9264 (broken JSON, no 'linkset' array, relations that "
    "are not arrays, targets without href); what could be read was kept.",
)
WRAPPED = FindingType(
    "signposting/linkset-wrapped",
    Severity.WARNING,
    'The JSON link set is wrapped in another object (such as {"data": ...}); RFC 9264 '
    "requires 'linkset' to be the sole top-level member, so other clients will not find it.",
)
ANCHOR = FindingType(
    "signposting/linkset-anchor",
    Severity.WARNING,
    "Links in a link set must name their context with an absolute anchor (FAIR-SP § 1.4); "
    "some have none or a relative one.",
)
NOT_FOR_PAGE = FindingType(
    "signposting/linkset-not-for-page",
    Severity.WARNING,
    "The link set has no links whose anchor is this landing page, so none of them count for "
    "it (check the anchors: http vs https, trailing slash, another URL of the page).",
)


def parse_linkset(
    body: bytes,
    content_type: str,
    url: str,
    *,
    max_links: int = DEFAULT_LIMITS.max_links,
) -> ParsedLinks:
    """The links of a link set fetched from `url` and served as `content_type`."""
    text = body.decode("utf-8", errors="replace")
    as_json = content_type in JSON_TYPES or (
        content_type != TEXT_TYPE and text.lstrip().startswith(("{", "["))
    )
    out = _parse_json(text, url, max_links) if as_json else _parse_text(text, url, max_links)
    if content_type not in (*JSON_TYPES, TEXT_TYPE) or content_type == "application/json+linkset":
        right = JSON_TYPES[0] if as_json else TEXT_TYPE
        out.findings.insert(
            0,
            MEDIA_TYPE.at(
                url,
                f"link set served as {content_type or '(no type)'!r}; it should be {right!r}",
                "Content-Type",
            ),
        )
    return out


def check_linkset_link(link: Link) -> list[Finding]:
    """FAIR-SP § 2.2: the link that points to a link set carries its media type."""
    if link.type is None:
        return [
            TYPE_MISSING.at(
                link.anchor,
                f"the linkset link to {link.href} has no type attribute",
                "rel=linkset",
            )
        ]
    if link.type == "application/json+linkset" or link.type not in (*JSON_TYPES, TEXT_TYPE):
        return [
            MEDIA_TYPE.at(
                link.anchor,
                f"the linkset link to {link.href} announces type {link.type!r}",
                "rel=linkset",
            )
        ]
    return []


def check_anchors(links: Sequence[Link], url: str, landing_urls: Iterable[str]) -> list[Finding]:
    """A finding when no link of the set `url` is about the landing page."""
    keys = {url_key(u) for u in landing_urls}
    if not links or any(url_key(link.anchor) in keys for link in links):
        return []
    anchors = sorted({link.anchor for link in links})
    shown = ", ".join(anchors[:3]) + (" ..." if len(anchors) > 3 else "")
    message = f"no link in {url} is anchored at the landing page; its anchors are {shown}"
    return [NOT_FOR_PAGE.at(url, message, "anchor")]


def _parse_text(text: str, url: str, cap: int) -> ParsedLinks:
    out = parse_link_fields([text], url, source="linkset", max_links=cap, label="linkset")
    if any(link.anchor == url for link in out.links):
        out.findings.append(
            ANCHOR.at(
                url,
                "links in the link set have no anchor; they were "
                "taken to be about the link set itself",
                "anchor",
            )
        )
    return out


def _parse_json(text: str, url: str, cap: int) -> ParsedLinks:
    out = ParsedLinks()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        out.findings.append(INVALID.at(url, f"the JSON link set cannot be read: {_why(exc)}"))
        return out
    contexts = _contexts(data, url, out)
    for index, context in enumerate(contexts):
        where = f"linkset[{index}]"
        if not isinstance(context, dict):
            out.findings.append(INVALID.at(url, f"{where} is not an object", where))
            continue
        anchor = _anchor(context.get("anchor"), url, where, out)
        for rel, targets in context.items():
            if rel == "anchor":
                continue
            if not _targets(rel, targets, anchor, url, f"{where}.{rel}", out, cap):
                return out
    return out


def _contexts(data: object, url: str, out: ParsedLinks) -> list[object]:
    """The array of link context objects, unwrapped where a repository wrapped it."""
    if isinstance(data, dict) and "linkset" not in data:
        inner = next((v for v in data.values() if isinstance(v, dict) and "linkset" in v), None)
        if inner is not None:
            wrapper = next(k for k, v in data.items() if v is inner)
            out.findings.append(
                WRAPPED.at(url, f"'linkset' is inside {wrapper!r}, not at the top level", wrapper)
            )
            data = inner
    if isinstance(data, dict) and "linkset" in data:
        if len(data) > 1:
            others = ", ".join(sorted(str(k) for k in data if k != "linkset"))
            out.findings.append(
                INVALID.at(url, f"'linkset' should be the sole member; also found {others}", "$")
            )
        value = data["linkset"]
        if isinstance(value, dict):
            out.findings.append(INVALID.at(url, "'linkset' is an object, not an array", "linkset"))
            return [value]
        if isinstance(value, list):
            return value
    out.findings.append(INVALID.at(url, "no 'linkset' array at the top level", "$"))
    return []


def _anchor(value: object, url: str, where: str, out: ParsedLinks) -> str:
    if not isinstance(value, str) or not value.strip():
        out.findings.append(
            ANCHOR.at(
                url,
                f"{where} has no anchor; its links were taken to be about the link set itself",
                where,
            )
        )
        return url
    resolved = resolve(url, value)
    if resolved is None:
        out.findings.append(ANCHOR.at(url, f"{where} anchor {value!r} is not a URI", where))
        return url
    if resolved != value.strip():
        out.findings.append(ANCHOR.at(url, f"{where} anchor {value!r} is relative", where))
    return resolved


def _targets(
    rel: str, targets: object, anchor: str, url: str, where: str, out: ParsedLinks, cap: int
) -> bool:
    """Append the links of one relation; False once the cap is reached."""
    if isinstance(targets, dict | str):
        out.findings.append(INVALID.at(url, f"{where} is not an array of target objects", where))
        targets = [targets]
    if not isinstance(targets, list):
        out.findings.append(INVALID.at(url, f"{where} is not an array of target objects", where))
        return True
    for target in targets:
        if isinstance(target, str):
            target = {"href": target}
        href = target.get("href") if isinstance(target, dict) else None
        resolved = resolve(url, href) if isinstance(href, str) else None
        if not isinstance(target, dict) or resolved is None:
            out.findings.append(INVALID.at(url, f"{where} has a target without href", where))
            continue
        if len(out.links) >= cap:
            out.truncated = True
            out.findings.append(TOO_MANY.at(url, f"more than {cap} links in the link set"))
            return False
        out.links.append(_link(rel, resolved, anchor, target))
    return True


def _link(rel: str, href: str, anchor: str, target: dict[str, object]) -> Link:
    extra: list[tuple[str, str]] = []
    title = target.get("title")
    for item in _strings(target.get("title*")):
        title = item
    if isinstance(title, str):
        extra.append(("title", title))
    for name, value in target.items():
        if name not in ("href", "type", "title", "title*", "profile"):
            extra.extend((name, v) for v in _strings(value))
    type_ = target.get("type")
    profiles = _strings(target.get("profile"))
    return Link(
        href=href,
        rel=normalize_rel(rel),
        anchor=anchor,
        source="linkset",
        type=(type_.strip().lower() or None) if isinstance(type_, str) else None,
        profile=" ".join(profiles) or None,
        extra=tuple(extra),
    )


def _strings(value: object) -> list[str]:
    """An attribute as a list of strings: arrays (RFC 9264) and bare strings (the wild)."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("value")
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            out.append(str(item))
    return out


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:200]
