"""toolwire: LLM function calling done right in streaming mode."""

from __future__ import annotations

from toolwire.errors import *  # noqa: F403
from toolwire.errors import __all__ as _errors_all
from toolwire.events import *  # noqa: F403
from toolwire.events import __all__ as _events_all
from toolwire.messages import *  # noqa: F403
from toolwire.messages import __all__ as _messages_all
from toolwire.providers import *  # noqa: F403
from toolwire.providers import __all__ as _providers_all
from toolwire.transport import *  # noqa: F403
from toolwire.transport import __all__ as _transport_all
from toolwire.types import *  # noqa: F403
from toolwire.types import __all__ as _types_all

__version__ = "0.1.0"

__all__ = sorted(
    [
        *_errors_all,
        *_events_all,
        *_types_all,
        *_messages_all,
        *_providers_all,
        *_transport_all,
    ]
)
