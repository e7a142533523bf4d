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
    "toolwire._compat",
    "toolwire.errors",
    "toolwire.events",
    "toolwire.messages",
    "toolwire.stream",
    "toolwire.types",
}
"""The sans-I/O core (the ``stream`` package) and the value types it is built
from: each name with its submodules; and the home of older names, which imports
nothing of toolwire, so that every layer may name its old names there."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def _runtime_statements(body: list[ast.stmt], *, type_checking: bool = False) -> Iterator[ast.stmt]:
    """The module-level statements, ``if TYPE_CHECKING:`` blocks included only
    when ``type_checking`` (what a type checker reads)."""
    for node in body:
        if isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            ):
                if type_checking:
                    yield from _runtime_statements(node.body, type_checking=True)
                yield from _runtime_statements(node.orelse, type_checking=type_checking)
                continue
            yield from _runtime_statements(node.body, type_checking=type_checking)
            yield from _runtime_statements(node.orelse, type_checking=type_checking)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _runtime_statements(block, type_checking=type_checking)
            for handler in node.handlers:
                yield from _runtime_statements(handler.body, type_checking=type_checking)
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


def imports(name: str, *, type_checking: bool = False, everywhere: bool = False) -> set[str]:
    """The toolwire modules that importing ``name`` imports directly (or, with
    ``type_checking``, that a type checker reads for it; or, with
    ``everywhere``, that any of its code ever imports: inside functions and
    ``if TYPE_CHECKING:`` blocks too)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    out: set[str] = set()
    nodes = (
        (node for node in ast.walk(tree) if isinstance(node, ast.stmt))
        if everywhere
        else _runtime_statements(tree.body, type_checking=type_checking)
    )
    for node in nodes:
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
    assert "toolwire.agent" in GRAPH and "toolwire.stream.decoder" in _reach("toolwire.agent")
    assert "toolwire.providers._reads" in GRAPH["toolwire.agent._driver"]
    assert "toolwire.stream.accumulate" in GRAPH["toolwire.stream.decoder"]


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_there_is_no_import_cycle_inside_toolwire() -> None:
    assert cycles(GRAPH) == []


def test_there_is_no_import_cycle_even_for_type_checkers() -> None:
    # A module that needs a type from a module importing it names what it
    # needs with a protocol (tools._call.CallSettings).
    graph = {name: imports(name, type_checking=True) for name in MODULES}
    assert cycles(graph) == []


def test_there_is_no_import_cycle_even_through_imports_inside_functions() -> None:
    # An import made late, inside a function, still ties the two modules
    # together: it only hides the circle from the interpreter.
    graph = {name: imports(name, everywhere=True) for name in MODULES}
    assert "toolwire.providers" in graph["toolwire.cli.demo"]  # a lazy import is seen
    assert "toolwire.providers" not in GRAPH["toolwire.cli.demo"]
    assert cycles(graph) == []


def test_the_http_layer_never_imports_the_journal() -> None:
    # The journal sits above the HTTP layer: it chooses the rate limiter's
    # default store (a PostgresRateStore on a PostgreSQL journal) and sets it
    # from above, so no import of it hides in an HTTP module's function.
    found = {
        name: sorted(
            target
            for target in imports(name, everywhere=True)
            if target == "toolwire.journal" or target.startswith("toolwire.journal.")
        )
        for name in MODULES
        if name == "toolwire.http" or name.startswith("toolwire.http.")
    }
    assert "toolwire.http._ratelimit" in found
    assert {name: targets for name, targets in found.items() if targets} == {}


def test_the_core_imports_nothing_above_it() -> None:
    upward = {
        name: sorted(target for target in targets if not in_core(target))
        for name, targets in GRAPH.items()
        if in_core(name)
    }
    assert {name: targets for name, targets in upward.items() if targets} == {}


def test_the_run_value_types_sit_below_the_loop_the_journal_and_the_observers() -> None:
    for name in ("toolwire.run", "toolwire.agent.loop", "toolwire.observe"):
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


def test_errors_and_types_do_not_import_each_other_even_for_type_checkers() -> None:
    # errors.py is the bottom of the house: not even a TYPE_CHECKING import
    # of the value types above it (StreamTruncated names what it reads of a
    # call with a protocol instead).
    tree = ast.parse((SRC / "errors.py").read_text())
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert not [name for name in imported if name.startswith("toolwire")]


PUBLIC_FACES = {
    "__init__",
    "__main__",
    "_compat",
    "backoff",
    "errors",
    "events",
    "messages",
    "observe",
    "ray",
    "run",
    "types",
}
"""The only modules directly under ``src/toolwire/``: public faces (value
types, errors, the observer protocol, the Ray entry point), ``__main__`` and
the one home of older names. Everything else lives in a package that says
which layer it belongs to."""


def test_only_public_faces_sit_at_the_top() -> None:
    assert {p.stem for p in SRC.glob("*.py")} == PUBLIC_FACES


def test_the_layers_are_packages() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert {"stream", "http", "agent", "tools", "journal", "testing"} <= packages


def test_the_home_of_older_names_imports_nothing_of_toolwire() -> None:
    assert GRAPH["toolwire._compat"] == set()
    assert imports("toolwire._compat", type_checking=True) == set()
