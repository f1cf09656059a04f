"""Signs that a page is an empty shell filled in by JavaScript in the browser.

The harvester reads the HTML as the server sends it and runs no JavaScript,
so metadata injected by a client-side app is invisible to it. The signs:
script bundles, an empty application root (`<div id="root"></div>`,
`<app-root>`), a `<noscript>` notice asking for JavaScript.
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

_ROOT_IDS = frozenset(
    {"root", "app", "__next", "__nuxt", "___gatsby", "q-app", "svelte", "main-app", "application"}
)
_ROOT_TAG = re.compile(r"^(app-root|[a-z][a-z0-9]*-(root|app))$")
_BUNDLE = re.compile(r"(bundle|chunk|main|app|vendor|runtime|polyfills|index)[.\-\w]*\.m?js", re.I)


def _is_empty(element: HtmlElement) -> bool:
    return len(element) == 0 and not (element.text or "").strip()


def _empty_roots(tree: HtmlElement) -> list[str]:
    found: list[str] = []
    for element in tree.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        ident = element.get("id") or ""
        if ident in _ROOT_IDS and _is_empty(element):
            found.append(f'<{tag} id="{ident}">')
        elif _ROOT_TAG.match(tag) and _is_empty(element):
            found.append(f"<{tag}>")
    return found


def _bundles(tree: HtmlElement) -> list[str]:
    sources = [s.get("src") or "" for s in tree.iter("script") if s.get("src")]
    modules = [s for s in tree.iter("script") if (s.get("type") or "").lower() == "module"]
    named = [src.rsplit("/", 1)[-1] for src in sources if _BUNDLE.search(src)]
    if named:
        return named
    return sources[:3] if (sources and modules) else []


def _noscript_notice(tree: HtmlElement) -> str | None:
    for element in tree.iter("noscript"):
        text = " ".join(element.text_content().split())
        if "javascript" in text.lower():
            return text[:120]
    return None


def _visible_text(tree: HtmlElement, limit: int = 400) -> int:
    """Characters of text a reader sees in the body (scripts, styles, noscript excluded)."""
    seen = 0
    for body in tree.iter("body"):
        for element in body.iter():
            if element.tag in ("script", "style", "noscript", "template"):
                continue
            seen += len((element.text or "").strip())
            parent = element.getparent()
            if parent is not None and parent.tag not in ("script", "style", "noscript"):
                seen += len((element.tail or "").strip())
            if seen > limit:
                break
    return seen


def shell_signs(tree: HtmlElement) -> list[str]:
    """Plain-words signs of client-side rendering; empty when the page does not look like one.

    Script bundles plus an empty application root; or bundles plus a <noscript>
    notice on a page whose body shows (almost) no text of its own.
    """
    bundles = _bundles(tree)
    roots = _empty_roots(tree)
    notice = _noscript_notice(tree)
    if notice and not roots and _visible_text(tree) > 200:
        notice = None  # a server-rendered page that also asks for JavaScript somewhere
    if not bundles or not (roots or notice):
        return []
    signs = [f"script bundles ({', '.join(bundles[:3])})"]
    if roots:
        signs.append(f"an empty application root {roots[0]}")
    if notice:
        signs.append(f'a <noscript> notice ("{notice}")')
    return signs
