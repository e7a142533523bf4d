"""Typed output over real HTTP against the emulation server, in the five
dialects that have native structured output, asked natively and by the
final-result tool: the output is an instance of the model, a refused answer
goes back to the model with its errors, and the run fails typed when the
retries run out."""

from __future__ import annotations

import itertools
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from toolwire import Agent, OutputDelta, OutputInvalid, RunFinished, UsageError
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.messages import ToolResultMessage, UserMessage
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

NAMES = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"]
MODES = ["native", "tool"]


class Item(BaseModel):
    name: str
    qty: int


class Invoice(BaseModel):
    number: str
    items: list[Item]
    total: int


GOOD = {"number": "INV-7", "items": [{"name": "bolt", "qty": 3}], "total": 500}
BAD = {"number": "INV-7", "items": [{"name": "bolt", "qty": 3}], "total": "500"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def agent_for(server: EmulationServer, name: str, **options: Any) -> Agent[Any]:
    _, dialect, model = PROVIDERS[name]
    provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
    return Agent(provider, model=model, journal=False, **options)


async def ask(agent: Agent[Any], prompt: str, **options: Any) -> Any:
    """``agent.run(prompt)``, its connections closed after."""
    try:
        return await agent.run(prompt, **options)
    finally:
        await agent.aclose()


def scenario(*outputs: Any, chunk_size: int = 16) -> Scenario:
    return Scenario.from_dict({"turns": [{"output": o, "chunk_size": chunk_size} for o in outputs]})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
async def test_the_output_is_an_instance_of_the_model(name: str, mode: str) -> None:
    with EmulationServer(scenario(GOOD)) as server:
        agent = agent_for(server, name, output_type=Invoice, output_mode=mode)
        result = await ask(agent, "Extract the invoice.")
        (request,) = server.requests
    assert isinstance(result.output, Invoice)
    assert result.output == Invoice.model_validate(GOOD)
    body = json.dumps(request)
    assert ("final_result" in body) is (mode == "tool")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
async def test_an_invalid_answer_is_fed_back_and_the_second_accepted(name: str, mode: str) -> None:
    with EmulationServer(scenario(BAD, GOOD)) as server:
        agent = agent_for(server, name, output_type=Invoice, output_mode=mode)
        result = await ask(agent, "Extract the invoice.")
        assert len(server.requests) == 2
    assert result.output == Invoice.model_validate(GOOD) and result.turns == 2
    feedback = result.messages[2]
    if mode == "native":
        assert isinstance(feedback, UserMessage)
        text = feedback.text
    else:
        assert isinstance(feedback, ToolResultMessage) and feedback.is_error
        text = feedback.content
    assert "total" in text and "valid integer" in text


async def test_the_retries_run_out_in_a_typed_error_keeping_the_raw_text() -> None:
    with EmulationServer(scenario(BAD, BAD)) as server:
        agent = agent_for(server, "openai-chat", output_type=Invoice, output_retries=1)
        with pytest.raises(OutputInvalid) as caught:
            await ask(agent, "Extract the invoice.")
    assert json.loads(caught.value.raw) == BAD
    assert caught.value.attempts == 2 and caught.value.errors[0][0] == "total"


async def test_coercion_only_when_asked() -> None:
    with EmulationServer(scenario(BAD)) as server:
        agent = agent_for(server, "anthropic", output_type=Invoice, output_strict=False)
        result = await ask(agent, "Extract the invoice.")
    assert result.output.total == 500


@pytest.mark.parametrize("mode", MODES)
async def test_a_union_a_list_and_a_literal(mode: str) -> None:
    class Refusal(BaseModel):
        reason: str

    cases: list[tuple[Any, Any, Any]] = [
        (list[Item], {"response": [{"name": "a", "qty": 1}]}, [Item(name="a", qty=1)]),
        (Literal["spam", "ham"], {"response": "ham"}, "ham"),
    ]
    for output_type, answer, expected in cases:
        with EmulationServer(scenario(answer)) as server:
            agent = agent_for(server, "openai-chat", output_mode=mode)
            result = await ask(agent, "Classify.", output_type=output_type)
        assert result.output == expected
    union: Any = Invoice | Refusal
    turn: dict[str, Any] = {"output": {"reason": "no invoice"}}
    if mode == "native":
        turn["output"] = {"response": {"reason": "no invoice"}}
    else:
        turn["output_tool"] = "final_result_Refusal"
    with EmulationServer(Scenario.from_dict({"turns": [turn]})) as server:
        agent = agent_for(server, "openai-responses", output_type=union, output_mode=mode)
        result = await ask(agent, "Extract the invoice.")
    assert result.output == Refusal(reason="no invoice")


async def test_with_tools_the_run_ends_at_the_output() -> None:
    ran: list[str] = []

    def lookup(number: str) -> dict[str, Any]:
        """Find an invoice.

        Args:
            number: the invoice number.
        """
        ran.append(number)
        return {"total": 500}

    script = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "lookup", "arguments": {"number": "INV-7"}}]},
                {"output": GOOD},
            ]
        }
    )
    for mode in MODES:
        with EmulationServer(script) as server:
            agent = agent_for(
                server, "gemini", tools=[lookup], output_type=Invoice, output_mode=mode
            )
            result = await ask(agent, "Extract the invoice.")
        assert result.output.total == 500 and result.turns == 2
    assert ran == ["INV-7", "INV-7"]


