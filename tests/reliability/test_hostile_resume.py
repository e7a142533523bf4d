"""A stream reopened after a cut must continue the stream it reopens.

A hostile provider on loopback (``_hostile_server``) cuts the turn that
pays bob 1,250 cents, then answers the reopening (``GET /v1/responses/{id}
?stream=true&starting_after=N``, ``GET /v1beta/interactions/{id}?stream=true
&last_event_id=...``) with what a broken or hostile server may send: the
stream again from its first event, an event twice, or another response's or
interaction's events. Each time the reopened stream fails with a
``ContinuationMismatch``, nothing it carried runs, the turn is asked again
(``stream_retries``), and the payment runs once, to bob, for 1,250 cents.

A Responses call whose ``output_item.done`` names another ``call_id`` than
its ``output_item.added`` is one invalid call (or, already handed on, a
failed stream), never a second payment.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests._kept_streams import THEFT, interaction_events, response_events, sse
from tests.reliability._hostile_server import Script, serving
from toolwire import Agent, ContinuationMismatch, ModelRetrying, RunFinished, tool
from toolwire.errors import RemoteProtocolError
from toolwire.providers import GeminiInteractions, OpenAIResponses
from toolwire.run import AgentEvent, RunResult
from toolwire.types import InvalidToolCall

pytestmark = pytest.mark.anyio

BOB = ("bob", 1250)


async def run(dialect: str, script: Script) -> tuple[RunResult, list[tuple[str, int]], list[Any]]:
    """The run, the payments made, and the errors its turns were asked again for."""
    paid: list[tuple[str, int]] = []

    @tool
    def pay(to: str, amount_cents: int) -> str:
        """Pay someone.

        Args:
            to: who.
            amount_cents: how much, in cents.
        """
        paid.append((to, amount_cents))
        return f"paid {amount_cents} to {to}"

    events: list[AgentEvent] = []
    with serving(script) as root:
        if dialect == "responses":
            provider: Any = OpenAIResponses(
                base_url=f"{root}/v1", api_key="test-key", openai_background=True
            )
        else:
            provider = GeminiInteractions(base_url=f"{root}/v1beta", api_key="test-key")
        agent = Agent(provider, model="m", tools=[pay], stream_retries=1, journal=False)
        try:
            async for event in agent.stream("Pay bob 12.50"):
                events.append(event)
        finally:
            await agent.aclose()
    last = events[-1]
    assert isinstance(last, RunFinished)
    retried = [e.error for e in events if isinstance(e, ModelRetrying)]
    return last.result, paid, retried


def calls(result: RunResult) -> list[tuple[str, Any]]:
    return [
        (r.call.name, getattr(r.call, "arguments", None) or r.call.raw_arguments)
        for r in result.tool_calls
    ]


def paid_bob_once(result: RunResult, paid: list[tuple[str, int]], script: Script) -> None:
    assert paid == [BOB]
    assert calls(result) == [("pay", {"to": "bob", "amount_cents": 1250})]
    assert result.outcome == "answered" and result.output == "Paid bob."
    # The cut turn, the same turn asked again, the turn after the payment.
    assert len(script.posts) == 3


# -- Responses -----------------------------------------------------------------------

CUT = response_events("resp_cut", call_id="call_cut")
"""The turn that is cut: created, in_progress, the call added (2), its six
argument deltas (3 to 8), the arguments done (9), the item done (10), the end."""


def responses(reopened: list[dict[str, Any]], cut_after: int | None) -> Script:
    return Script(
        first=sse(CUT),
        cut_after=cut_after,
        reopened=sse(reopened),
        again=sse(response_events("resp_again", call_id="call_again")),
        final=sse(response_events("resp_final", text="Paid bob.")),
    )


OTHER = response_events("resp_other", text="x" * 48, call_id="call_other", arguments=THEFT)
"""Another response: a message (0 to 11), then a call paying mallory (12...)."""

RESPONSES_CASES = {
    # Cut inside the amount (after '"amount_cents":125', event 7): the stream
    # again from its first event.
    "replay before the cursor": (CUT, 7),
    # Cut after in_progress (1): the call's output_item.added comes twice.
    "duplicate event": ([CUT[2], *CUT[2:]], 1),
    # Another response's events after 8: they continue the numbers, not the response.
    "another response": (OTHER[9:], 8),
}


@pytest.mark.parametrize("case", sorted(RESPONSES_CASES))
async def test_a_reopened_responses_stream_that_does_not_continue_runs_nothing(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    reopened, cut_after = RESPONSES_CASES[case]
    script = responses(reopened, cut_after)
    caplog.set_level(logging.INFO, logger="toolwire.providers")
    result, paid, retried = await run("responses", script)
    paid_bob_once(result, paid, script)
    assert script.gets == [f"/v1/responses/resp_cut?stream=true&starting_after={cut_after}"]
    [error] = retried
    assert isinstance(error, ContinuationMismatch)
    assert (error.stream_id, error.after) == ("resp_cut", str(cut_after))
    said = [r.getMessage() for r in caplog.records if r.name == "toolwire.providers._reads"]
    assert any("does not continue it" in line and "test-key" not in line for line in said)


async def test_a_call_whose_end_names_another_call_id_is_not_a_second_call() -> None:
    # Its arguments complete (the call was handed on), then its end names call_x.
    script = Script(
        first=sse(response_events("resp_cut", call_id="call_cut", ended_call_id="call_x")),
        again=sse(response_events("resp_again", call_id="call_again")),
        final=sse(response_events("resp_final", text="Paid bob.")),
    )
    result, paid, retried = await run("responses", script)
    paid_bob_once(result, paid, script)
    [error] = retried
    assert isinstance(error, RemoteProtocolError)
    assert "call_id 'call_cut' became 'call_x'" in error.message


async def test_a_call_whose_end_changes_its_call_id_before_it_is_whole_is_invalid() -> None:
    # Arguments only at the end (no deltas), in an end that names call_x.
    first = response_events("resp_cut", call_id="call_cut", ended_call_id="call_x", deltas=False)
    script = Script(
        first=sse(first),
        again=sse(response_events("resp_again", call_id="call_again")),
        final=sse(response_events("resp_final", text="Paid bob.")),
    )
    result, paid, retried = await run("responses", script)
    assert paid == [] and retried == []
    [record] = result.tool_calls
    assert isinstance(record.call, InvalidToolCall) and record.call.id == "call_cut"
    assert "call_id 'call_cut' became 'call_x'" in record.call.error
    assert not record.result.ok
    assert result.outcome == "answered" and len(script.posts) == 2


# -- Gemini Interactions ---------------------------------------------------------------

SPLIT = ['{"to":"bob",', '"amount_cents":1', "25", "0}"]
"""The payment's arguments in four deltas: the third, twice, pays 125,250 cents."""

