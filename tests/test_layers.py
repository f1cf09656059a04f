"""The import graph: no module-level import cycle anywhere.

import-linter's layers contract (pyproject.toml, run by `.ci/run` and the
pre-commit hook as `lint-imports`, once: not here too) keeps packages
pointing down; a cycle between two modules of one package is below its
sight, so it is looked for here, in the graph grimp builds from every import
statement, those inside function bodies included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by the two tests: not by every xdist worker as it collects
    import grimp


def _imports(graph: grimp.ImportGraph, module: str) -> Iterator[str]:
    return iter(sorted(graph.find_modules_directly_imported_by(module)))


def strongly_connected(graph: grimp.ImportGraph) -> list[set[str]]:
    """Tarjan's components of more than one module (iterative: the graph is deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, _imports(graph, root))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_module_imports_itself_back() -> None:
    import grimp

    graph = grimp.build_graph("adapter")
    # a package's __init__ imports nothing, so a package never closes a cycle by itself
    assert strongly_connected(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    import grimp

    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.z")
    graph.add_import(importer="a.z", imported="a.x")
    assert strongly_connected(graph) == [{"a.x", "a.y", "a.z"}]
