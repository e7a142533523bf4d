"""The handler of a provider's toolset: one tool for every action of it.

Anthropic's toolsets (``computer_toolset_20260801``,
``browser_toolset_20260801``) are declared as one ``tools`` entry and called
action by action: a ``tool_use`` block named after the action
(``left_click``, ``navigate``...) that names its toolset (``toolset_name:
"computer"``). The action names of two toolsets overlap (both have
``left_click``), so they are routed by toolset, never by name: the Agent
hands every action of the toolset ``computer`` to the one tool that
``@toolwire.toolset("computer")`` made, with the action's name and its
input, and refuses them, in words the model reads, when no handler is
registered.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, Final

from toolwire.errors import UsageError
from toolwire.tools._tool import Tool

__all__ = ["TOOLSET_VERSION", "toolset", "toolset_tool_name"]

TOOLSET_VERSION: Final = "20260801"
"""The toolset version declared when none is given (``computer_toolset_20260801``)."""

_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")

_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "description": "the action's name (left_click...)"},
        "input": {"type": "object", "description": "the action's input, as the model sent it"},
    },
    "required": ["action", "input"],
    "additionalProperties": False,
}


def toolset_tool_name(toolset: str) -> str:
    """The name of the tool that handles the toolset ``toolset``'s actions."""
    return f"{toolset}_toolset"


def toolset(
    name: str, *, version: str = TOOLSET_VERSION, description: str | None = None, **options: Any
) -> Callable[[Callable[..., Any]], Tool]:
    """Make the handler of a toolset's actions: ``@toolwire.toolset("computer")``.

    The function takes ``action`` (the action's name, ``"left_click"``) and
    ``input`` (its arguments, a dict), sync or async, and returns the
    action's result as any tool does. The tool it makes is declared to
    Anthropic as the toolset (``{"type": "computer_toolset_20260801"}``);
    to another provider, as a function of ``action`` and ``input``.

    Args:
        name: the toolset's name, as its calls give it (``toolset_name``):
            ``"computer"``, ``"browser"``.
        version: the toolset's version, declared as ``{name}_toolset_{version}``.
        description: what the handler does; defaults to the docstring.
        **options: any field of :class:`~toolwire.tools.ToolOptions`.

    Raises:
        UsageError: a name that is not a toolset's.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(f"invalid toolset name {name!r}: use lowercase letters, digits and '_'")
    if not isinstance(version, str) or not version.isalnum():
        raise UsageError(f"invalid toolset version {version!r}: use letters and digits")

    def make(function: Callable[..., Any]) -> Tool:
        doc = description or inspect.getdoc(function) or f"The {name} toolset's actions."
        return Tool.from_schema(
            function,
            name=toolset_tool_name(name),
            parameters=_PARAMETERS,
            description=doc.strip().split("\n\n")[0],
            anthropic_toolset=f"{name}_toolset_{version}",
            **options,
        )

    return make
