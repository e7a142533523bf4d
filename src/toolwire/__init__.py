"""toolwire: LLM function calling done right in streaming mode."""

from __future__ import annotations

from toolwire.errors import *  # noqa: F403
from toolwire.errors import __all__ as _errors_all
from toolwire.events import *  # noqa: F403
from toolwire.events import __all__ as _events_all
from toolwire.types import *  # noqa: F403
from toolwire.types import __all__ as _types_all

__version__ = "0.1.0"

__all__ = sorted([*_errors_all, *_events_all, *_types_all])
