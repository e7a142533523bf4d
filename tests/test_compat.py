"""Older names still answer, each with a warning naming its successor, and all
of them are listed in one place: ``toolwire._compat``."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

import toolwire
from toolwire import _compat

SRC = Path(toolwire.__file__).resolve().parent


@pytest.mark.parametrize(
    ("module", "old"), sorted(_compat.RENAMED), ids=lambda v: v.rpartition(".")[2]
)
def test_every_renamed_attribute_resolves_with_a_warning(module: str, old: str) -> None:
    target, new = _compat.RENAMED[(module, old)]
    current = getattr(importlib.import_module(target), new)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(module)}\.{old} is now .*\.{new}"):
        assert getattr(importlib.import_module(module), old) is current


def test_the_old_names_are_not_exported() -> None:
    for module, old in _compat.RENAMED:
        assert old not in importlib.import_module(module).__all__, (module, old)


@pytest.mark.parametrize("module", sorted({m for m, _ in _compat.RENAMED}))
def test_an_unknown_attribute_is_still_an_attribute_error(module: str) -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(importlib.import_module(module), "no_such_name")  # noqa: B009


@pytest.mark.parametrize(("old", "new"), sorted(_compat.MOVED_MODULES.items()))
def test_a_moved_module_imports_from_its_old_path_as_the_same_module(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(old)} is now {re.escape(new)}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_no_module_but_compat_warns_of_a_deprecation_itself() -> None:
    # Older names live in _compat: a module asks it to warn of its old ones.
    warning = re.compile(r"\bDeprecationWarning\b")
    found = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if path.name != "_compat.py" and warning.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_old_option_note_names_the_new_option() -> None:
    assert _compat.renamed_option("inspect", "--api") == (
        "warning: --api is deprecated and will be removed; use --dialect"
    )
