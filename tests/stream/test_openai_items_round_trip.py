"""OpenAI items of 2025-26, decoded and sent back in place.

Custom (freeform) tool calls in Responses and Chat Completions, a
function call's ``caller`` and ``namespace``, state items (tool search, MCP
listings, compaction, programs), Gemini's thought signature over the
OpenAI-compatible endpoint, and ``allowed_tools``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire import StreamDecoder, StreamResult
from toolwire.errors import UsageError
from toolwire.events import ToolCallDelta
from toolwire.messages import AssistantMessage, ToolResultMessage, UserMessage
from toolwire.stream.codecs import openai_chat, openai_responses


def responses(*events: dict[str, Any]) -> tuple[StreamResult, list[Any]]:
    decoder = StreamDecoder("openai-responses")
    out: list[Any] = []
    frames = [{"type": "response.created", "response": {"id": "resp_1"}}, *events]
    frames.append({"type": "response.completed", "response": {"status": "completed"}})
    for event in frames:
        out += decoder.feed(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    out += decoder.close()
    return decoder.result(), out


def item_events(index: int, item: dict[str, Any], *middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        *middle,
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


PATCH = '*** Begin Patch\n*** Update File: a.py\n-print("hi")\n+print("hé")\n*** End Patch'


def custom_stream() -> tuple[StreamResult, list[Any]]:
    opened = {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "call_id": "call_c",
        "name": "apply",
        "input": "",
        "status": "in_progress",
    }
    done = {**opened, "input": PATCH, "status": "completed"}
    where = {"item_id": "ctc_1", "output_index": 0}
    return responses(
        {"type": "response.output_item.added", "output_index": 0, "item": opened},
        {"type": "response.custom_tool_call_input.delta", **where, "delta": PATCH[:20]},
        {"type": "response.custom_tool_call_input.delta", **where, "delta": PATCH[20:]},
        {"type": "response.custom_tool_call_input.done", **where, "input": PATCH},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
    )


def test_a_responses_custom_call_streams_its_input_and_is_ready() -> None:
    result, events = custom_stream()
    (call,) = result.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_c", "apply", {"input": PATCH})
    deltas = [e.delta for e in events if isinstance(e, ToolCallDelta)]
    assert len(deltas) == 3
    assert "".join(deltas) == '{"input":' + json.dumps(PATCH, ensure_ascii=False)[:-1]


def test_a_custom_call_and_its_result_go_back_as_custom_items() -> None:
    result, _ = custom_stream()
    assistant = AssistantMessage.from_choice(result.choices[0])
    messages = [UserMessage("fix it"), assistant, ToolResultMessage("call_c", "apply", "applied")]
    _, items = openai_responses.encode_input(messages)
    assert items[1:] == [
        {"type": "custom_tool_call", "call_id": "call_c", "name": "apply", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "call_c", "output": "applied"},
    ]


def test_a_function_calls_caller_and_namespace_go_back() -> None:
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_f",
        "name": "get",
        "arguments": '{"a": 1}',
        "status": "completed",
        "namespace": "crm",
        "caller": {"type": "program", "program_id": "prg_1"},
    }
    result, _ = responses(*item_events(0, call))
    assistant = AssistantMessage.from_choice(result.choices[0])
    _, items = openai_responses.encode_input([assistant, ToolResultMessage("call_f", "get", "1")])
    assert items[0] == {
        "type": "function_call",
        "call_id": "call_f",
        "name": "get",
        "arguments": '{"a": 1}',
        "namespace": "crm",
        "caller": {"type": "program", "program_id": "prg_1"},
    }
    assert items[1]["type"] == "function_call_output"


@pytest.mark.parametrize(
    "kind",
    [
        "tool_search_call",
        "tool_search_output",
        "mcp_list_tools",
        "compaction",
        "program",
        "program_output",
    ],
)
def test_state_items_go_back_in_place(kind: str) -> None:
    state = {"type": kind, "id": f"{kind}_1", "payload": {"k": [1, 2]}}
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_f",
        "name": "get",
        "arguments": "{}",
        "status": "completed",
    }
    result, _ = responses(*item_events(0, call), *item_events(1, state))
    assistant = AssistantMessage.from_choice(result.choices[0])
    _, items = openai_responses.encode_input([assistant])
    assert [i["type"] for i in items] == ["function_call", kind]
    assert items[1] == state


def chat(*chunks: dict[str, Any]) -> StreamResult:
    decoder = StreamDecoder("openai-chat")
    for chunk in chunks:
        decoder.feed(f"data: {json.dumps(chunk)}\n\n".encode())
    decoder.feed(b"data: [DONE]\n\n")
    decoder.close()
    return decoder.result()


def _choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_a_chat_custom_call_streams_and_goes_back_as_custom() -> None:
    first = {
        "index": 0,
        "id": "call_c",
        "type": "custom",
        "custom": {"name": "apply", "input": PATCH[:7]},
    }
    rest = {"index": 0, "custom": {"input": PATCH[7:]}}
    result = chat(
        _choice({"tool_calls": [first]}), _choice({"tool_calls": [rest]}), _choice({}, "tool_calls")
    )
    (call,) = result.tool_calls
    assert (call.name, call.arguments) == ("apply", {"input": PATCH})
    message = openai_chat.encode_messages([AssistantMessage.from_choice(result.choices[0])])[0]
    assert message["tool_calls"] == [
        {"id": "call_c", "type": "custom", "custom": {"name": "apply", "input": PATCH}}
    ]


def test_gemini_thought_signatures_over_the_compatible_endpoint_go_back() -> None:
    """Gemini 3 answers HTTP 400 when the signature does not come back."""
    extra = {"google": {"thought_signature": "c2lnbmF0dXJl"}}
    call = {
        "index": 0,
        "id": "call_g",
        "type": "function",
        "extra_content": extra,
        "function": {"name": "get", "arguments": '{"city":"Paris"}'},
    }
    result = chat(_choice({"role": "assistant", "tool_calls": [call]}), _choice({}, "tool_calls"))
    message = openai_chat.encode_messages([AssistantMessage.from_choice(result.choices[0])])[0]
    assert message["tool_calls"] == [
        {
            "id": "call_g",
            "type": "function",
            "extra_content": extra,
            "function": {"name": "get", "arguments": '{"city":"Paris"}'},
        }
    ]


TOOLS_CHAT = [openai_chat.tool_schema(n, "", {"type": "object"}, strict=False) for n in "ab"]
TOOLS_RESPONSES = [
    openai_responses.tool_schema(n, "", {"type": "object"}, strict=False) for n in "ab"
]


def test_allowed_tools_in_each_openai_shape() -> None:
    choice = {"allowed": ["b"], "mode": "required"}
    body = openai_chat.encode_request(model="m", messages=[], tools=TOOLS_CHAT, tool_choice=choice)
    assert body["tool_choice"] == {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "required",
            "tools": [{"type": "function", "function": {"name": "b"}}],
        },
    }
    body = openai_responses.encode_request(
        model="m", messages=[], tools=TOOLS_RESPONSES, tool_choice=choice
    )
    assert body["tool_choice"] == {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "function", "name": "b"}],
    }


@pytest.mark.parametrize(
    "choice", [{"allowed": ["c"]}, {"allowed": []}, {"allowed": ["a"], "mode": "none"}]
)
def test_allowed_tools_are_checked(choice: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        openai_chat.encode_request(model="m", messages=[], tools=TOOLS_CHAT, tool_choice=choice)


ASKED = {
    "computer_call": {"action": {"type": "click", "x": 1, "y": 2}, "pending_safety_checks": []},
    "local_shell_call": {"action": {"type": "exec", "command": ["ls"]}},
    "apply_patch_call": {"operation": {"type": "delete_file", "path": "a.py"}},
}


def asked_call(kind: str) -> list[Any]:
    item = {"type": kind, "id": "it_1", "call_id": "call_a", "status": "completed", **ASKED[kind]}
    result, _ = responses(*item_events(0, item))
    return [AssistantMessage.from_choice(result.choices[0]), item]


@pytest.mark.parametrize(
    ("kind", "ok", "output"),
    [
        (
            "local_shell_call",
            True,
            {"type": "local_shell_call_output", "id": "call_a", "output": "done"},
        ),
        (
            "apply_patch_call",
            False,
            {
                "type": "apply_patch_call_output",
                "call_id": "call_a",
                "status": "failed",
                "output": "done",
            },
        ),
        (
            "computer_call",
            True,
            {
                "type": "computer_call_output",
                "call_id": "call_a",
                "output": {"type": "computer_screenshot", "image_url": "data:,"},
            },
        ),
    ],
)
def test_asked_calls_are_answered_in_their_own_output_shape(
    kind: str, ok: bool, output: dict[str, Any]
) -> None:
    assistant, item = asked_call(kind)
    (call,) = assistant.tool_calls
    assert call.name == openai_responses.ASKED_CALLS[kind]
    content = json.dumps(output["output"]) if kind == "computer_call" else "done"
    answer = ToolResultMessage("call_a", call.name, content, is_error=not ok)
    _, items = openai_responses.encode_input([assistant, answer])
    assert items == [item, output]


def test_a_refused_computer_call_is_told_in_words_and_left_out() -> None:
    """A computer call's output can only be a screenshot."""
    assistant, _ = asked_call("computer_call")
    refusal = ToolResultMessage("call_a", "computer", '{"error": "refused"}', is_error=True)
    _, items = openai_responses.encode_input([assistant, refusal])
    assert items == [
        {"role": "user", "content": 'The computer call call_a was not run: {"error": "refused"}'}
    ]


