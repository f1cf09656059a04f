"""Whether a fetched page is one to render: an HTML page whose static HTML holds no Dataset.

`rendering.mode: auto` renders only those, so a repository that serves its JSON-LD
costs no browser. The test reads the JSON-LD as the extract stage does and looks for
a node typed Dataset, without normalizing it: a page thread decides this before the
page is checked (perhaps in another process), and framing is the expensive part.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from adapter.limits import Limits
from adapter.models import Fetched
from adapter.page.extract import extract

Mode = Literal["never", "auto", "always"]
MODES: tuple[Mode, ...] = ("never", "auto", "always")

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", ""})
_JSONLD = re.compile(rb"ld\+json", re.I)
_DATASET = re.compile(r"(^|[/:#])Dataset$")
_DEPTH = 32  # a Dataset deeper than this in a block is not looked for


def wants_rendering(fetched: Fetched, mode: Mode, limits: Limits) -> bool:
    """Whether to render `fetched` under `mode`: only HTML that answered 200."""
    if mode == "never" or fetched.status != 200 or fetched.truncated:
        return False
    if fetched.content_type not in _HTML_TYPES or fetched.body.lstrip()[:1] != b"<":
        return False
    return mode == "always" or not holds_dataset(fetched, limits)


def holds_dataset(fetched: Fetched, limits: Limits) -> bool:
    """Whether the page's own HTML has a JSON-LD (or markup) node typed schema.org Dataset."""
    if not _JSONLD.search(fetched.body) and b"itemtype" not in fetched.body:
        return False  # nothing a reader could find one in: no parse needed
    extraction = extract(
        fetched.body,
        url=fetched.final_url,
        content_type=fetched.content_type,
        charset=fetched.charset,
        limits=limits,
    )
    return any(_typed_dataset(block.data, 0) for block in extraction.blocks)


def _typed_dataset(value: Any, depth: int) -> bool:
    if depth > _DEPTH:
        return False
    if isinstance(value, list):
        return any(_typed_dataset(item, depth + 1) for item in value)
    if not isinstance(value, dict):
        return False
    for key in ("@type", "type"):
        kinds = value.get(key)
        for kind in kinds if isinstance(kinds, list) else [kinds]:
            if isinstance(kind, str) and _DATASET.search(kind.strip()):
                return True
    return any(_typed_dataset(item, depth + 1) for item in value.values())
