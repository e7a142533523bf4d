"""toolwire: LLM function calling done right in streaming mode.

The stream-decoding core (errors, events, value types, ``StreamDecoder``) is
imported eagerly and does no I/O; the tool layer, providers, agent and
emulation server are imported on first use, so ``import toolwire`` stays
light and a sans-I/O user never loads httpx, anyio or pydantic.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from toolwire import _compat
from toolwire.errors import *  # noqa: F403
from toolwire.errors import __all__ as _errors_all
from toolwire.events import *  # noqa: F403
from toolwire.events import __all__ as _events_all
from toolwire.messages import *  # noqa: F403
from toolwire.messages import __all__ as _messages_all
from toolwire.stream.decoder import DecodedFrame as DecodedFrame
from toolwire.stream.decoder import StreamDecoder as StreamDecoder
from toolwire.types import *  # noqa: F403
from toolwire.types import __all__ as _types_all

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from toolwire.adapters import (  # noqa: F401 - re-exported lazily
        AdaptedStream,
        AsyncAdaptedStream,
    )
    from toolwire.agent import Agent  # noqa: F401 - re-exported lazily
    from toolwire.backoff import Backoff  # noqa: F401 - re-exported lazily
    from toolwire.batch import (  # noqa: F401 - re-exported lazily
        BatchProgress,
        BatchRecord,
        BatchSummary,
        run_batch,
    )
    from toolwire.cost import (  # noqa: F401 - re-exported lazily
        Budget,
        Cost,
        Prices,
        Rates,
        UsageLimits,
    )
    from toolwire.http import HttpRequest, HttpResponse, Transport  # noqa: F401 - re-exported lazily
    from toolwire.http.transport import (  # noqa: F401 - re-exported lazily
        BodyLimits,
        HttpRetryPolicy,
        HttpxTransport,
        Timeouts,
    )
    from toolwire.journal import (  # noqa: F401 - re-exported lazily
        Decision,
        Journal,
        JournalEvent,
        JournalObserver,
        RunLog,
        RunSummary,
        SQLiteJournal,
    )
    from toolwire.mcp import MCPConnection  # noqa: F401 - re-exported lazily
    from toolwire.observe import RunObserver  # noqa: F401 - re-exported lazily
    from toolwire.providers import (  # noqa: F401 - re-exported lazily
        Anthropic,
        Gemini,
        OpenAIChat,
        OpenAIResponses,
        Provider,
    )
    from toolwire.ray import RayExecutor  # noqa: F401 - re-exported lazily
    from toolwire.run import (  # noqa: F401 - re-exported lazily
        AgentEvent,
        ModelRetrying,
        PendingCall,
        RunFinished,
        RunInfo,
        RunResult,
        RunStarted,
        ToolCallRecord,
        ToolExecutionFinished,
        ToolExecutionStarted,
        TurnFinished,
        TurnStarted,
    )
    from toolwire.tools import (  # noqa: F401 - re-exported lazily
        Approval,
        ApprovalRequest,
        LocalRunner,
        ProcessRunner,
        Tool,
        Toolbox,
        ToolContext,
        ToolInvocation,
        ToolOptions,
        ToolResult,
        ToolRunner,
        tool,
    )

__version__ = "0.1.0"

# A library prints nothing unless the application configures logging.
logging.getLogger("toolwire").addHandler(logging.NullHandler())

# Public names whose modules do I/O or pull heavier dependencies:
# name -> module, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "AdaptedStream": "toolwire.adapters",
    "AsyncAdaptedStream": "toolwire.adapters",
    "Agent": "toolwire.agent",
    "AgentEvent": "toolwire.run",
    "ModelRetrying": "toolwire.run",
    "RunFinished": "toolwire.run",
    "RunInfo": "toolwire.run",
    "RunObserver": "toolwire.observe",
    "RunResult": "toolwire.run",
    "RunStarted": "toolwire.run",
    "PendingCall": "toolwire.run",
    "ToolCallRecord": "toolwire.run",
    "ToolExecutionFinished": "toolwire.run",
    "ToolExecutionStarted": "toolwire.run",
    "TurnFinished": "toolwire.run",
    "TurnStarted": "toolwire.run",
    "Anthropic": "toolwire.providers",
    "Approval": "toolwire.tools",
    "ApprovalRequest": "toolwire.tools",
    "Backoff": "toolwire.backoff",
    "BatchProgress": "toolwire.batch",
    "BatchRecord": "toolwire.batch",
    "BatchSummary": "toolwire.batch",
    "Budget": "toolwire.cost",
    "Cost": "toolwire.cost",
    "Prices": "toolwire.cost",
    "Rates": "toolwire.cost",
    "UsageLimits": "toolwire.cost",
    "Gemini": "toolwire.providers",
    "HttpRequest": "toolwire.http",
    "HttpResponse": "toolwire.http",
    "BodyLimits": "toolwire.http.transport",
    "HttpRetryPolicy": "toolwire.http.transport",
    "HttpxTransport": "toolwire.http.transport",
    "LocalRunner": "toolwire.tools",
    "ProcessRunner": "toolwire.tools",
    "MCPConnection": "toolwire.mcp",
    "Journal": "toolwire.journal",
    "Decision": "toolwire.journal",
    "JournalEvent": "toolwire.journal",
    "JournalObserver": "toolwire.journal",
    "OpenAIChat": "toolwire.providers",
    "OpenAIResponses": "toolwire.providers",
    "Provider": "toolwire.providers",
    "RayExecutor": "toolwire.ray",
    "RunLog": "toolwire.journal",
    "RunSummary": "toolwire.journal",
    "SQLiteJournal": "toolwire.journal",
    "Timeouts": "toolwire.http.transport",
    "Tool": "toolwire.tools",
    "ToolContext": "toolwire.tools",
    "ToolInvocation": "toolwire.tools",
    "ToolOptions": "toolwire.tools",
    "ToolResult": "toolwire.tools",
    "ToolRunner": "toolwire.tools",
    "Toolbox": "toolwire.tools",
    "Transport": "toolwire.http",
    "run_batch": "toolwire.batch",
    "tool": "toolwire.tools",
}

# Errors of toolwire's own readers and servers, caught inside it: importable
# from toolwire.errors (and where they are raised), not exported here.
_INNER_ERRORS = frozenset(
    {
        "BadForm",
        "BadQuery",
        "BadRequest",
        "DuplicateKeyError",
        "JSONLimitError",
        "NotStrictCompatible",
        "PartialJSONError",
        "Refusal",
        "RemoteToolError",
    }
)

__all__ = sorted(
    [
        *(name for name in _errors_all if name not in _INNER_ERRORS),
        *_events_all,
        *_types_all,
        *_messages_all,
        *_LAZY,
        "DecodedFrame",
        "StreamDecoder",
    ]
)


# Older names and module paths, still importable but no longer exported.
_compat.install()

# Subpackages reachable as attributes without importing them first, as the
# README writes them (`toolwire.adapters.openai_chat(...)`, `toolwire.mcp...`).
_SUBMODULES = frozenset(
    {
        "adapters",
        "agent",
        "batch",
        "journal",
        "mcp",
        "observe",
        "otel",
        "providers",
        "ray",
        "testing",
        "tools",
        "http",
    }
)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"toolwire.{name}")
    if (__name__, name) in _compat.RENAMED:
        return _compat.renamed(__name__, name)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