def test_whole_chat_responses_keep_custom_calls_and_their_fields() -> None:
    from toolwire.stream.decoder import decode_response

    extra = {"google": {"thought_signature": "c2ln"}}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_c", "type": "custom", "custom": {"name": "apply", "input": PATCH}},
            {
                "id": "call_f",
                "type": "function",
                "extra_content": extra,
                "function": {"name": "get", "arguments": "{}"},
            },
        ],
    }
    body = {
        "id": "c1",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    result = decode_response("openai-chat", body)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("apply", {"input": PATCH}),
        ("get", {}),
    ]
    sent = openai_chat.encode_messages([AssistantMessage.from_choice(result.choices[0])])[0]
    assert sent["tool_calls"] == message["tool_calls"]


def test_streamed_reasoning_details_are_joined_and_sent_back() -> None:
    """OpenRouter streams reasoning_details in pieces; Claude's and Gemini's
    signatures behind it travel in them and must come back."""

    def piece(**detail: Any) -> dict[str, Any]:
        return _choice({"reasoning": detail.get("text", ""), "reasoning_details": [detail]})

    call = {
        "index": 0,
        "id": "call_r",
        "type": "function",
        "function": {"name": "get", "arguments": "{}"},
    }
    result = chat(
        piece(type="reasoning.text", text="Let me ", index=0, format="anthropic-claude-v1"),
        piece(type="reasoning.text", text="look.", index=0, format="anthropic-claude-v1"),
        piece(type="reasoning.text", signature="c2ln", index=0, format="anthropic-claude-v1"),
        _choice({"tool_calls": [call]}),
        _choice({}, "tool_calls"),
    )
    assert result.choices[0].reasoning == "Let me look."
    sent = openai_chat.encode_messages([AssistantMessage.from_choice(result.choices[0])])[0]
    assert sent["reasoning_details"] == [
        {
            "type": "reasoning.text",
            "text": "Let me look.",
            "index": 0,
            "format": "anthropic-claude-v1",
            "signature": "c2ln",
        }
    ]


def test_a_custom_tool_is_forced_and_allowed_in_its_own_shape() -> None:
    chat_tools = [*TOOLS_CHAT, openai_chat.custom_tool_schema("patch", "", None)]
    body = openai_chat.encode_request(
        model="m", messages=[], tools=chat_tools, tool_choice={"name": "patch"}
    )
    assert body["tool_choice"] == {"type": "custom", "custom": {"name": "patch"}}
    tools = [*TOOLS_RESPONSES, openai_responses.custom_tool_schema("patch", "", None)]
    body = openai_responses.encode_request(
        model="m", messages=[], tools=tools, tool_choice={"allowed": ["a", "patch"]}
    )
    assert body["tool_choice"]["tools"] == [
        {"type": "function", "name": "a"},
        {"type": "custom", "name": "patch"},
    ]
    with pytest.raises(UsageError):
        openai_chat.encode_request(
            model="m", messages=[], tools=chat_tools, tool_choice={"name": "x"}
        )
