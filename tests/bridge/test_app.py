"""The bridge over real HTTP: requests translated for the upstream, calls
closed only once complete, the finish never ``stop`` with calls, refusals
with the upstream's status, fallback chains per route, the bridge's own key,
and every request journaled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from toolwire import HttpRetryPolicy
from toolwire.bridge import BridgeServer
from toolwire.cost import cost_from_dict, default_prices
from toolwire.errors import UsageError
from toolwire.journal import ModelAttempt, ModelResponse, SQLiteJournal
from toolwire.providers import Anthropic, OpenAIChat
from toolwire.stream.framing import SSEDecoder
from toolwire.testing import FAULT_HEADER, EmulationServer, Scenario
from toolwire.types import Usage

WEATHER = Scenario.from_dict(
    {
        "name": "bridge-weather",
        "turns": [
            {
                "text": "Looking.",
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_time", "arguments": {"zone": "Europe/Paris"}},
                ],
                "chunk_size": 4,
            },
            {"text": "Rainy, at noon."},
        ],
    }
)
TOOLS = [
    {
        "name": "get_weather",
        "description": "The weather.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "name": "get_time",
        "description": "The time.",
        "input_schema": {"type": "object", "properties": {"zone": {"type": "string"}}},
    },
]


NO_RETRY = HttpRetryPolicy(retries=0)


def sse(body: bytes) -> list[tuple[str | None, Any]]:
    decoder = SSEDecoder()
    events = [*decoder.feed(body), *decoder.close()]
    return [(e.event, json.loads(e.data) if e.data.startswith("{") else e.data) for e in events]


def test_an_anthropic_client_on_an_openai_chat_upstream() -> None:
    """History, tools, tool choice and a system message inside ``messages``
    (Claude Code's) become the upstream's request; the answer's calls come
    back whole, with the upstream's ids."""
    with EmulationServer(WEATHER) as upstream:
        target = f"openai-chat:qwen3-coder@{upstream.url_for('openai-chat')}"
        with BridgeServer({"claude-bridged": target}, serve="anthropic-messages") as bridge:
            client = anthropic.Anthropic(
                base_url=bridge.url_for("anthropic-messages"), api_key="k", max_retries=0
            )
            with client.messages.stream(
                model="claude-bridged",
                max_tokens=256,
                system="Be brief.",
                messages=[{"role": "user", "content": "Weather and time in Paris?"}],
                tools=TOOLS,  # type: ignore[arg-type]
                tool_choice={"type": "auto"},
            ) as stream:
                first = stream.get_final_message()
            calls = [b for b in first.content if b.type == "tool_use"]
            history: list[Any] = [
                {"role": "user", "content": "Weather and time in Paris?"},
                {"role": "assistant", "content": [b.model_dump() for b in first.content]},
                {"role": "system", "content": "Answer in English."},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": c.id, "content": "ok"} for c in calls
                    ],
                },
            ]
            second = client.messages.create(
                model="claude-bridged",
                max_tokens=256,
                messages=history,
                tools=TOOLS,  # type: ignore[arg-type]
            )
        asked = list(upstream.requests)
    assert first.stop_reason == "tool_use"
    assert [(c.name, c.input) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"zone": "Europe/Paris"}),
    ]
    assert [b.type for b in first.content] == ["text", "tool_use", "tool_use"]
    assert all(c.id.startswith("call_") for c in calls)  # the upstream's own ids
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    assert second.content[0].type == "text" and second.content[0].text == "Rainy, at noon."
    one, two = asked
    assert one["model"] == "qwen3-coder" and one["stream"] is True
    assert one["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [t["function"]["name"] for t in one["tools"]] == ["get_weather", "get_time"]
    assert one["tool_choice"] == "auto"
    roles = [m["role"] for m in two["messages"]]
    assert roles == ["user", "assistant", "system", "tool", "tool"]
    assert [c["id"] for c in two["messages"][1]["tool_calls"]] == [c.id for c in calls]
    assert [m["tool_call_id"] for m in two["messages"][3:]] == [c.id for c in calls]


def test_a_call_cut_upstream_is_never_closed_and_the_answer_ends_with_an_error() -> None:
    cut = {FAULT_HEADER: json.dumps({"cut_at_fraction": 0.7})}
    with EmulationServer(WEATHER) as upstream:
        provider = OpenAIChat(base_url=upstream.url_for("openai-chat"), api_key="k", headers=cut)
        with BridgeServer({"*": provider}, serve="anthropic-messages") as bridge:
            body = {
                "model": "m",
                "max_tokens": 64,
                "stream": True,
                "messages": [{"role": "user", "content": "x"}],
                "tools": TOOLS,
            }
            reply = httpx.post(bridge.base_url + "/v1/messages", json=body, timeout=10)
    events = sse(reply.content)
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "error" and "message_stop" not in kinds and "message_delta" not in kinds
    started = [i for i, (k, e) in enumerate(events) if k == "content_block_start"]
    uses = [
        events[i][1]["index"]
        for i in started
        if events[i][1]["content_block"]["type"] == "tool_use"
    ]
    stopped = {e["index"] for k, e in events if k == "content_block_stop"}
    assert uses and uses[-1] not in stopped  # the unfinished call is left open


def test_calls_finish_as_calls_whatever_word_the_upstream_used() -> None:
    scenario = Scenario.from_dict(
        {
            "name": "said-end-turn",
            "turns": [
                {
                    "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
                    "provider_finish": {"anthropic-messages": "end_turn"},
                }
            ],
        }
    )
    with EmulationServer(scenario) as upstream:
        target = f"anthropic-messages:claude@{upstream.url_for('anthropic-messages')}"
        with BridgeServer({"*": target}, serve="openai-chat") as bridge:
            client = openai.OpenAI(base_url=bridge.url_for("openai-chat"), api_key="k")
            chunks = list(
                client.chat.completions.create(
                    model="gpt", messages=[{"role": "user", "content": "x"}], stream=True
                )
            )
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["tool_calls"]


def test_a_refusal_before_the_answer_keeps_its_status_in_the_served_shape() -> None:
    busy = {FAULT_HEADER: json.dumps({"status": 429, "message": "slow down"})}
    with EmulationServer(WEATHER) as upstream:
        provider = Anthropic(
            base_url=upstream.url_for("anthropic-messages"), api_key="k", headers=busy
        )
        with BridgeServer({"*": provider}, serve="openai-chat", retry=NO_RETRY) as bridge:
            reply = httpx.post(
                bridge.url_for("openai-chat") + "/chat/completions",
                json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]},
                timeout=10,
            )
    assert reply.status_code == 429
    assert (
        reply.json()["error"]["type"] == "requests"
        and "slow down" in reply.json()["error"]["message"]
    )


