"""The tool layer: typed tools, provider schemas, validation and a safe toolbox.

``@toolwire.tool`` turns a type-hinted function into a :class:`Tool`;
:class:`Toolbox` exports a set of tools in each provider's schema dialect and
runs batches of tool calls (validated, concurrent, with timeouts that cancel,
retries, fallbacks, approval and a result budget), answering every call with a
:class:`ToolResult`.

The modules, one idea each: ``_tool`` (the :class:`Tool` and ``@tool``),
``_toolset`` (``@toolset``: the handler of a provider toolset's actions),
``_signature`` (reading a function), ``_arguments`` and ``_validation``
(checking a call's arguments), ``_schema`` (JSON Schema cleaning and
shaping), ``_toolbox`` (the :class:`Toolbox`: schemas, triage, scheduling),
``_call`` (one call's approval, attempts and fallback), ``_approval``,
``runners`` (where a function runs; public, for runners outside this
package), ``_process`` (a runner that runs it in a child process it can
kill), ``_results``, ``redaction`` and ``log`` (public: the journal, the
viewer and the batch clean and log what they show the same way).
"""

from __future__ import annotations

from toolwire.tools._approval import (
    Approval,
    ApprovalCallback,
    ApprovalFailed,
    ApprovalRequest,
    ask_approval,
)
from toolwire.tools._call import ResultHook, is_transient
from toolwire.tools._context import ToolContext, idempotency_key
from toolwire.tools._options import RetryOn, ToolOptions
from toolwire.tools._process import ProcessRunner
from toolwire.tools._questions import Question, QuestionAnswer, QuestionCallback, Questions, asking
from toolwire.tools._results import ToolErrorKind, ToolResult
from toolwire.tools._sampling import Sample, Sampler, SamplingRequest, sampling
from toolwire.tools._schema import clean_schema
from toolwire.tools._sources import ToolsChange, ToolSource
from toolwire.tools._tool import Tool, tool
from toolwire.tools._toolbox import Toolbox
from toolwire.tools._toolset import toolset, toolset_tool_name
from toolwire.tools._validation import format_pydantic_errors
from toolwire.tools.redaction import scrub
from toolwire.tools.runners import LocalRunner, ToolInvocation, ToolRunner

__all__ = [
    "Approval",
    "ApprovalCallback",
    "ApprovalFailed",
    "ApprovalRequest",
    "LocalRunner",
    "ProcessRunner",
    "Question",
    "QuestionAnswer",
    "QuestionCallback",
    "Questions",
    "ResultHook",
    "RetryOn",
    "Sample",
    "Sampler",
    "SamplingRequest",
    "Tool",
    "ToolContext",
    "ToolErrorKind",
    "ToolInvocation",
    "ToolOptions",
    "ToolResult",
    "ToolRunner",
    "ToolSource",
    "Toolbox",
    "ToolsChange",
    "ask_approval",
    "asking",
    "clean_schema",
    "format_pydantic_errors",
    "idempotency_key",
    "is_transient",
    "sampling",
    "scrub",
    "tool",
    "toolset",
    "toolset_tool_name",
]