@pytest.mark.parametrize("mode", MODES)
async def test_streamed_partials_grow_and_end_in_the_output(mode: str) -> None:
    items = [{"name": f"item {i} " + "x" * (i % 7), "qty": i} for i in range(200)]
    big = {"number": "INV-9", "items": items, "total": 1}
    seen: list[str] = []
    final: list[Any] = []
    with EmulationServer(scenario(big, chunk_size=7)) as server:
        agent = agent_for(server, "anthropic", output_type=Invoice, output_mode=mode)
        try:
            async for event in agent.stream("Extract."):
                if isinstance(event, OutputDelta):
                    seen.append(json.dumps(event.partial))
                elif isinstance(event, RunFinished):
                    final.append(event.result.output)
        finally:
            await agent.aclose()
    assert len(seen) > 100
    assert json.loads(seen[-1]) == big and final == [Invoice.model_validate(big)]


def grows_into(before: Any, after: Any) -> bool:
    """``after`` holds ``before`` and more: objects keep their keys (the last
    may grow), lists their items (the last may grow), strings their text."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = list(before)
        if keys != list(after)[: len(keys)]:
            return False
        *done, last = keys or [None]
        same = all(before[k] == after[k] for k in done)
        return same and (last is None or grows_into(before[last], after[last]))
    if isinstance(before, list) and isinstance(after, list):
        if len(before) > len(after) or before[:-1] != after[: len(before) - 1]:
            return False
        return not before or grows_into(before[-1], after[len(before) - 1])
    if isinstance(before, str) and isinstance(after, str):
        return after.startswith(before)
    return bool(before == after)


@pytest.mark.parametrize("mode", MODES)
async def test_the_partials_of_a_1_mb_object_grow_and_end_equal_to_it(mode: str) -> None:
    items = [{"name": f"part {i:06d} " + "ü" * (i % 13), "qty": i} for i in range(22_000)]
    big = {"number": "INV-1MB", "items": items, "total": 7}
    assert len(json.dumps(big)) > 1_000_000
    snapshots: list[Any] = []
    deltas = 0
    final: list[Any] = []
    with EmulationServer(scenario(big, chunk_size=512)) as server:
        agent = agent_for(server, "openai-responses", output_type=Invoice, output_mode=mode)
        try:
            async for event in agent.stream("Extract."):
                if isinstance(event, OutputDelta):
                    deltas += 1
                    if deltas % 97 == 1:  # a copy now and then: copying each would be quadratic
                        snapshots.append(json.loads(json.dumps(event.partial)))
                    last = event.partial
                elif isinstance(event, RunFinished):
                    final.append(event.result.output)
        finally:
            await agent.aclose()
    assert deltas > 1_000 and len(snapshots) > 10
    snapshots.append(last)
    assert all(grows_into(a, b) for a, b in itertools.pairwise(snapshots))
    assert last == big and final == [Invoice.model_validate(big)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["anthropic", "gemini"])
async def test_stream_output_yields_the_partials_then_the_output(name: str, mode: str) -> None:
    items = [{"name": f"part {i}", "qty": i} for i in range(40)]
    answer = {"number": "INV-2", "items": items, "total": 3}
    counts: list[int] = []
    values: list[Any] = []
    with EmulationServer(scenario(answer, chunk_size=5)) as server:
        agent = agent_for(server, name, output_mode=mode)
        try:
            async for value in agent.stream_output("Extract.", output_type=Invoice):
                values.append(value)
                counts.append(len(getattr(value, "items", [])))
        finally:
            await agent.aclose()
    assert all(isinstance(v, Invoice) for v in values)
    assert values[-1] == Invoice.model_validate(answer)
    assert counts == sorted(counts) and counts[-1] == 40
    # Gemini sends a call whole: its arguments come once, when it is ready.
    if (name, mode) == ("gemini", "tool"):
        assert len(values) == 2
    else:  # the number, the list started, each item, the total, then the output
        assert len(values) == 1 + 1 + 40 + 1 + 1


async def test_stream_output_needs_a_typed_run() -> None:
    with EmulationServer(scenario(GOOD)) as server:
        agent = agent_for(server, "openai-chat")
        with pytest.raises(UsageError, match="output_type"):
            async for _ in agent.stream_output("Extract."):
                pass
        await agent.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_a_refused_answer_on_the_last_turn_ends_at_the_turn_limit(mode: str) -> None:
    with EmulationServer(scenario(BAD, GOOD)) as server:
        agent = agent_for(server, "openai-chat", output_type=Invoice, output_mode=mode, max_turns=1)
        result = await ask(agent, "Extract the invoice.")
    assert (result.outcome, result.output, result.turns) == ("max_turns", None, 1)


@pytest.mark.parametrize("native_output", [None, True])
async def test_an_older_model_is_asked_by_the_tool_unless_the_agent_says(
    native_output: bool | None,
) -> None:
    with EmulationServer(scenario(GOOD)) as server:
        url = server.url_for("openai-chat")
        provider = make_provider("openai-chat", base_url=url, api_key="test-key")
        agent: Agent[Any] = Agent(
            provider,
            model="gpt-4o-2024-05-13",  # before json_schema, in the registration's table
            journal=False,
            output_type=Invoice,
            native_output=native_output,
        )
        result = await ask(agent, "Extract the invoice.")
        (request,) = server.requests
    assert result.output == Invoice.model_validate(GOOD)
    assert ("response_format" in request) is bool(native_output)
    assert ("tools" in request) is not bool(native_output)
