"""Every older name toolwire still answers to, in one place, each with a
``DeprecationWarning`` that names its successor.

Modules that moved when the sans-I/O core, the HTTP layer and the agent
became packages keep their old import paths through a meta path finder:
``import toolwire.decoder`` gives :mod:`toolwire.stream.decoder` itself (the
same module object, so ``isinstance`` and monkeypatching agree).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED_MODULES", "RENAMED", "install"]

MOVED_MODULES: dict[str, str] = {
    "toolwire.sse": "toolwire.stream.framing",
    "toolwire.decoder": "toolwire.stream.decoder",
    "toolwire.accumulate": "toolwire.stream.accumulate",
    "toolwire.codecs": "toolwire.stream.codecs",
    "toolwire.framing": "toolwire.stream.framing",
    "toolwire.limits": "toolwire.stream.limits",
    "toolwire.transport": "toolwire.http.transport",
    "toolwire.loop": "toolwire.agent.loop",
}
"""Old module path -> where the module lives now."""

RENAMED: dict[str, tuple[str, str]] = {
    "ToolStarted": ("toolwire.run", "ToolExecutionStarted"),
    "ToolFinished": ("toolwire.run", "ToolExecutionFinished"),
}
"""Old top-level name -> (module, current name)."""


def renamed(name: str) -> object:
    """The value of an old top-level name, with a warning naming the new one."""
    module, new = RENAMED[name]
    warnings.warn(f"toolwire.{name} is now toolwire.{new}", DeprecationWarning, stacklevel=3)
    return getattr(importlib.import_module(module), new)


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self._target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} is now {self._target}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(self._target)

    def exec_module(self, module: ModuleType) -> None:
        """The module is already executed: it is the target itself."""


class _MovedModules(importlib.abc.MetaPathFinder):
    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        moved = MOVED_MODULES.get(fullname)
        if moved is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(moved))


_FINDER = _MovedModules()


def install() -> None:
    """Let the old module paths import (once per process)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
