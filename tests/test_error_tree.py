"""One error tree: every exception class toolwire defines lives in the
``toolwire/errors/`` package (one module per family, each class named from
``toolwire.errors``), and the tree drawn in the package's docstring (which
the API reference renders) is the tree the classes form."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
from pathlib import Path

import toolwire
from toolwire import errors

SRC = Path(toolwire.__file__).resolve().parent
_BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
_FOREIGN_EXCEPTIONS = {"ClickException"}
"""Exception bases from dependencies that toolwire subclasses."""


def _class_bases() -> dict[tuple[str, str], list[str]]:
    """(file, class name) -> the last part of each base's name, for every
    class defined anywhere under src/toolwire, nested ones included."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                rel = path.relative_to(SRC).as_posix()
                found[(rel, node.name)] = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
    return found


def exception_classes() -> set[tuple[str, str]]:
    """Every class under src/toolwire that derives, through any chain of
    toolwire classes, from an exception (or warning) class."""
    classes = _class_bases()
    exceptional = _BUILTIN_EXCEPTIONS | _FOREIGN_EXCEPTIONS
    found: set[tuple[str, str]] = set()
    grew = True
    while grew:
        grew = False
        for key, bases in classes.items():
            if key not in found and any(b in exceptional for b in bases):
                found.add(key)
                exceptional.add(key[1])
                grew = True
    return found


def test_the_scan_finds_exceptions_through_toolwire_bases() -> None:
    found = exception_classes()
    # LeaseLost derives from RunLeased, which derives from JournalError.
    assert ("errors/_journal.py", "LeaseLost") in found
    assert ("errors/_usage.py", "UnpricedCostWarning") in found
    assert ("errors/_protocol.py", "UnfinishedCall") not in found


def test_every_exception_class_lives_in_errors_py() -> None:
    # A class whose name starts with "_" is a module's private signal,
    # raised and caught inside it (a turn that broke, an exact parse needed),
    # never seen by a caller: it stays beside the code it steers.
    outside = sorted(
        f"{path}: {name}"
        for path, name in exception_classes()
        if not path.startswith("errors/") and not name.startswith("_")
    )
    assert outside == []


def documented_tree() -> dict[str, list[str]]:
    """Each class the docstring's tree names -> its bases as drawn: the entry
    it is indented under, then any base named in its parentheses
    (``ArgumentsParseError(ValueError; .position)``; names starting with a dot
    are attributes). A root drawn without a base derives from ``Exception``."""
    doc = errors.__doc__ or ""
    block = doc.split("The tree::\n", 1)[1]
    lines = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith(" "):
            break
        lines.append(line)
    tree: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []
    for line in lines:
        indent = len(line) - len(line.lstrip())
        m = re.match(r"(\w+)(?:\(([^)]*)\))?", line.strip())
        if not line.strip() or indent >= 20 or m is None:
            continue  # a blank line, or a description's continuation
        name, inside = m[1], m[2] or ""
        named = [
            base.strip()
            for part in inside.split(";")
            for base in part.split(",")
            if base.strip() and not base.strip().startswith(".")
        ]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = [stack[-1][1]] if stack else []
        tree[name] = parent + named if parent or named else ["Exception"]
        stack.append((indent, name))
    return tree


def defined_exceptions() -> dict[str, type]:
    return {
        name: value
        for name, value in vars(errors).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == errors.__name__
    }


def test_the_documented_tree_is_the_tree_of_the_classes() -> None:
    tree = documented_tree()
    classes = defined_exceptions()
    assert set(classes) <= set(tree), "missing from the tree"
    assert set(tree) - set(classes) <= _BUILTIN_EXCEPTIONS, "drawn but not defined"
    for name, cls in classes.items():
        assert tree[name] == [base.__name__ for base in cls.__bases__], name


def test_every_class_of_the_family_modules_is_named_from_errors() -> None:
    # Reprs, pickles and the API reference say ``toolwire.errors.X``, whichever
    # family module defines it; and each family's class is the package's.
    families = [p for p in sorted((SRC / "errors").glob("_*.py")) if p.stem != "__init__"]
    assert len(families) >= 5
    for path in families:
        module = importlib.import_module(f"toolwire.errors.{path.stem}")
        for name in module.__all__:
            assert getattr(errors, name) is getattr(module, name), name
    assert "LeaseLost" in defined_exceptions()  # found by its module: the package's
    stand_in = errors.RemoteToolError.standing_for("bad", "Picky", False, None)
    assert type(stand_in).__module__ == "toolwire.errors"


def test_every_error_is_exported_from_errors() -> None:
    assert set(defined_exceptions()) <= set(errors.__all__)
    assert list(errors.__all__) == sorted(set(errors.__all__))


def test_the_moved_errors_keep_their_old_import_paths() -> None:
    from toolwire import journal, mcp, testing, tools
    from toolwire.stream import _repair, jsonio
    from toolwire.stream.codecs import emulation, openai_schema

    assert journal.JournalError is errors.JournalError
    assert journal.RunLeased is errors.RunLeased
    assert journal.LeaseLost is errors.LeaseLost
    assert journal.ApprovalRefused is errors.ApprovalRefused
    assert tools.ApprovalFailed is errors.ApprovalFailed
    assert mcp.MCPToolError is errors.MCPToolError
    assert testing.CassetteError is errors.CassetteError
    assert testing.ScenarioError is errors.ScenarioError
    assert jsonio.JSONLimitError is errors.JSONLimitError
    assert _repair.ArgumentsParseError is errors.ArgumentsParseError
    assert emulation.BadRequest is errors.BadRequest
    assert openai_schema.NotStrictCompatible is errors.NotStrictCompatible
    assert toolwire.JournalError is errors.JournalError
    assert toolwire.RunLeased is errors.RunLeased


def test_a_ray_stand_in_pickles_as_itself() -> None:
    import pickle

    err = errors.RemoteToolError.standing_for("bad", "Picky", True, 2.0)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and type(back).__name__ == "Picky"
    assert isinstance(back, errors.ToolFailed)
    assert (back.message, back.transient, back.retry_after) == ("bad", True, 2.0)
