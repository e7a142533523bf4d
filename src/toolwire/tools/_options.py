"""The options of a tool, declared once: :class:`ToolOptions`.

Its fields are the keyword options of :func:`~toolwire.tools.tool`,
:meth:`Tool.from_function <toolwire.tools.Tool.from_function>` and
:meth:`Tool.from_schema <toolwire.tools.Tool.from_schema>`, with their types,
defaults and meaning. The decorator spells them out again as keyword
parameters, so that type checkers and IDEs know them; a test holds that
spelling to this declaration (names, order, types and defaults).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from toolwire.errors import UsageError

__all__ = ["RetryOn", "ToolOptions", "option_names", "tool_options"]

RetryOn = type[BaseException] | tuple[type[BaseException], ...] | Callable[[BaseException], bool]
"""Which exceptions a tool retries: exception classes, or a predicate."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOptions:
    """How a tool is run and described: every option of :func:`~toolwire.tools.tool`.

    A :class:`~toolwire.tools.Tool` keeps the options it was made with as
    ``Tool.options``, and each as an attribute of its own, resolved
    (``retries`` and ``accept_repaired`` get their defaults there).
    """

    timeout: float | None = None
    """Seconds each attempt may take before it is cancelled; ``None`` uses the
    toolbox's default."""
    retries: int | None = None
    """Extra attempts after a transient error; ``None``: 2 for a read-only or
    idempotent tool, 0 for the others."""
    retry_on: RetryOn | None = None
    """Which exceptions count as transient: exception classes, or a predicate;
    ``None`` uses :func:`toolwire.tools.is_transient`."""
    fallback: Callable[..., Any] | None = None
    """Called with the same arguments when every attempt failed."""
    read_only: bool = False
    """The tool changes nothing: safe to repeat, or to run early."""
    requires_approval: bool = False
    """The toolbox asks its approval callback before each run."""
    external: bool = False
    """The result comes from outside (a browser, a person, a long job): an
    agent suspends the run at a call of it and resumes with the answer given
    to :meth:`~toolwire.Agent.resume`; the function body is never run by the
    agent."""
    sequential: bool = False
    """The tool runs alone: calls before it finish first, calls after it wait
    for it."""
    strict: bool | None = None
    """``True`` requires a strict-mode schema in the dialects that have one
    (OpenAI's), ``False`` never sends one, ``None`` sends one when the schema
    allows it."""
    max_result_chars: int | None = None
    """Results longer than this are cut; ``None`` uses the toolbox's budget."""
    idempotent: bool | None = None
    """Repeating a call with the same idempotency key is safe. Only the tool
    knows (taking a ``ToolContext`` is not enough), so it says so."""
    dedupe: bool = True
    """Identical calls of one batch run once."""
    coerce: bool = False
    """Accept lax conversions of the model's arguments (``"500"``, ``500.0`` or
    ``true`` for an integer); strict by default."""
    allow_nul: bool = False
    """Accept NUL characters in string arguments."""
    freeform: bool | Mapping[str, str] = False
    """A custom (freeform) tool of the OpenAI dialects, whose one parameter,
    ``input: str``, receives the model's text: ``True`` (any text), or its
    grammar ``{"syntax": "lark" or "regex", "definition": ...}``."""
    anthropic_eager_input_streaming: bool | None = None
    """Anthropic streams the tool's input as the model writes it, unbuffered
    and unchecked (``eager_input_streaming``); ``None`` leaves the field out."""
    anthropic_toolset: str | None = None
    """Declare the tool to Anthropic as this toolset (``computer_toolset_20260801``)
    instead of a function: :func:`toolwire.toolset` sets it on the handler of
    the toolset's actions."""
    asynchronous: bool = False
    """Declare the tool asynchronous where the dialect has it (a Responses
    function tool's ``async: true``): its calls start as soon as each is
    complete while the model keeps streaming, and each result is delivered
    with the next request (see the agent's async tool calls)."""
    accept_repaired: bool | None = None
    """Run calls whose arguments toolwire repaired (a fence, trailing commas,
    closing brackets after a complete value); ``None``: as ``read_only``. The
    other tools answer such a call with an error asking the model to send it
    again."""


def option_names() -> tuple[str, ...]:
    """The names of the options, in declaration order."""
    return tuple(f.name for f in fields(ToolOptions))


def tool_options(options: Mapping[str, Any]) -> ToolOptions:
    """The :class:`ToolOptions` of keyword options.

    Raises:
        UsageError: a name that is no option.
    """
    unknown = set(options) - set(option_names())
    if unknown:
        raise UsageError(f"unknown tool option(s): {', '.join(sorted(unknown))}")
    return ToolOptions(**options)
