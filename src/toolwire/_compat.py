"""Every older name toolwire still answers to, in one place, each with a
``DeprecationWarning`` that names its successor.

* modules that moved when the sans-I/O core, the HTTP layer and the agent
  became packages keep their old import paths through a meta path finder:
  ``import toolwire.decoder`` gives :mod:`toolwire.stream.decoder` itself (the
  same module object, so ``isinstance`` and monkeypatching agree);
* renamed module attributes (:data:`RENAMED`) are served by the module's
  ``__getattr__``, which asks :func:`renamed`;
* renamed keyword arguments and properties (:data:`RENAMED_ARGUMENTS`) call
  :func:`renamed_argument`;
* renamed methods that subclasses override (:data:`RENAMED_METHODS`): an
  override under the old name still takes effect, with a warning when its
  class is made (:func:`forward_override`), and the old method still answers
  (:func:`below_overrides`); a class defining both names is refused;
  renamed command-line options
  (:data:`RENAMED_OPTIONS`) print :func:`renamed_option`'s note on stderr.

Keys that older releases *wrote* (a journal header's or a cassette's
``"api"``) are read without a warning where they are read: nobody can
change a file already written.

Nothing here imports above the standard library, so every layer may name
its old names here.
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

__all__ = [
    "MOVED_MODULES",
    "RENAMED",
    "RENAMED_ARGUMENTS",
    "RENAMED_METHODS",
    "RENAMED_OPTIONS",
    "below_overrides",
    "forward_override",
    "install",
    "renamed",
    "renamed_argument",
    "renamed_option",
]

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

RENAMED: dict[tuple[str, str], tuple[str, str]] = {
    ("toolwire", "ToolStarted"): ("toolwire.run", "ToolExecutionStarted"),
    ("toolwire", "ToolFinished"): ("toolwire.run", "ToolExecutionFinished"),
    ("toolwire.run", "ToolStarted"): ("toolwire.run", "ToolExecutionStarted"),
    ("toolwire.run", "ToolFinished"): ("toolwire.run", "ToolExecutionFinished"),
    ("toolwire.agent", "ToolStarted"): ("toolwire.run", "ToolExecutionStarted"),
    ("toolwire.agent", "ToolFinished"): ("toolwire.run", "ToolExecutionFinished"),
    ("toolwire.agent.loop", "settle"): ("toolwire.agent.loop", "settlement"),
    ("toolwire.stream.decoder", "sniff_api"): ("toolwire.stream.decoder", "sniff_dialect"),
    ("toolwire.stream.codecs.openai_responses_request", "API"): (
        "toolwire.stream.codecs.openai_responses_request",
        "DIALECT_NAME",
    ),
    ("toolwire.stream.codecs.anthropic_request", "API"): (
        "toolwire.stream.codecs.anthropic_request",
        "DIALECT_NAME",
    ),
    ("toolwire.stream.codecs.openai_chat_request", "API"): (
        "toolwire.stream.codecs.openai_chat_request",
        "DIALECT_NAME",
    ),
    ("toolwire.stream.codecs.bedrock_request", "API"): (
        "toolwire.stream.codecs.bedrock_request",
        "DIALECT_NAME",
    ),
    ("toolwire.stream.codecs.gemini_request", "API"): (
        "toolwire.stream.codecs.gemini_request",
        "DIALECT_NAME",
    ),
    ("toolwire.stream.codecs.gemini_interactions_request", "API"): (
        "toolwire.stream.codecs.gemini_interactions_request",
        "DIALECT_NAME",
    ),
    ("toolwire.providers", "ErrorParser"): ("toolwire.http", "ErrorParser"),
    ("toolwire.providers", "HttpRequest"): ("toolwire.http", "HttpRequest"),
    ("toolwire.providers", "HttpResponse"): ("toolwire.http", "HttpResponse"),
    ("toolwire.providers", "StreamResponse"): ("toolwire.http", "StreamResponse"),
    ("toolwire.providers", "Transport"): ("toolwire.http", "Transport"),
    ("toolwire.providers", "retry_after_seconds"): ("toolwire.http", "retry_after_seconds"),
    ("toolwire.providers._reads", "Resumer"): (
        "toolwire.providers._continuation",
        "Continuation",
    ),
}
"""(module, old name) -> (module, current name)."""

RENAMED_ARGUMENTS: dict[tuple[str, str], str] = {
    ("StreamDecoder", "api"): "dialect",
    ("StreamResult", "api"): "dialect",
    ("Turn", "items"): 'provider_items (each {"dialect": "openai-responses", "item": ...})',
    ("OpenAIResponses", "resume_attempts"): "continuation_attempts",
    ("OpenAIResponses", "resume_timeout"): "continuation_timeout",
    ("GeminiInteractions", "resume_attempts"): "continuation_attempts",
    ("GeminiInteractions", "resume_timeout"): "continuation_timeout",
    ("Provider", "resume_attempts"): "continuation_attempts",
    ("Provider", "resume_timeout"): "continuation_timeout",
    ("EmulationServer", "resumes"): "continuations",
    ("Provider.reader", "replay"): "kept_stream",
    ("ProviderStream", "resumer"): "continuation",
    ("ProviderStream", "replay"): "kept_stream",
}
"""(owner, old keyword argument or property) -> current name."""

RENAMED_METHODS: dict[tuple[str, str], str] = {
    ("Provider", "resumer"): "continuation",
}
"""(class, old method name) -> current name, for methods subclasses override."""

RENAMED_OPTIONS: dict[tuple[str, str], str] = {
    ("inspect", "--api"): "--dialect",
}
"""(command, old option) -> current option."""


def renamed(module: str, name: str) -> object:
    """The value of ``module``'s old attribute ``name``, with a warning
    naming the new one.

    Raises:
        AttributeError: ``module`` has no such attribute, old or new.
    """
    moved = RENAMED.get((module, name))
    if moved is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    target, new = moved
    warnings.warn(f"{module}.{name} is now {target}.{new}", DeprecationWarning, stacklevel=3)
    return getattr(importlib.import_module(target), new)


def renamed_argument(owner: str, old: str) -> str:
    """Warn that ``owner``'s ``old`` argument (or property) is now another; its name."""
    new = RENAMED_ARGUMENTS[(owner, old)]
    warnings.warn(f"{owner}: {old} is now {new}", DeprecationWarning, stacklevel=3)
    return new


