"""`license`: an SPDX or Creative Commons URI, as science-on-schema.org (License) asks.

A licence may be a string, an `@id` or a node with a `url` (Dataverse publishes a node typed
Dataset or CreativeWork). Free text, a short id or another URI is a warning that proposes the
SPDX URI only for a licence it can name for sure (a word such as "proprietary" is no SPDX id).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from adapter.dataone.soso import codes
from adapter.dataone.soso.paths import at, show
from adapter.findings import Finding
from adapter.jsonld.framed import literal, node_id, values
from adapter.signposting.identities import license_key

_SPDX = re.compile(r"^https?://(?:www\.)?spdx\.org/licenses/[A-Za-z0-9.+\-]+(?:\.html|\.json)?/?$")
_CC = re.compile(
    r"^https?://(?:www\.)?creativecommons\.org/(?:licenses|publicdomain)/[a-z\-]+/\d\.\d", re.I
)
# licences data repositories use, by SPDX id: a short name or URI is only turned into an SPDX URI
# when it is one of these (a word such as "proprietary" is no SPDX id)
_COMMON_SPDX = {
    i.lower(): i
    for i in (
        "CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-NC-4.0", "CC-BY-ND-4.0", "CC-BY-NC-SA-4.0",
        "CC-BY-NC-ND-4.0", "CC-BY-3.0", "CC-BY-SA-3.0", "CC-BY-NC-3.0", "CC-BY-2.0", "CC-BY-2.5",
        "MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "GPL-2.0-only", "GPL-3.0-only",
        "GPL-3.0-or-later", "ODbL-1.0", "ODC-By-1.0", "PDDL-1.0", "Unlicense", "etalab-2.0",
        "OGL-UK-3.0", "OGL-Canada-2.0", "DL-DE-BY-2.0", "NLOD-2.0",
    )
}  # fmt: skip


def license_findings(dataset: Mapping[str, Any], url: str) -> Iterator[Finding]:
    items = values(dataset, "license")
    if not items:
        yield codes.LICENSE_MISSING.at(
            url,
            "The Dataset has no license; publish its SPDX or Creative Commons URI, e.g. "
            '"license": "https://spdx.org/licenses/CC-BY-4.0".',
            "$.license",
        )
        return
    for i, item in enumerate(items):
        path = at("license", i, len(items))
        text, path = _license_text(item, path)
        if text is None or not text.strip():
            yield codes.LICENSE_NOT_URI.at(
                url,
                f"{path} gives no licence URI (a node with no @id or url); publish the "
                "licence's SPDX URI, e.g. https://spdx.org/licenses/CC-BY-4.0.",
                f"$.{path}",
            )
            continue
        text = text.strip()
        if _SPDX.match(text) or _CC.match(text):
            continue
        instead = spdx_for(text)
        if "://" not in text:
            hint = (
                f"publish {instead}"
                if instead
                else "publish the licence's SPDX URI (https://spdx.org/licenses/<id>) or "
                "Creative Commons URI"
            )
            yield codes.LICENSE_NOT_URI.at(
                url, f"{path} is the text {show(text)}, not a URI: {hint}.", f"$.{path}"
            )
        else:
            hint = f"publish {instead} as well" if instead else "publish its SPDX URI as well"
            yield codes.LICENSE_UNKNOWN_URI.at(
                url,
                f"{path} is {text}, not an SPDX or Creative Commons licence URI; harvesters "
                f"cannot tell which licence it is: {hint}.",
                f"$.{path}",
            )


def spdx_for(text: str) -> str | None:
    """The SPDX URI of a common licence named by a short id ("CC BY 4.0") or another URI."""
    spelled = text.strip() if "://" in text else "-".join(text.split())
    key = license_key(spelled)
    found = _COMMON_SPDX.get(key.removeprefix("spdx:")) if key.startswith("spdx:") else None
    return f"https://spdx.org/licenses/{found}" if found else None


def _license_text(item: Any, path: str) -> tuple[str | None, str]:
    """The licence's text or IRI: a literal, an @id, or a CreativeWork's url."""
    if not isinstance(item, Mapping) or literal(item) is not None:
        return literal(item), path
    own = node_id(item)
    if own and not own.startswith("_:"):
        return own, path
    for prop in ("url", "identifier", "name"):
        for value in values(item, prop):
            text = literal(value) or node_id(value)
            if text and text.strip():
                return text, f"{path}.{prop}"
    return None, path
