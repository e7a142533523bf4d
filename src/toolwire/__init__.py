"""toolwire: LLM function calling done right in streaming mode.

The stream-decoding core (errors, events, value types, ``StreamDecoder``) is
imported eagerly and does no I/O; the tool layer, providers, agent and
emulation server are imported on first use, so ``import toolwire`` stays
light and a sans-I/O user never loads httpx or anyio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolwire.codecs import APIS as APIS
from toolwire.decoder import DecodedFrame as DecodedFrame
from toolwire.decoder import StreamDecoder as StreamDecoder
from toolwire.errors import *  # noqa: F403
from toolwire.errors import __all__ as _errors_all
from toolwire.events import *  # noqa: F403
from toolwire.events import __all__ as _events_all
from toolwire.messages import *  # noqa: F403
from toolwire.messages import __all__ as _messages_all
from toolwire.types import *  # noqa: F403
from toolwire.types import __all__ as _types_all

__version__ = "0.1.0"

# Public names defined in modules that do I/O or pull heavier dependencies:
# name -> module, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "Anthropic": "toolwire.providers",
    "Gemini": "toolwire.providers",
    "HttpRequest": "toolwire.providers",
    "HttpResponse": "toolwire.providers",
    "HttpxTransport": "toolwire.transport",
    "OpenAIChat": "toolwire.providers",
    "OpenAIResponses": "toolwire.providers",
    "Provider": "toolwire.providers",
    "RetryPolicy": "toolwire.transport",
    "Timeouts": "toolwire.transport",
    "Transport": "toolwire.providers",
}

if TYPE_CHECKING:  # pragma: no cover
    from toolwire.providers import Anthropic as Anthropic
    from toolwire.providers import Gemini as Gemini
    from toolwire.providers import HttpRequest as HttpRequest
    from toolwire.providers import HttpResponse as HttpResponse
    from toolwire.providers import OpenAIChat as OpenAIChat
    from toolwire.providers import OpenAIResponses as OpenAIResponses
    from toolwire.providers import Provider as Provider
    from toolwire.providers import Transport as Transport
    from toolwire.transport import HttpxTransport as HttpxTransport
    from toolwire.transport import RetryPolicy as RetryPolicy
    from toolwire.transport import Timeouts as Timeouts

__all__ = sorted(
    [
        *_errors_all,
        *_events_all,
        *_types_all,
        *_messages_all,
        *_LAZY,
        "APIS",
        "DecodedFrame",
        "StreamDecoder",
    ]
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
