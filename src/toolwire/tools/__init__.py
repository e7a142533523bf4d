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
    ApprovalCallback,
    ApprovalRequest,
    Dialect,
    LocalRunner,
    ResultHook,
    RetryPolicy,
    Toolbox,
    ToolErrorKind,
    ToolInvocation,
    ToolResult,
    ToolRunner,
    ask_approval,
    idempotency_key,
    is_transient,
    scrub,
)
from toolwire.tools.registry import RetryOn, Tool, ToolContext, tool

__all__ = [
    "Approval",
    "ApprovalCallback",
    "ApprovalRequest",
    "Dialect",
    "LocalRunner",
    "ResultHook",
    "RetryOn",
    "RetryPolicy",
    "Tool",
    "ToolContext",
    "ToolErrorKind",
    "ToolInvocation",
    "ToolResult",
    "ToolRunner",
    "Toolbox",
    "ask_approval",
    "idempotency_key",
    "is_transient",
    "scrub",
    "tool",
]
