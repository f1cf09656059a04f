"""RFC 8288 `Link` header fields (and RFC 9264 `application/linkset`) -> `Link` values.

A cursor over the field value in the spirit of RFC 8288 Appendix B, never a
split on commas: commas and semicolons inside `<...>` and quoted strings are
data. Real headers are messier than the grammar, so what can be repaired
without guessing is repaired with a warning (a missing comma between
link-values, a doubled `>`), and what cannot (a target without `<...>`, text
that is not a parameter) is skipped with a finding naming the entry. The
parser never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urljoin

from adapter.findings import Finding, FindingType, Severity
from adapter.limits import DEFAULT_LIMITS
from adapter.models import Link, LinkSource
from adapter.signposting.linkformat import decode_ext as _decode_ext
from adapter.signposting.linkformat import media_type as _media_type

MALFORMED = FindingType(
    "signposting/link-malformed",
    Severity.WARNING,
    "A typed link could not be read and was skipped (a target without <...>, an unclosed "
    "bracket or quote, or text that is not a link parameter). Clients that follow RFC 8288 "
    "will not see it either.",
)
MISSING_COMMA = FindingType(
    "signposting/link-missing-comma",
    Severity.WARNING,
    "Two links follow each other without the comma RFC 8288 requires between them; the "
    "adapter read both, stricter clients may read only the first.",
)
DOUBLED_BRACKET = FindingType(
    "signposting/link-doubled-bracket",
    Severity.WARNING,
    "A link target ends in '>>'; the adapter dropped the extra '>', other clients may not.",
)
WITHOUT_REL = FindingType(
    "signposting/link-without-rel",
    Severity.WARNING,
    "A link has no rel parameter, so it says nothing and was skipped.",
)
REPEATED_PARAM = FindingType(
    "signposting/link-repeated-param",
    Severity.WARNING,
    "A link repeats rel, type, title or anchor; RFC 8288 says only the first counts, so the "
    "later ones were ignored.",
)
TOO_MANY = FindingType(
    "signposting/too-many-links",
    Severity.WARNING,
    "The page carries more typed links than the limit (limits.max_links); the rest were ignored.",
)

_OWS = " \t\r\n"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SINGLE = ("rel", "anchor", "type", "title", "title*", "media")  # first occurrence counts
_KNOWN = (*_SINGLE, "profile")
_TOKEN_STOP = _OWS + "=;,"


@dataclass(slots=True)
class ParsedLinks:
    links: list[Link] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    truncated: bool = False  # the max_links cap was reached


def is_extension_rel(rel: str) -> bool:
    """Extension relation types are absolute URIs; registered ones are bare names."""
    return bool(_SCHEME.match(rel))


def normalize_rel(rel: str) -> str:
    """Registered relation types compare case-insensitively; URIs are kept as written."""
    return rel if is_extension_rel(rel) else rel.lower()


def resolve(base: str, ref: str) -> str | None:
    """`ref` made absolute against `base` (RFC 3986 § 5); None when it cannot be."""
    ref = ref.strip()
    if _SCHEME.match(ref):
        return ref
    try:
        return urljoin(base, ref)
    except ValueError:
        return None


def parse_link_fields(
    fields: Iterable[str],
    context: str,
    *,
    source: LinkSource = "header",
    max_links: int = DEFAULT_LIMITS.max_links,
    label: str = "Link header",
) -> ParsedLinks:
    """Every link in `fields` (each a Link field value as sent), context `context`."""
    out = ParsedLinks()
    for value in fields:
        if out.truncated:
            break
        _Cursor(value, context, source, max_links, label, out).run()
    return out


class _Cursor:
    """One field value being read; appends to a shared `ParsedLinks`."""

    def __init__(
        self, text: str, context: str, source: LinkSource, cap: int, label: str, out: ParsedLinks
    ) -> None:
        self.s = text
        self.i = 0
        self.context = context
        self.source = source
        self.cap = cap
        self.label = label
        self.out = out

    def note(self, kind: FindingType, message: str) -> None:
        self.out.findings.append(kind.at(self.context, f"{self.label}: {message}", self.label))

    def skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1

    def run(self) -> None:
        s = self.s
        while True:
            self.skip(_OWS + ",")
            if self.i >= len(s):
                return
            if s[self.i] != "<":
                start = self.i
                self.i = _entry_end(s, self.i)
                self.note(
                    MALFORMED, f"entry without <...> around its target: {_show(s[start : self.i])}"
                )
                continue
            close = s.find(">", self.i + 1)
            if close < 0:
                self.note(MALFORMED, f"unclosed '<': {_show(s[self.i :])}")
                return
            target = s[self.i + 1 : close]
            self.i = close + 1
            if self.i < len(s) and s[self.i] == ">":
                self.skip(">")
                self.note(DOUBLED_BRACKET, f"target {_show(target)} is followed by '>>'")
            params = self.params()
            self.after_link(target)
            if not self.emit(target, params):
                return

    def after_link(self, target: str) -> None:
        """Check what follows a link-value: a comma, the end, or a repairable slip."""
        self.skip(_OWS)
        s = self.s
        if self.i >= len(s) or s[self.i] == ",":
            return
        if s[self.i] == "<":
            self.note(MISSING_COMMA, f"no comma after the link to {_show(target)}")
            return
        start = self.i
        self.i = _entry_end(s, self.i)
        self.note(
            MALFORMED,
            f"unexpected text after the link to {_show(target)}: {_show(s[start : self.i])}",
        )

    def params(self) -> list[tuple[str, str]]:
        s = self.s
        params: list[tuple[str, str]] = []
        while True:
            self.skip(_OWS)
            if self.i >= len(s) or s[self.i] != ";":
                return params
            self.i += 1
            self.skip(_OWS)
            start = self.i
            while self.i < len(s) and s[self.i] not in _TOKEN_STOP:
                self.i += 1
            name = s[start : self.i].lower()
            self.skip(" \t")
            value = ""
            if self.i < len(s) and s[self.i] == "=":
                self.i += 1
                self.skip(" \t")
                value = self.value()
            if name:
                params.append((name, value))

    def value(self) -> str:
        s = self.s
        if self.i < len(s) and s[self.i] == '"':
            chars: list[str] = []
            self.i += 1
            while self.i < len(s):
                c = s[self.i]
                if c == "\\" and self.i + 1 < len(s):
                    chars.append(s[self.i + 1])
                    self.i += 2
                    continue
                self.i += 1
                if c == '"':
                    return "".join(chars)
                chars.append(c)
            self.note(MALFORMED, f"unclosed quoted string: {_show(''.join(chars))}")
            return "".join(chars)
        start = self.i
        while self.i < len(s) and s[self.i] not in ";," + _OWS:
            self.i += 1
        return s[start : self.i]

    def emit(self, target: str, params: list[tuple[str, str]]) -> bool:
        """Turn one link-value into Links; False once the cap is reached."""
        first: dict[str, str] = {}
        extra: list[tuple[str, str]] = []
        repeated: list[str] = []
        for name, value in params:
            if name in _SINGLE and name in first:
                repeated.append(name)
            elif name in _KNOWN and name not in first:
                first[name] = value
            else:
                extra.append((name, value))
        if repeated:
            self.note(
                REPEATED_PARAM,
                f"link to {_show(target)} repeats "
                f"{', '.join(sorted(set(repeated)))}; the first value counts",
            )
        rels = first.get("rel", "").split()
        if not rels:
            self.note(WITHOUT_REL, f"link to {_show(target)} has no rel")
            return True
        href = resolve(self.context, target)
        anchor = resolve(self.context, first["anchor"]) if "anchor" in first else self.context
        if href is None or anchor is None:
            self.note(MALFORMED, f"target or anchor is not a usable URI: {_show(target)}")
            return True
        title = _decode_ext(first["title*"]) if "title*" in first else first.get("title")
        attrs = [("title", title)] if title is not None else []
        if "media" in first:
            attrs.append(("media", first["media"]))
        for rel in rels:
            if len(self.out.links) >= self.cap:
                self.out.truncated = True
                self.note(TOO_MANY, f"more than {self.cap} links; the rest were ignored")
                return False
            self.out.links.append(
                Link(
                    href=href,
                    rel=normalize_rel(rel),
                    anchor=anchor,
                    source=self.source,
                    type=_media_type(first.get("type")),
                    profile=first.get("profile") or None,
                    extra=tuple(attrs + extra),
                )
            )
        return True


def _entry_end(s: str, i: int) -> int:
    """Index of the next comma outside quotes and brackets (or the end)."""
    quoted = bracket = False
    while i < len(s):
        c = s[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "<":
            bracket = True
        elif c == ">":
            bracket = False
        elif c == "," and not bracket:
            return i
        i += 1
    return i


def _show(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")
