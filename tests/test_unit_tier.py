"""``make unit`` installs toolwire with the ``unit`` extra alone, and its tests
import nothing more: the standard library, toolwire and its core
dependencies, the test helpers, pytest and Hypothesis."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10, where mypy (a dev dependency) brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
IMPORT_NAMES = {"pyyaml": "yaml", "typing-extensions": "typing_extensions"}


def _names(requirements: list[str]) -> set[str]:
    names = {re.split(r"[<>=!~\[ ;]", r)[0].lower() for r in requirements}
    return {IMPORT_NAMES.get(n, n.replace("-", "_")) for n in names}


def unit_tests() -> list[Path]:
    proc = subprocess.run(
        ["make", "--no-print-directory", "-s", "-f", "Makefile", "-f", "-", "unit-files"],
        input="unit-files:\n\t@echo $(UNIT_TESTS)\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [ROOT / name for name in proc.stdout.split()]


def imported(path: Path, *, top_level: bool = False) -> set[str]:
    """The top-level names of every absolute import in ``path`` (with
    ``top_level``, of those made when it is imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [n for n in tree.body if not isinstance(n, ast.If)] if top_level else ast.walk(tree)
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def helpers(files: list[Path]) -> list[Path]:
    """The test helpers that ``files`` import, and theirs, with the root
    conftest and its plugin (``tests._postgres``)."""
    seen = {ROOT / "tests" / "conftest.py", ROOT / "tests" / "_postgres.py"}
    todo = [*files, *seen]
    while todo:
        for name in imported(todo.pop()):
            module = ROOT / (name.replace(".", "/") + ".py")
            if name.startswith("tests.") and module.exists() and module not in seen:
                seen.add(module)
                todo.append(module)
    return sorted(seen)


def test_make_unit_installs_the_unit_extra_alone() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^unit: \$\(UNIT_STAMP\)$", makefile, re.M)
    rule = re.search(r"^\$\(UNIT_STAMP\):.*\n\t.*pip install .*-e '\.\[([^\]]*)\]'", makefile, re.M)
    assert rule is not None and rule.group(1) == "unit"
    assert _names(PYPROJECT["project"]["optional-dependencies"]["unit"]) == {
        "hypothesis",
        "pytest",
        "pytest_timeout",
    }


def test_the_unit_tests_import_only_what_make_unit_installs() -> None:
    files = unit_tests()
    assert len(files) > 20 and all(f.exists() for f in files)
    allowed = set(sys.stdlib_module_names) | {"toolwire", "tests", "pytest", "_pytest"}
    allowed |= _names(PYPROJECT["project"]["dependencies"]) | {"hypothesis"}
    found = {(path, name) for path in files for name in imported(path)}
    found |= {(path, name) for path in helpers(files) for name in imported(path, top_level=True)}
    strays = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path, name in found
        if name.split(".")[0] not in allowed
    )
    assert strays == []


def test_the_checker_sees_an_sdk_import(tmp_path: Path) -> None:
    test = tmp_path / "test_x.py"
    test.write_text("def test():\n    from google.genai import types\n", encoding="utf-8")
    assert imported(test) == {"google.genai"}
    assert imported(test, top_level=True) == set()
