"""``stream_output``'s partial objects, over real HTTP against the emulation
server: for a pydantic model, a dataclass, a TypedDict and a list, asked
natively and by the final-result tool, each partial holds only complete
fields (a list field grows by complete items), they only grow, and the last
partial equals the validated output. Also the parser's ``settled``, on
which the builder relies."""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_core import to_jsonable_python
from typing_extensions import TypedDict

from toolwire import Agent, OutputDelta
from toolwire.providers import OpenAIChat
from toolwire.stream.partial import PartialJSONParser
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio


class Line(BaseModel):
    name: str
    qty: int


class Order(BaseModel):
    number: str
    lines: list[Line]
    note: str = "none"
    total: int


@dataclasses.dataclass
class LineDC:
    name: str
    qty: int


@dataclasses.dataclass
class OrderDC:
    number: str
    lines: list[LineDC]
    total: int
    note: str = "none"


class OrderTD(TypedDict):
    number: str
    lines: list[Line]
    total: int


LINES = [{"name": f"line {i} " + "é" * (i % 5), "qty": i} for i in range(25)]
ORDER = {"number": "ORD-1", "lines": LINES, "note": "a long note " * 4, "total": 9}
TYPES: dict[str, tuple[Any, Any]] = {
    "model": (Order, ORDER),
    "dataclass": (OrderDC, ORDER),
    "typeddict": (OrderTD, {k: v for k, v in ORDER.items() if k != "note"}),
    "list": (list[Line], LINES),
}
"""Each type and the answer to it (a list is answered wrapped, ``{"response": [...]}``)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def snapshot(value: Any) -> Any:
    """A partial as plain JSON data: its fields there (complete), now (a
    list field is shared with the later partials, which grow it in place)."""
    if isinstance(value, BaseModel):
        return {k: to_jsonable_python(getattr(value, k)) for k in value.model_fields_set}
    if dataclasses.is_dataclass(value):
        names = [f.name for f in dataclasses.fields(value) if f.name in vars(value)]
        return {k: to_jsonable_python(getattr(value, k)) for k in names}
    return to_jsonable_python(value)


def grows_into(before: Any, after: Any) -> bool:
    """``after`` is ``before`` with more: new fields, longer lists; a field
    there never changes but by growing its list."""
    if isinstance(before, list):
        return isinstance(after, list) and after[: len(before)] == before
    if isinstance(before, dict) and isinstance(after, dict):
        return all(k in after and grows_into(v, after[k]) for k, v in before.items())
    return bool(before == after)


async def partials(output_type: Any, answer: Any, mode: str) -> list[Any]:
    given = {"response": answer} if isinstance(answer, list) else answer
    scenario = Scenario.from_dict({"turns": [{"output": given, "chunk_size": 7}]})
    out: list[Any] = []
    with EmulationServer(scenario) as server:
        provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="k")
        agent: Agent[Any] = Agent(provider, model="gpt-4.1-mini", journal=False, output_mode=mode)
        try:
            async for value in agent.stream_output("Extract.", output_type=output_type):
                out.append((value, snapshot(value)))  # the snapshot as of this step
        finally:
            await agent.aclose()
    return out


@pytest.mark.parametrize("mode", ["native", "tool"])
@pytest.mark.parametrize("kind", list(TYPES))
async def test_the_partials_grow_by_complete_values_and_end_equal(kind: str, mode: str) -> None:
    output_type, answer = TYPES[kind]
    seen = await partials(output_type, answer, mode)
    *steps, (final, final_snapshot) = seen
    snapshots = [s for _, s in steps]
    assert all(grows_into(a, b) for a, b in itertools.pairwise(snapshots))
    assert snapshots[-1] == final_snapshot == to_jsonable_python(answer)
    assert steps[-1][0] == final
    # Every line completes in its own step (7 characters a delta), and a
    # partial comes only when a delta completed more: one per line at least.
    assert len(LINES) <= len(steps) <= len(LINES) + 4
    if kind != "list":  # a field appears whole: the note never shows cut
        assert {s.get("note") for s in snapshots} <= {None, answer.get("note")}
        assert snapshots[0] == {"number": "ORD-1"}


async def test_a_field_that_does_not_validate_alone_does_not_appear() -> None:
    bad = {**ORDER, "total": "9"}
    scenario = Scenario.from_dict(
        {"turns": [{"output": bad, "chunk_size": 7}, {"output": ORDER, "chunk_size": 7}]}
    )
    firsts: list[Any] = []
    with EmulationServer(scenario) as server:
        provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="k")
        agent = Agent(provider, model="gpt-4.1-mini", journal=False, output_type=Order)
        try:
            async for event in agent.stream("Extract.", partial_output=True):
                if isinstance(event, OutputDelta) and event.output is not None:
                    firsts.append((event.turn, snapshot(event.output)))
        finally:
            await agent.aclose()
    first_turn = [s for turn, s in firsts if turn == 1]
    assert first_turn and all("total" not in s for s in first_turn)
    assert firsts[-1] == (2, to_jsonable_python(ORDER))


def test_settled_says_when_every_value_of_a_container_is_complete() -> None:
    parser = PartialJSONParser()
    steps = []
    for piece in ['{"a": "x', 'y", "b": [1', ", 2", "]", ', "c": {"d": 1', "}", "}"]:
        parser.feed(piece)
        root = parser.value()
        b = root.get("b")
        steps.append((parser.settled(root, 0), None if b is None else parser.settled(b, 1)))
    assert steps == [
        (False, None),  # "xy" cut
        (False, True),  # 1 is not in the list until a character follows it
        (False, True),
        (True, True),  # the list closed
        (False, True),  # c's object is open
        (True, True),
        (True, True),
    ]
    assert json.dumps(parser.finish()) == '{"a": "xy", "b": [1, 2], "c": {"d": 1}}'
