"""The shape of ``app`` as a whole: no import cycle between its modules, no module too long.

import-linter (``lint-imports``) keeps the layers and the contracts between packages; this test
looks one level down, at modules: a cycle there (even one only for type hints) means two modules
that cannot be read, tested or moved one without the other, and a break is usually a small
``Protocol`` or a shared base module. The graph is grimp's, the library import-linter runs on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"
MAX_LINES = 500  # the house rule; a module rarely needs more than 400
EXEMPT = (APP / "store" / "migrations",)  # generated and append-only


def _import_graph() -> dict[str, set[str]]:
    """Every ``app`` module and the ``app`` modules it imports, type-checking imports included."""
    # No cache_dir: a test writes nothing into the working tree.
    graph = grimp.build_graph("app", exclude_type_checking_imports=False, cache_dir=None)
    return {
        module: {imported for imported in graph.find_modules_directly_imported_by(module) if imported.startswith("app")}
        for module in graph.modules
        if module.startswith("app")
    }


def _cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def _describe(group: list[str], graph: Mapping[str, Iterable[str]]) -> str:
    members = set(group)
    arrows = [f"    {a} -> {b}" for a in group for b in sorted(set(graph[a]) & members)]
    return " <-> ".join(group) + "\n" + "\n".join(arrows)


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_among_app_modules() -> None:
    graph = _import_graph()
    assert "app.core.cstat" in graph and "app.core.clock" in graph["app.core.recovery"]  # the graph is real
    cycles = _cycles(graph)
    report = "\n".join(_describe(group, graph) for group in cycles)
    assert not cycles, (
        f"{len(cycles)} import cycle(s) inside app (break each with a Protocol or a base module):\n{report}"
    )


def test_no_module_over_500_lines() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in APP.rglob("*.py")
        if not any(path.is_relative_to(folder) for folder in EXEMPT)
    }
    assert len(sizes) > 100  # every module was read
    too_long = sorted((lines, name) for name, lines in sizes.items() if lines > MAX_LINES)
    listing = "\n".join(f"    {name}: {lines} lines" for lines, name in reversed(too_long))
    assert not too_long, f"{len(too_long)} module(s) over {MAX_LINES} lines (split each into cohesive ones):\n{listing}"
