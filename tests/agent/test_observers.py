"""Observers see every step of a run, in order, and are awaited: an intent is
recorded before the tool's body runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.errors import ToolwireError
from toolwire.messages import Message
from toolwire.observe import RunInfo, RunObserver
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import InvalidToolCall, StreamResult, ToolCall

pytestmark = pytest.mark.anyio


class Log(RunObserver):
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def run_started(self, info: RunInfo) -> None:
        assert "key" not in repr(info.settings).lower()
        self.lines.append(f"run_started {info.model} {info.dialect} {','.join(info.tools)}")

    async def model_request(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message]
    ) -> None:
        self.lines.append(f"model_request {turn}.{attempt} ({len(messages)} messages)")

    async def model_response(
        self, run_id: str, turn: int, attempt: int, result: StreamResult, elapsed: float
    ) -> None:
        self.lines.append(f"model_response {turn}.{attempt} {result.choices[0].finish_reason}")

    async def model_failed(
        self, run_id: str, turn: int, attempt: int, error: ToolwireError, elapsed: float
    ) -> None:
        self.lines.append(f"model_failed {turn}.{attempt} {error.type_name}")

    async def tool_started(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        idempotency_key: str,
        *,
        eager: bool = False,
    ) -> None:
        assert idempotency_key.startswith("tw-")
        self.lines.append(f"tool_started {call.name}")

    async def tool_finished(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        result: Any,
        *,
        eager: bool = False,
    ) -> None:
        self.lines.append(f"tool_finished {call.name} ok={result.ok}")

    async def run_finished(self, run_id: str, result: Any) -> None:
        self.lines.append(f"run_finished {result.outcome}")

    async def run_failed(self, run_id: str, error: BaseException) -> None:
        self.lines.append(f"run_failed {type(error).__name__}")


async def test_observers_see_every_step_and_intents_come_first() -> None:
    log = Log()

    @tool(read_only=True)
    def get_weather(city: str) -> str:
        """Weather.

        Args:
            city: the city.
        """
        log.lines.append("tool body runs")
        return "晴"

    scenario = Scenario.from_dict(
        {
            "name": "one-call",
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}]},
                {"text": "{result:0}"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        _, dialect, model = PROVIDERS["anthropic"]
        agent = Agent(
            make_provider("anthropic", base_url=server.url_for(dialect), api_key="k"),
            model=model,
            tools=[get_weather],
            observers=[log],
        )
        result = await agent.run("天气?")
        await agent.aclose()
    assert result.output == "晴"
    assert log.lines == [
        f"run_started {model} anthropic-messages get_weather",
        "model_request 1.1 (1 messages)",
        "model_response 1.1 tool_calls",
        "tool_started get_weather",
        "tool body runs",
        "tool_finished get_weather ok=True",
        "model_request 2.1 (3 messages)",
        "model_response 2.1 stop",
        "run_finished answered",
    ]


async def test_a_failing_run_is_reported_to_observers() -> None:
    log = Log()
    scenario = Scenario.from_dict(
        {"name": "down", "turns": [{"text": "x", "faults": [{"status": 400}]}]}
    )
    with EmulationServer(scenario) as server:
        _, dialect, model = PROVIDERS["openai-chat"]
        agent = Agent(
            make_provider("openai-chat", base_url=server.url_for(dialect), api_key="k"),
            model=model,
            observers=[log],
        )
        with pytest.raises(ToolwireError):
            await agent.run("hi")
        await agent.aclose()
    assert log.lines[-2:] == ["model_failed 1.1 provider_error", "run_failed ProviderError"]


class OnlyOutcomes(RunObserver):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def tool_finished(self, run_id: str, turn: int, call: Any, result: Any, **_: Any) -> None:
        self.seen.append(call.name)


class Duck:
    """Implements the protocol without subclassing it."""

    async def run_finished(self, run_id: str, result: Any) -> None:
        pass


def test_each_hook_is_bound_only_to_the_observers_that_implement_it() -> None:
    from toolwire.observe import HOOKS, Observers

    log, outcomes, duck = Log(), OnlyOutcomes(), Duck()
    bound = Observers([log, outcomes, duck])
    assert [h.__self__ for h in bound.tool_finished] == [log, outcomes]  # type: ignore[attr-defined]
    assert [h.__self__ for h in bound.run_finished] == [log, duck]  # type: ignore[attr-defined]
    # tool_interrupted defaults to tool_finished, so whoever implements that is told.
    assert len(bound.tool_interrupted) == 2
    nothing = Observers([RunObserver.__new__(OnlyOutcomes)])
    assert [hook for hook in HOOKS if getattr(nothing, hook)] == [
        "tool_finished",
        "tool_interrupted",
    ]
    assert all(getattr(Observers([]), hook) == () for hook in HOOKS)


def test_approve_with_a_ready_toolbox_is_an_error_not_ignored() -> None:
    from toolwire import Toolbox, UsageError

    provider = make_provider("openai-chat", base_url="http://127.0.0.1:9/v1", api_key="k")
    with pytest.raises(UsageError, match="approve"):
        Agent(provider, model="m", tools=Toolbox([]), approve=lambda request: True, journal=False)
    agent = Agent(provider, model="m", tools=[], approve=lambda request: True, journal=False)
    assert agent.toolbox.approve is not None


def test_each_hook_is_declared_once_in_run_observer() -> None:
    """The hooks are RunObserver's async methods; the bound slots of
    Observers are typed from the method of their name (read from the source,
    as a type checker reads it) and are exactly those."""
    import ast
    import inspect

    from toolwire import observe

    assert observe.HOOKS == tuple(
        name for name, value in vars(RunObserver).items() if inspect.iscoroutinefunction(value)
    )
    assert observe.Observers.__slots__ == observe.HOOKS
    (cls,) = [
        node
        for node in ast.parse(inspect.getsource(observe)).body
        if isinstance(node, ast.ClassDef) and node.name == "Observers"
    ]
    typed = {}
    checking = [node for node in cls.body if isinstance(node, ast.If)]  # if TYPE_CHECKING:
    for node in (n for block in checking for n in block.body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            (target,) = node.targets
            (spec,) = node.value.args
            assert isinstance(target, ast.Name) and isinstance(spec, ast.Attribute)
            typed[target.id] = spec.attr
    assert list(typed) == list(observe.HOOKS)
    assert all(name == spec for name, spec in typed.items())
