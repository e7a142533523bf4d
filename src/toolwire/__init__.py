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
from toolwire.content import Audio as Audio
from toolwire.content import CachePoint as CachePoint
from toolwire.content import ContentItem as ContentItem
from toolwire.content import ContentPart as ContentPart
from toolwire.content import Document as Document
from toolwire.content import Image as Image
from toolwire.content import UrlFetch as UrlFetch
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
    # ``X as X``: re-exported, also for ``mypy --strict`` (no implicit re-export).
    from toolwire.adapters import (
        AdaptedStream as AdaptedStream,
    )
    from toolwire.adapters import (
        AsyncAdaptedStream as AsyncAdaptedStream,
    )
    from toolwire.agent import Agent as Agent
    from toolwire.backoff import Backoff as Backoff
    from toolwire.batch import (
        BatchProgress as BatchProgress,
    )
    from toolwire.batch import (
        BatchRecord as BatchRecord,
    )
    from toolwire.batch import (
        BatchSummary as BatchSummary,
    )
    from toolwire.batch import (
        run_batch as run_batch,
    )
    from toolwire.cost import (
        Budget as Budget,
    )
    from toolwire.cost import (
        Cost as Cost,
    )
    from toolwire.cost import (
        Prices as Prices,
    )
    from toolwire.cost import (
        Rates as Rates,
    )
    from toolwire.cost import (
        UsageLimits as UsageLimits,
    )
    from toolwire.http import HttpRequest as HttpRequest
    from toolwire.http import HttpResponse as HttpResponse
    from toolwire.http import Transport as Transport
    from toolwire.http.transport import (
        BodyLimits as BodyLimits,
    )
    from toolwire.http.transport import (
        HttpRetryPolicy as HttpRetryPolicy,
    )
    from toolwire.http.transport import (
        HttpxTransport as HttpxTransport,
    )
    from toolwire.http.transport import (
        Timeouts as Timeouts,
    )
    from toolwire.journal import (
        Decision as Decision,
    )
    from toolwire.journal import (
        Journal as Journal,
    )
    from toolwire.journal import (
        JournalEvent as JournalEvent,
    )
    from toolwire.journal import (
        JournalObserver as JournalObserver,
    )
    from toolwire.journal import (
        RunLog as RunLog,
    )
    from toolwire.journal import (
        RunSummary as RunSummary,
    )
    from toolwire.journal import (
        SQLiteJournal as SQLiteJournal,
    )
    from toolwire.mcp import MCPConnection as MCPConnection
    from toolwire.observe import RunObserver as RunObserver
    from toolwire.providers import (
        Anthropic as Anthropic,
    )
    from toolwire.providers import (
        Gemini as Gemini,
    )
    from toolwire.providers import (
        OpenAIChat as OpenAIChat,
    )
    from toolwire.providers import (
        OpenAIResponses as OpenAIResponses,
    )
    from toolwire.providers import (
        Provider as Provider,
    )
    from toolwire.ray import RayExecutor as RayExecutor
    from toolwire.run import (
        AgentEvent as AgentEvent,
    )
    from toolwire.run import (
        ModelRetrying as ModelRetrying,
    )
    from toolwire.run import (
        OutputDelta as OutputDelta,
    )
    from toolwire.run import (
        PendingCall as PendingCall,
    )
    from toolwire.run import (
        RunFinished as RunFinished,
    )
    from toolwire.run import (
        RunInfo as RunInfo,
    )
    from toolwire.run import (
        RunResult as RunResult,
    )
    from toolwire.run import (
        RunStarted as RunStarted,
    )
    from toolwire.run import (
        ToolCallRecord as ToolCallRecord,
    )
    from toolwire.run import (
        ToolExecutionFinished as ToolExecutionFinished,
    )
    from toolwire.run import (
        ToolExecutionStarted as ToolExecutionStarted,
    )
    from toolwire.run import (
        TurnFinished as TurnFinished,
    )
    from toolwire.run import (
        TurnStarted as TurnStarted,
    )
    from toolwire.run import (
        TurnSteered as TurnSteered,
    )
    from toolwire.tools import (
        Approval as Approval,
    )
    from toolwire.tools import (
        ApprovalRequest as ApprovalRequest,
    )
    from toolwire.tools import (
        LocalRunner as LocalRunner,
    )
    from toolwire.tools import (
        ProcessRunner as ProcessRunner,
    )
    from toolwire.tools import (
        Tool as Tool,
    )
    from toolwire.tools import (
        Toolbox as Toolbox,
    )
    from toolwire.tools import (
        ToolContext as ToolContext,
    )
    from toolwire.tools import (
        ToolInvocation as ToolInvocation,
    )
    from toolwire.tools import (
        ToolOptions as ToolOptions,
    )
    from toolwire.tools import (
        ToolResult as ToolResult,
    )
    from toolwire.tools import (
        ToolRunner as ToolRunner,
    )
    from toolwire.tools import (
        tool as tool,
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
    "OutputDelta": "toolwire.run",
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
    "TurnSteered": "toolwire.run",
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
    "toolset": "toolwire.tools",
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
        "Audio",
        "CachePoint",
        "ContentItem",
        "ContentPart",
        "DecodedFrame",
        "Document",
        "Image",
        "StreamDecoder",
        "UrlFetch",
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