def test_a_route_s_fallback_chain_and_the_journal(tmp_path: Path) -> None:
    fault = {FAULT_HEADER: json.dumps({"status": 503})}
    journal = SQLiteJournal(tmp_path / "bridge.sqlite3")
    with EmulationServer(WEATHER) as down, EmulationServer(WEATHER) as up:
        primary = OpenAIChat(base_url=down.url_for("openai-chat"), api_key="k", headers=fault)
        chain = [
            (primary, "qwen"),
            f"anthropic-messages:claude-haiku@{up.url_for('anthropic-messages')}",
        ]
        with BridgeServer(
            {"gpt-5": chain}, serve="openai-responses", journal=journal, retry=NO_RETRY
        ) as bridge:
            client = openai.OpenAI(base_url=bridge.url_for("openai-responses"), api_key="k")
            events = list(client.responses.create(model="gpt-5", input="x", stream=True))
    done = events[-1]
    assert done.type == "response.completed"
    calls = [item for item in done.response.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"zone": "Europe/Paris"}),
    ]
    [run] = journal.list_runs()
    log = journal.load_run(run.run_id)
    journal.close()
    kinds = [e.kind for e in log.events]
    assert kinds == [
        "run_started",
        "model_request",
        "model_attempt",
        "model_attempt",
        "model_response",
        "run_finished",
    ]
    tried = [e.record for e in log.events if isinstance(e.record, ModelAttempt)]
    assert [(t.dialect, t.model, (t.error or {}).get("status_code")) for t in tried] == [
        ("openai-chat", "qwen", 503),
        ("anthropic-messages", "claude-haiku", None),
    ]


def test_the_bridge_s_own_key() -> None:
    with pytest.raises(UsageError, match="API key"):
        BridgeServer({"*": "openai-chat@http://127.0.0.1:9/v1"}, host="0.0.0.0")
    with EmulationServer(WEATHER) as upstream:
        target = f"openai-chat@{upstream.url_for('openai-chat')}"
        with BridgeServer({"*": target}, serve="anthropic-messages", api_key="s3cret") as bridge:
            url = bridge.base_url + "/v1/messages"
            body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]}
            refused = httpx.post(url, json=body, headers={"x-api-key": "wrong"})
            admitted = httpx.post(url, json=body, headers={"x-api-key": "s3cret"})
    assert refused.status_code == 401 and refused.json()["error"]["type"] == "authentication_error"
    assert admitted.status_code == 200
    whole = admitted.json()
    assert whole["stop_reason"] == "tool_use"
    assert [b["input"] for b in whole["content"] if b["type"] == "tool_use"] == [
        {"city": "Paris"},
        {"zone": "Europe/Paris"},
    ]


@pytest.mark.parametrize("priced", [True, False])
def test_each_journaled_request_is_priced_as_its_upstream(tmp_path: Path, priced: bool) -> None:
    """The cost is the upstream model's at its provider's prices, or none
    when the bridge is told not to price."""
    journal = SQLiteJournal(tmp_path / "bridge.sqlite3")
    with EmulationServer(WEATHER) as upstream:
        target = OpenAIChat(base_url=upstream.url_for("openai-chat"), api_key="k")
        with BridgeServer(
            {"claude-bridged": (target, "gpt-4o")},
            serve="anthropic-messages",
            journal=journal,
            prices=None if priced else False,
        ) as bridge:
            client = anthropic.Anthropic(
                base_url=bridge.url_for("anthropic-messages"), api_key="k", max_retries=0
            )
            message = client.messages.create(
                model="claude-bridged", max_tokens=64, messages=[{"role": "user", "content": "x"}]
            )
    [run] = journal.list_runs()
    log = journal.load_run(run.run_id)
    journal.close()
    [response] = [e.record for e in log.events if isinstance(e.record, ModelResponse)]
    usage = Usage(
        input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens
    )
    if not priced:
        assert response.cost is None
        return
    expected = default_prices().cost("gpt-4o", usage, provider="openai")
    assert expected is not None and expected.total > 0
    assert cost_from_dict(response.cost) == expected
