"""Shared by the examples: a real provider when its key is set, otherwise
toolwire's emulation server on 127.0.0.1 playing a scripted model."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from toolwire.providers import OpenAIChat
from toolwire.testing import EmulationServer, Scenario


@contextlib.contextmanager
def provider_for(scenario: dict[str, Any]) -> Iterator[tuple[OpenAIChat, str]]:
    """``(provider, model)``: OpenAI when OPENAI_API_KEY is set, else the
    emulation server playing ``scenario``."""
    if os.environ.get("OPENAI_API_KEY"):
        yield OpenAIChat(), os.environ.get("TOOLWIRE_MODEL", "gpt-4.1-mini")
        return
    with EmulationServer(Scenario.from_dict(scenario)) as server:
        yield OpenAIChat(base_url=server.url_for("openai-chat"), api_key="offline"), "emulated"
