"""The tool layer: typed tools, provider schemas, validation and a safe executor.

``@toolwire.tool`` turns a type-hinted function into a :class:`Tool`;
:class:`Toolbox` exports a set of tools in each provider's schema dialect and
runs batches of tool calls (validated, concurrent, with timeouts that cancel,
retries, fallbacks, approval and a result budget), answering every call with a
:class:`ToolResult`.
"""

from __future__ import annotations

from toolwire.tools.executor import (
    Approval,
    ApprovalRequest,
    Dialect,
    LocalRunner,
    RetryPolicy,
    Toolbox,
    ToolErrorKind,
    ToolInvocation,
    ToolResult,
    ToolRunner,
    idempotency_key,
    is_transient,
    scrub,
)
from toolwire.tools.registry import RetryOn, Tool, ToolContext, tool

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Dialect",
    "LocalRunner",
    "RetryOn",
    "RetryPolicy",
    "Tool",
    "ToolContext",
    "ToolErrorKind",
    "ToolInvocation",
    "ToolResult",
    "ToolRunner",
    "Toolbox",
    "idempotency_key",
    "is_transient",
    "scrub",
    "tool",
]
