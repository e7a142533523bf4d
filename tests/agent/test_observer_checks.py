"""An observer is checked against the hooks when it is given to an agent: a
misspelt hook, which would never be called, or a hook of the wrong signature
is an error naming it (and the hook it is closest to)."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import Agent, RegistrationError, UsageError
from toolwire.cli.demo import make_provider
from toolwire.journal import JournalObserver, SQLiteJournal
from toolwire.observe import HOOKS, Observers, RunObserver, check_observers
from toolwire.otel import Tracer


def _agent(*observers: object) -> Agent:
    provider = make_provider("openai-chat", base_url="http://127.0.0.1:9/v1", api_key="k")
    return Agent(provider, model="m", observers=observers, journal=False)  # type: ignore[arg-type]


def _refused(observer: object) -> str:
    with pytest.raises(RegistrationError) as caught:
        _agent(observer)
    assert isinstance(caught.value, UsageError)
    message = caught.value.message
    assert message.startswith(f"observer {type(observer).__qualname__} cannot be used: ")
    return message


class Misspelt(RunObserver):
    async def tool_strated(self, run_id: str, turn: int, call: Any, key: str, **_: Any) -> None:
        pass


class EventStyle:
    """Not a RunObserver subclass, hooks named as another library names them."""

    async def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def on_agent_end(self, *args: Any) -> None:
        pass


def test_a_misspelt_hook_is_refused_with_the_closest_hook() -> None:
    message = _refused(Misspelt())
    assert message.endswith("tool_strated is not a hook: did you mean tool_started?")
    message = _refused(EventStyle())
    assert "on_tool_start is not a hook: did you mean tool_started?" in message
    assert f"on_agent_end is not a hook (the hooks: {', '.join(HOOKS)})" in message


class NotAsync(RunObserver):
    def run_finished(self, run_id: str, result: Any) -> None:  # type: ignore[override]
        pass


class TooFew:
    async def model_request(self, run_id: str, turn: int) -> None:
        pass


class EagerRequired(RunObserver):
    async def tool_finished(  # type: ignore[override]
        self, run_id: str, turn: int, call: Any, result: Any, *, eager: bool
    ) -> None:
        pass


def test_a_hook_of_the_wrong_signature_is_refused() -> None:
    assert "run_finished must be async (async def run_finished(run_id, result))" in _refused(
        NotAsync()
    )
    assert (
        "model_request(run_id, turn) cannot be called as "
        "model_request(run_id, turn, attempt, messages)"
    ) in _refused(TooFew())
    # tool_interrupted's default calls tool_finished without eager.
    assert (
        "tool_finished(run_id, turn, call, result, *, eager) cannot be called as "
        "tool_finished(run_id, turn, call, result, *, eager=...)"
    ) in _refused(EagerRequired())


class Sound(RunObserver):
    """Hooks of any parameter names, and helpers that look like no hook."""

    async def tool_finished(self, r: str, t: int, c: Any, res: Any, **_: Any) -> None:
        pass

    async def run_failed(self, *args: Any) -> None:
        pass

    def tool_name(self) -> str:
        return "x"

    def flush(self) -> None:
        pass


def test_sound_observers_are_accepted(tmp_path: Any) -> None:
    journal = SQLiteJournal(tmp_path / "runs.db")
    try:
        observers = [Sound(), Tracer(), JournalObserver(journal), RunObserver.__new__(Sound)]
        agent = _agent(*observers)
        assert agent.observers == observers
        assert len(Observers(observers).tool_finished) == 4
    finally:
        journal.close()


def test_an_observer_added_after_the_agent_is_checked_when_bound() -> None:
    agent = _agent()
    agent.observers.append(Misspelt())
    with pytest.raises(RegistrationError, match="did you mean tool_started"):
        Observers(agent.observers)
    with pytest.raises(RegistrationError, match="did you mean tool_started"):
        check_observers(agent.observers)
