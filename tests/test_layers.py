"""The import graph: no cycle inside toolwire, the packages in the order the
docs draw, and no package reaching into another's private modules.

Read from the source with ``ast``: every import a module makes when it is
imported (module level, ``try`` blocks included; ``if TYPE_CHECKING:`` blocks
and imports inside functions excluded, since neither runs at import time).
Importing ``toolwire.a.b`` also runs ``toolwire/a/__init__.py``, so it counts
as importing the package ``toolwire.a`` as well, unless the importer is inside
that package (it is then already being imported); the root package, which
every import passes through, is left out.

The order and the privacy rule read every import, also those inside
functions and ``if TYPE_CHECKING:`` blocks: a late or a type-only import is
still a dependency of the code (and a type named from above or from another
package's private module is a type the reader cannot find where the layers
say it is).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolwire

SRC = Path(toolwire.__file__).resolve().parent
CORE = {
    "toolwire._compat",
    "toolwire.content",
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
    assert "toolwire.providers" in GRAPH["toolwire.agent._model_turns"]
    assert "toolwire.providers._reads" in GRAPH["toolwire.providers"]
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
    # An import made only for the type checker is in this graph, not in the
    # interpreter's: the model turns name HttpRequest under TYPE_CHECKING only.
    assert "toolwire.http" in graph["toolwire.agent._model_turns"]
    assert "toolwire.http" not in GRAPH["toolwire.agent._model_turns"]
    assert all(GRAPH[name] <= graph[name] for name in MODULES)
    assert cycles(graph) == []


def test_a_cycle_through_a_type_checking_import_is_found() -> None:
    # The interpreter's graph of a pair that names each other's types: one
    # way at import time, the other under TYPE_CHECKING only. No cycle runs,
    # and yet the type checker (and the reader) sees one.
    runtime = {"a": {"b"}, "b": set()}
    checked = {"a": {"b"}, "b": {"a"}}
    assert cycles(runtime) == [] and cycles(checked) == [["a", "b"]]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nimport toolwire.errors\n"
        "if TYPE_CHECKING:\n    import toolwire.agent\n"
    )
    seen = [
        alias.name
        for node in _runtime_statements(tree.body, type_checking=True)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    hidden = [
        alias.name
        for node in _runtime_statements(tree.body)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert seen == ["toolwire.errors", "toolwire.agent"] and hidden == ["toolwire.errors"]


def test_there_is_no_import_cycle_even_through_imports_inside_functions() -> None:
    # An import made late, inside a function, still ties the two modules
    # together: it only hides the circle from the interpreter.
    graph = {name: imports(name, everywhere=True) for name in MODULES}
    assert "toolwire.providers" in graph["toolwire.cli.demo"]  # a lazy import is seen
    assert "toolwire.providers" not in GRAPH["toolwire.cli.demo"]
    assert cycles(graph) == []


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
    # errors/ is the bottom of the house: not even a TYPE_CHECKING import
    # of the value types above it (StreamTruncated names what it reads of a
    # call with a protocol instead); its family modules import only each other.
    imported = []
    for path in sorted((SRC / "errors").glob("*.py")):
        tree = ast.parse(path.read_text())
        imported += [
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        ] + [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ]
    assert "toolwire.errors._base" in imported
    outside = [name for name in imported if name.startswith("toolwire")]
    assert [name for name in outside if not name.startswith("toolwire.errors.")] == []


PUBLIC_FACES = {
    "__init__",
    "__main__",
    "_compat",
    "backoff",
    "content",
    "events",
    "messages",
    "observe",
    "ray",
    "run",
    "types",
}
"""The only modules directly under ``src/toolwire/``: public faces (value
types, events, the observer protocol, the Ray entry point), ``__main__`` and
the one home of older names. Everything else lives in a package that says
which layer it belongs to."""


def test_only_public_faces_sit_at_the_top() -> None:
    assert {p.stem for p in SRC.glob("*.py")} == PUBLIC_FACES


def test_the_layers_are_packages() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert {"errors", "stream", "http", "agent", "tools", "journal", "testing"} <= packages


def test_the_home_of_older_names_imports_nothing_of_toolwire() -> None:
    assert GRAPH["toolwire._compat"] == set()
    assert imports("toolwire._compat", type_checking=True) == set()


# -- the order of the layers, and the privacy of each package's modules ---------

LAYERS: list[frozenset[str]] = [
    frozenset({"errors", "_compat"}),
    frozenset({"types", "backoff", "content"}),
    frozenset({"events", "messages"}),
    frozenset({"stream"}),
    frozenset({"cost", "http"}),
    frozenset({"tools", "providers"}),
    frozenset({"run", "ray"}),
    frozenset({"observe"}),
    frozenset({"journal"}),
    frozenset({"agent", "testing"}),
    frozenset({"adapters", "batch", "bridge", "examples", "mcp", "otel", "ui", "view"}),
    frozenset({"cli"}),
    frozenset({"toolwire", "__main__"}),
]
"""The layers, lowest first: each a set of units (a package or a module
directly under ``src/toolwire/``; ``toolwire`` is the root package, the
facade that names everything). A unit imports only units of lower layers:
two units of one layer import nothing of each other. docs/architecture.md
draws the same list (checked below)."""

ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"

EVERY_IMPORT = {name: imports(name, everywhere=True) for name in MODULES}
"""Every import of the code: at import time, in functions, for type checkers."""


def unit(module: str) -> str:
    """The package (or top-level module) ``module`` belongs to."""
    return "toolwire" if module == "toolwire" else module.split(".")[1]


def upward_imports(
    graph: dict[str, set[str]], layers: list[frozenset[str]]
) -> list[tuple[str, str]]:
    """``(importer, imported)`` for each import of a unit of the importer's
    own layer or of one above it."""
    rank = {name: n for n, layer in enumerate(layers) for name in layer}
    return sorted(
        (importer, target)
        for importer, targets in graph.items()
        for target in targets
        if unit(importer) != unit(target) and rank[unit(target)] >= rank[unit(importer)]
    )


def is_private(module: str) -> bool:
    """True when ``module`` is a private module of its unit (a name below
    the unit's that starts with ``_``, at any depth)."""
    return any(part.startswith("_") for part in module.split(".")[2:])


def private_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` for each import of another unit's private module."""
    return sorted(
        (importer, target)
        for importer, targets in graph.items()
        for target in targets
        if unit(importer) != unit(target) and is_private(target)
    )


def test_the_order_checker_catches_an_import_upwards_and_one_across() -> None:
    layers = [frozenset({"errors"}), frozenset({"http", "tools"}), frozenset({"agent"})]
    graph = {
        "toolwire.errors": {"toolwire.agent._driver"},  # upwards
        "toolwire.http._a": {"toolwire.tools", "toolwire.http._b"},  # across; inside
        "toolwire.agent": {"toolwire.tools", "toolwire.errors"},  # downwards
    }
    assert upward_imports(graph, layers) == [
        ("toolwire.errors", "toolwire.agent._driver"),
        ("toolwire.http._a", "toolwire.tools"),
    ]


def test_the_privacy_checker_catches_a_private_module_of_another_package() -> None:
    graph = {
        "toolwire.journal._a": {
            "toolwire.http._b",  # private, another package
            "toolwire.stream.codecs._c",  # private at any depth
            "toolwire.stream._d.e",  # inside a private package
            "toolwire.http.b",  # a public module
            "toolwire.http",  # the package itself
            "toolwire._compat",  # a module directly under toolwire/ is its own unit
            "toolwire.journal._f",  # private, but its own package's
        },
    }
    assert private_imports(graph) == [
        ("toolwire.journal._a", "toolwire.http._b"),
        ("toolwire.journal._a", "toolwire.stream._d.e"),
        ("toolwire.journal._a", "toolwire.stream.codecs._c"),
    ]


def test_every_unit_has_exactly_one_layer() -> None:
    placed = [name for layer in LAYERS for name in layer]
    assert len(placed) == len(set(placed))
    assert set(placed) == {unit(name) for name in MODULES}


def test_no_package_imports_one_of_its_own_layer_or_above() -> None:
    assert upward_imports(EVERY_IMPORT, LAYERS) == []


def test_no_package_imports_another_packages_private_modules() -> None:
    assert private_imports(EVERY_IMPORT) == []


def names_taken(name: str) -> set[tuple[str, str]]:
    """``(module, name)`` for each name that ``name`` imports from a toolwire
    module with ``from ... import``, anywhere in its code."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    return {
        (base, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for base in [next(_targets(name, node))]
        if base.startswith("toolwire")
        for alias in node.names
    }


def private_names(taken: dict[str, set[tuple[str, str]]]) -> list[tuple[str, str]]:
    """``(importer, module.name)`` for each ``_`` name (not a module: those
    are the graph's) that a module takes from another unit's module."""
    return sorted(
        (importer, f"{module}.{name}")
        for importer, pairs in taken.items()
        for module, name in pairs
        if unit(importer) != unit(module)
        and name.startswith("_")
        and not name.startswith("__")
        and f"{module}.{name}" not in MODULES
    )


def test_the_name_checker_catches_a_private_name_of_another_package() -> None:
    taken = {
        "toolwire.journal._a": {
            ("toolwire.http.urls", "_tail"),  # a private name of another package
            ("toolwire.http.urls", "split_url"),  # a public one
            ("toolwire", "_compat"),  # a module
            ("toolwire", "__version__"),  # a dunder
            ("toolwire.journal._b", "_c"),  # private, but its own package's
        },
    }
    assert private_names(taken) == [("toolwire.journal._a", "toolwire.http.urls._tail")]


def test_no_package_takes_another_packages_private_names() -> None:
    assert private_names({name: names_taken(name) for name in MODULES}) == []


def _root_names() -> set[str]:
    """The names the root package defines itself (not those it re-exports)."""
    tree = ast.parse(MODULES["toolwire"].read_text(encoding="utf-8"))
    return {
        target.id
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }


def test_no_module_takes_a_re_exported_name_from_the_root_package() -> None:
    # ``from toolwire import Agent`` inside toolwire would load the agent
    # through the facade's lazy names, unseen by the graph: a module names a
    # module (``from toolwire import _compat``) or what the root itself
    # defines (``__version__``).
    allowed = _root_names() | {name.rpartition(".")[2] for name in MODULES if name.count(".") == 1}
    assert "__version__" in allowed and "_compat" in allowed and "Agent" not in allowed
    found = sorted(
        (name, alias.name)
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "toolwire"
        for alias in node.names
        if alias.name not in allowed
    )
    assert found == []


def drawn_layers(text: str) -> list[frozenset[str]]:
    """The layers of the ``text`` block of docs/architecture.md that starts
    with ``layer``, lowest first: one row a layer, numbered from the top
    down, its units separated by `` · `` (``name/`` a package, ``name.py`` a
    module, ``__init__.py`` the root package), then two spaces and what
    they are."""
    blocks = re.findall(r"^```text\n(layer .*?)^```", text, re.M | re.S)
    assert len(blocks) == 1, "one ```text block starting with 'layer'"
    rows = []
    for line in blocks[0].splitlines()[1:]:
        match = re.match(r"\s*(\d+)\s+(\S+(?: · \S+)*)(?:\s{2,}.*)?$", line)
        assert match, f"not a layer row: {line!r}"
        names = {name.removesuffix("/").removesuffix(".py") for name in match.group(2).split(" · ")}
        rows.append(
            (int(match.group(1)), frozenset("toolwire" if n == "__init__" else n for n in names))
        )
    numbers = [number for number, _ in rows]
    assert numbers == list(range(len(rows), 0, -1)), "rows numbered from the top down to 1"
    return [names for _, names in reversed(rows)]


def test_the_layer_reader_reads_a_drawing() -> None:
    text = (
        "# x\n\n```text\nlayer  units    what\n"
        "  2   agent/ · __init__.py  the top\n  1   errors.py       the bottom\n```\n"
    )
    assert drawn_layers(text) == [frozenset({"errors"}), frozenset({"agent", "toolwire"})]
    # A unit drawn in another row is another list; rows out of order are refused.
    moved = text.replace("agent/ · __init__.py", "__init__.py").replace(
        "errors.py", "errors.py · agent/"
    )
    assert drawn_layers(moved) == [frozenset({"errors", "agent"}), frozenset({"toolwire"})]
    with pytest.raises(AssertionError, match="numbered"):
        drawn_layers(text.replace("  2 ", "  3 "))


def test_the_architecture_page_draws_the_layers_that_are_enforced() -> None:
    assert drawn_layers(ARCHITECTURE.read_text(encoding="utf-8")) == LAYERS