def forward_override(cls: type, owner: str, old: str) -> None:
    """Called when ``cls``, a subclass of ``owner``, is made: an override of
    ``owner``'s renamed method ``old`` becomes the override of its new name
    (with a warning), so that it is never silently left uncalled.

    Raises:
        TypeError: ``cls`` defines both the old and the new name.
    """
    if old not in cls.__dict__:
        return
    new = RENAMED_METHODS[(owner, old)]
    where = f"{cls.__module__}.{cls.__qualname__}"
    if new in cls.__dict__:
        raise TypeError(
            f"{where} defines both {old}() and {new}(): {owner}.{old}() is now "
            f"{new}(); keep only {new}()"
        )
    warnings.warn(
        f"{where}.{old}() overrides {owner}.{old}(), which is now {new}(): rename it",
        DeprecationWarning,
        stacklevel=3,
    )
    override = cls.__dict__[old]

    def forwarded(self: object, *args: object, **kwargs: object) -> object:
        return override(self, *args, **kwargs)

    forwarded.__name__ = forwarded.__qualname__ = new
    forwarded.__doc__ = f"{where}.{old}(), under its new name."
    forwarded._toolwire_forwarded = True  # type: ignore[attr-defined]
    setattr(cls, new, forwarded)


def below_overrides(instance: object, owner: type, old: str) -> object:
    """``owner``'s renamed method ``old`` on ``instance``, as the old name
    answers it (with a warning): the new method of the nearest class below
    every override of the old name (a subclass's ``super().old()`` reaches
    this, and must not come back to its own override)."""
    new = RENAMED_METHODS[(owner.__name__, old)]
    warnings.warn(f"{owner.__name__}.{old}() is now {new}()", DeprecationWarning, stacklevel=3)
    mro = type(instance).__mro__
    last = max((i for i, c in enumerate(mro) if old in c.__dict__ and c is not owner), default=-1)
    for cls in mro[last + 1 :]:
        method = cls.__dict__.get(new)
        if method is not None and not getattr(method, "_toolwire_forwarded", False):
            return method.__get__(instance, type(instance))
    raise AttributeError(f"{owner.__name__}.{new}")


def renamed_option(command: str, old: str) -> str:
    """The note a command prints when given its old option ``old``."""
    new = RENAMED_OPTIONS[(command, old)]
    return f"warning: {old} is deprecated and will be removed; use {new}"


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
