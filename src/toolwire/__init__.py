"""toolwire: LLM function calling done right in streaming mode."""

from __future__ import annotations

from toolwire.errors import *  # noqa: F403
from toolwire.errors import __all__ as _errors_all
from toolwire.events import *  # noqa: F403
from toolwire.events import __all__ as _events_all
from toolwire.tools import Approval as Approval
from toolwire.tools import ApprovalRequest as ApprovalRequest
from toolwire.tools import RetryPolicy as RetryPolicy
from toolwire.tools import Tool as Tool
from toolwire.tools import Toolbox as Toolbox
from toolwire.tools import ToolContext as ToolContext
from toolwire.tools import ToolResult as ToolResult
from toolwire.tools import tool as tool
from toolwire.types import *  # noqa: F403
from toolwire.types import __all__ as _types_all

_tools_all = [
    "Approval",
    "ApprovalRequest",
    "RetryPolicy",
    "Tool",
    "ToolContext",
    "ToolResult",
    "Toolbox",
    "tool",
]

__version__ = "0.1.0"

__all__ = sorted([*_errors_all, *_events_all, *_types_all, *_tools_all])