INTERRUPTED = interaction_events("v1_cut", call_id="call_cut", arguments=SPLIT)
"""The turn that is cut: created (0), the call started (1), its four argument
deltas (2 to 5), stopped (6), the status (7), the end (8)."""

ANOTHER = interaction_events("v1_other", call_id="call_other", first_step=1, arguments=[THEFT])
"""Another interaction: its call, paying mallory, is step 1."""

INTERACTIONS_CASES = {
    # Cut inside the amount (after '"amount_cents":1', event 3): the stream
    # again from its first event.
    "replay before the cursor": (INTERRUPTED, 3),
    # Cut after "1" (event 3): the delta "25" comes twice.
    "duplicate event": ([INTERRUPTED[4], *INTERRUPTED[4:]], 3),
    # Another interaction's call and end, after the arguments were whole.
    "another interaction": (ANOTHER[1:], 5),
}


@pytest.mark.parametrize("case", sorted(INTERACTIONS_CASES))
async def test_a_reopened_interaction_that_does_not_continue_runs_nothing(case: str) -> None:
    reopened, cut_after = INTERACTIONS_CASES[case]
    script = Script(
        first=sse(INTERRUPTED),
        cut_after=cut_after,
        reopened=sse(reopened),
        again=sse(interaction_events("v1_again", call_id="call_again")),
        final=sse(interaction_events("v1_final", text="Paid bob.")),
    )
    result, paid, retried = await run("interactions", script)
    paid_bob_once(result, paid, script)
    last = INTERRUPTED[cut_after]["event_id"]
    assert script.gets == [f"/v1beta/interactions/v1_cut?stream=true&last_event_id={last}"]
    [error] = retried
    assert isinstance(error, ContinuationMismatch)
    assert (error.stream_id, error.after) == ("v1_cut", last)
