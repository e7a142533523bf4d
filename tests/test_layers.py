"""The import graph: no cycle inside toolwire, and the core imports nothing above it.

Read from the source with ``ast``: every import a module makes when it is
imported (module level, ``try`` blocks included; ``if TYPE_CHECKING:`` blocks
and imports inside functions excluded, since neither runs at import time).
Importing ``toolwire.a.b`` also runs ``toolwire/a/__init__.py``, so it counts
as importing the package ``toolwire.a`` as well, unless the importer is inside
that package (it is then already being imported); the root package, which
every import passes through, is left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import toolwire

SRC = Path(toolwire.__file__).resolve().parent
CORE = {
    "toolwire._calls",
    "toolwire._json",
    "toolwire._jsonstream",
    "toolwire._parts",
    "toolwire._repair",
    "toolwire.accumulate",
    "toolwire.codecs",
    "toolwire.decoder",
    "toolwire.errors",
    "toolwire.events",
    "toolwire.framing",
    "toolwire.limits",
    "toolwire.sse",
    "toolwire.types",
}
"""The sans-I/O core (and what it is built from): each name with its submodules."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def _runtime_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        if isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            ):
                yield from _runtime_statements(node.orelse)
                continue
            yield from _runtime_statements(node.body)
            yield from _runtime_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _runtime_statements(block)
            for handler in node.handlers:
                yield from _runtime_statements(handler.body)
        else:
            yield node


def _targets(name: str, node: ast.stmt) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{node.module}" if node.module else package
        else:
            base = node.module or ""
        yield base
        yield from (f"{base}.{alias.name}" for alias in node.names)


def imports(name: str) -> set[str]:
    """The toolwire modules that importing ``name`` imports directly."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in _runtime_statements(tree.body):
        for target in _targets(name, node):
            parts = target.split(".")
            for n in range(2, len(parts) + 1):
                candidate = ".".join(parts[:n])
                # A package that is an ancestor of the importer is already
                # being imported: its submodules import without it.
                if candidate in MODULES and not (name + ".").startswith(candidate + "."):
                    out.add(candidate)
    return out


GRAPH = {name: imports(name) for name in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def in_core(name: str) -> bool:
    return any(name == core or name.startswith(core + ".") for core in CORE)


def test_the_graph_is_read_from_the_source() -> None:
    assert "toolwire.agent" in GRAPH and "toolwire.decoder" in GRAPH["toolwire.agent"] | {
        m for m in GRAPH["toolwire.agent"] for m in GRAPH[m]
    }
    assert "toolwire.accumulate" in GRAPH["toolwire.decoder"]


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_there_is_no_import_cycle_inside_toolwire() -> None:
    assert cycles(GRAPH) == []


def test_the_core_imports_nothing_above_it() -> None:
    upward = {
        name: sorted(target for target in targets if not in_core(target))
        for name, targets in GRAPH.items()
        if in_core(name)
    }
    assert {name: targets for name, targets in upward.items() if targets} == {}


def test_the_run_value_types_sit_below_the_loop_the_journal_and_the_observers() -> None:
    for name in ("toolwire.run", "toolwire.loop", "toolwire.observe"):
        reached = _reach(name)
        assert "toolwire.agent" not in reached, name
        assert "toolwire.journal" not in reached, name


def _reach(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in GRAPH[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
