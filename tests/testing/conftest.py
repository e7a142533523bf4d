from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from toolwire.testing import Scenario

pytest_plugins = ["toolwire.testing.pytest_plugin"]

QUOTING_ANSWER = (
    "杭州现在的天气:{result:get_weather}。当前时间(Asia/Shanghai):"
    "{result:get_current_time}。出门前记得看看天气,祝你一天愉快!"
)


def quoting_weather() -> Scenario:
    """The built-in weather scenario, answering with the tool results quoted
    whole (so that tests may send any text as a result)."""
    scenario = Scenario.builtin("weather").with_delay(0)
    turns = list(scenario.turns)
    turns[1] = turns[1].model_copy(update={"text": QUOTING_ANSWER})
    return scenario.model_copy(update={"turns": turns})


@pytest.fixture(autouse=True)
def _close_sdk_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Close every official-SDK client a test creates, at its teardown, so no
    connection is left for the garbage collector to report in a later test."""
    created: list[Any] = []
    for cls in (openai.OpenAI, anthropic.Anthropic):
        original = cls.__init__

        def init(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> None:
            _original(self, *args, **kwargs)
            created.append(self)

        monkeypatch.setattr(cls, "__init__", init)
    yield
    for client in created:
        client.close()
