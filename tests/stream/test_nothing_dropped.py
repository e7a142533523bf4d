"""Nothing on the wire is dropped silently.

Every item, block, part and stream event type that the official SDKs name
(openai-python's output-item, tool-call and stream-event unions,
anthropic-sdk-python's beta content-block and delta unions, google-genai's
``Part`` fields) is listed here with the place it lands in:

- ``text``: text or reasoning events;
- ``call``: a client tool call, ready to run;
- ``server``: a provider-executed call (``ServerToolCallReady``);
- ``state:<type>``: provider state on the assistant message, sent back in
  place on the next request;
- ``unknown``: an ``UnknownItem`` event holding the payload as sent;
- ``progress``: a stream event reporting progress on an item that its
  ``.done`` event carries whole (Responses only).

A stream holding each type is decoded and the landing place is checked. A
type that a future SDK adds is missing from these tables, and fails
``test_every_sdk_type_is_listed`` until someone decides where it lands.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterable
from typing import Any

import pytest
from anthropic.types import beta as anthropic_beta
from anthropic.types.beta.beta_raw_message_delta_event import Delta as BetaMessageDelta
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageToolCallUnion
from openai.types.chat.chat_completion_chunk import ChoiceDelta
from openai.types.responses import ResponseOutputItem, ResponseStreamEvent

from toolwire import StreamDecoder, StreamResult
from toolwire.events import (
    Event,
    ReasoningDelta,
    ServerToolCallReady,
    TextDelta,
    ToolCallReady,
    UnknownItem,
)
from toolwire.stream.codecs.openai_chat import OpenAIChatCodec
from toolwire.stream.codecs.openai_responses import PROGRESS_EVENTS
from toolwire.stream.parts import FinishPart, UnknownPart


def union_types(union: Any) -> list[str]:
    """The ``type`` literals of an SDK's (possibly Annotated) union of models."""
    args = typing.get_args(union)
    if typing.get_origin(union) is typing.Annotated:
        args = typing.get_args(args[0])
    out: list[str] = []
    for member in args:
        out.extend(typing.get_args(member.model_fields["type"].annotation))
    return out


# -- the tables ----------------------------------------------------------------------

RESPONSES_ITEMS: dict[str, str] = {
    "message": "text",
    "function_call": "call",
    "reasoning": "state:reasoning",
    "file_search_call": "server",
    "web_search_call": "server",
    "code_interpreter_call": "server",
    "image_generation_call": "server",
    "mcp_call": "server",
    "mcp_list_tools": "state:mcp_list_tools",
    "tool_search_call": "state:tool_search_call",
    "tool_search_output": "state:tool_search_output",
    "additional_tools": "state:additional_tools",
    "compaction": "state:compaction",
    "program": "state:program",
    "program_output": "state:program_output",
    "function_call_output": "state:function_call_output",
    "custom_tool_call_output": "state:custom_tool_call_output",
    "computer_call_output": "state:computer_call_output",
    "local_shell_call_output": "state:local_shell_call_output",
    "shell_call_output": "state:shell_call_output",
    "apply_patch_call_output": "state:apply_patch_call_output",
    "mcp_approval_response": "state:mcp_approval_response",
    "custom_tool_call": "call",
    "computer_call": "call",
    "local_shell_call": "call",
    "shell_call": "call",
    "apply_patch_call": "call",
    "mcp_approval_request": "call",
}

# Events the codec reads (items, text, arguments, the response's life).
_RESPONSES_READ = {
    "response.created",
    "response.in_progress",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
    "response.output_item.added",
    "response.output_item.done",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.refusal.delta",
    "response.refusal.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
}
RESPONSES_EVENTS: dict[str, str] = {
    **dict.fromkeys(_RESPONSES_READ, "read"),
    **dict.fromkeys(PROGRESS_EVENTS, "progress"),
    "response.output_text.annotation.added": "unknown",
    "response.audio.delta": "unknown",
    "response.audio.done": "unknown",
    "response.audio.transcript.delta": "unknown",
    "response.audio.transcript.done": "unknown",
}

CHAT_MESSAGE_FIELDS: dict[str, str] = {
    "role": "read",
    "content": "text",
    "refusal": "text",
    "tool_calls": "call",
    "function_call": "call",
    "annotations": "unknown",
    "audio": "unknown",
}

CHAT_TOOL_CALLS: dict[str, str] = {
    "function": "call",
    "custom": "call",
}

ANTHROPIC_BLOCKS: dict[str, str] = {
    "text": "text",
    "thinking": "state:thinking",
    "redacted_thinking": "state:redacted_thinking",
    "tool_use": "call",
    "server_tool_use": "server",
    "mcp_tool_use": "server",
    "web_search_tool_result": "state:web_search_tool_result",
    "web_fetch_tool_result": "state:web_fetch_tool_result",
    "advisor_tool_result": "state:advisor_tool_result",
    "code_execution_tool_result": "state:code_execution_tool_result",
    "bash_code_execution_tool_result": "state:bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result": "state:text_editor_code_execution_tool_result",
    "tool_search_tool_result": "state:tool_search_tool_result",
    "mcp_tool_result": "state:mcp_tool_result",
    "mcp_tool_listing": "state:mcp_tool_listing",
    "container_upload": "state:container_upload",
    "compaction": "state:compaction",
    "fallback": "state:fallback",
}

ANTHROPIC_DELTAS: dict[str, str] = {
    "text_delta": "text",
    "input_json_delta": "call",
    "thinking_delta": "text",
    "signature_delta": "state:thinking",
    "citations_delta": "state:text_citations",
    "compaction_delta": "state:compaction",
}

GEMINI_PARTS: dict[str, str] = {
    "text": "text",
    "thought": "text",
    "thought_signature": "state:thought_signature",
    "function_call": "call",
    "function_response": "state:part",
    "inline_data": "state:part",
    "file_data": "state:part",
    "executable_code": "state:part",
    "code_execution_result": "state:part",
    "video_metadata": "unknown",
    "media_resolution": "unknown",
    "tool_call": "state:part",
    "tool_response": "state:part",
    "part_metadata": "unknown",
    "audio_transcription": "unknown",
    "media_processing": "unknown",
    "speech_metadata": "unknown",
    "document_metadata": "unknown",
    "spreadsheet_metadata": "unknown",
    "audio_metadata": "unknown",
}


# Message-level and candidate-level fields: ``read`` by the codec, ``usage``
# (kept whole in ``Usage.raw``), ``unknown`` (an ``UnknownItem`` named after
# the field), or ``sdk`` (added by the SDK, never on the wire).
ANTHROPIC_MESSAGE_FIELDS: dict[str, str] = {
    **dict.fromkeys(("id", "type", "role", "model", "content", "container"), "read"),
    **dict.fromkeys(("stop_reason", "stop_details", "usage"), "read"),
    **dict.fromkeys(("context_management", "diagnostics"), "unknown"),
    **dict.fromkeys(("stop_sequence", "input_transformations"), "unknown"),
}
ANTHROPIC_MESSAGE_DELTA_FIELDS: dict[str, str] = {
    **dict.fromkeys(("type", "delta", "usage"), "read"),
    **dict.fromkeys(("context_management", "input_transformations"), "unknown"),
}
ANTHROPIC_DELTA_FIELDS: dict[str, str] = {
    **dict.fromkeys(("container", "stop_reason", "stop_details"), "read"),
    **dict.fromkeys(("stop_sequence",), "unknown"),
}
ANTHROPIC_USAGE_FIELDS: dict[str, str] = dict.fromkeys(
    {*anthropic_beta.BetaUsage.model_fields, *anthropic_beta.BetaMessageDeltaUsage.model_fields},
    "usage",
)
GEMINI_CANDIDATE_FIELDS: dict[str, str] = {
    **dict.fromkeys(("index", "content", "finish_reason"), "read"),
    **dict.fromkeys(
        (
            "citation_metadata",
            "finish_message",
            "token_count",
            "grounding_metadata",
            "avg_logprobs",
            "logprobs_result",
            "safety_ratings",
            "url_context_metadata",
            "continuation_token",
        ),
        "unknown",
    ),
}
GEMINI_RESPONSE_FIELDS: dict[str, str] = {
    **dict.fromkeys(("candidates", "model_version", "response_id", "usage_metadata"), "read"),
    **dict.fromkeys(("create_time", "prompt_feedback", "model_status"), "unknown"),
    **dict.fromkeys(("sdk_http_response", "automatic_function_calling_history", "parsed"), "sdk"),
}


def sdk_types() -> dict[str, tuple[list[str], dict[str, str]]]:
    return {
        "responses items": (union_types(ResponseOutputItem), RESPONSES_ITEMS),
        "responses events": (union_types(ResponseStreamEvent), RESPONSES_EVENTS),
        "chat tool calls": (union_types(ChatCompletionMessageToolCallUnion), CHAT_TOOL_CALLS),
        "chat message fields": (list(ChatCompletionMessage.model_fields), CHAT_MESSAGE_FIELDS),
        "chat delta fields": (list(ChoiceDelta.model_fields), CHAT_MESSAGE_FIELDS),
        "anthropic blocks": (union_types(anthropic_beta.BetaContentBlock), ANTHROPIC_BLOCKS),
        "anthropic deltas": (
            union_types(anthropic_beta.BetaRawContentBlockDelta),
            ANTHROPIC_DELTAS,
        ),
        "gemini parts": (list(genai_types.Part.model_fields), GEMINI_PARTS),
        "anthropic message fields": (
            list(anthropic_beta.BetaMessage.model_fields),
            ANTHROPIC_MESSAGE_FIELDS,
        ),
        "anthropic message_delta fields": (
            list(anthropic_beta.BetaRawMessageDeltaEvent.model_fields),
            ANTHROPIC_MESSAGE_DELTA_FIELDS,
        ),
        "anthropic message_delta delta fields": (
            list(BetaMessageDelta.model_fields),
            ANTHROPIC_DELTA_FIELDS,
        ),
        "anthropic usage fields": (
            list(anthropic_beta.BetaUsage.model_fields),
            ANTHROPIC_USAGE_FIELDS,
        ),
        "gemini candidate fields": (
            list(genai_types.Candidate.model_fields),
            GEMINI_CANDIDATE_FIELDS,
        ),
        "gemini response fields": (
            list(genai_types.GenerateContentResponse.model_fields),
            GEMINI_RESPONSE_FIELDS,
        ),
    }


@pytest.mark.parametrize("union", list(sdk_types()))
def test_every_sdk_type_is_listed(union: str) -> None:
    names, table = sdk_types()[union]
    assert names, f"no types read from the SDK's {union}"
    missing = sorted(set(names) - set(table))
    assert not missing, f"{union}: the SDK names types with no landing place here: {missing}"


# -- landing ----------------------------------------------------------------------------


def landed(events: Iterable[Event], result: StreamResult, kind: str, place: str) -> bool:
    """Whether ``kind`` landed in ``place`` (see the module's docstring)."""
    events = list(events)
    if place == "text":
        return any(isinstance(e, TextDelta | ReasoningDelta) for e in events)
    if place == "call":
        return any(isinstance(e, ToolCallReady) and e.name for e in events)
    if place == "server":
        return any(isinstance(e, ServerToolCallReady) for e in events)
    if place.startswith("state:"):
        state_type = place.removeprefix("state:")
        return any(item.get("type") == state_type for item in result.choices[0].provider_state)
    if place == "unknown":
        return any(isinstance(e, UnknownItem) and e.type == kind and e.payload for e in events)
    raise AssertionError(f"no such place {place!r}")


def decode(
    dialect: str, frames: list[tuple[str | None, dict[str, Any]]]
) -> tuple[list[Event], StreamResult]:
    decoder = StreamDecoder(dialect)
    events: list[Event] = []
    for event, payload in frames:
        head = f"event: {event}\n" if event else ""
        events += decoder.feed(f"{head}data: {json.dumps(payload)}\n\n".encode())
    events += decoder.close()
    result = decoder.result()
    assert result.error is None, result.error
    return events, result


# -- OpenAI Responses ----------------------------------------------------------------------


def responses_item(kind: str) -> dict[str, Any]:
    item: dict[str, Any] = {"type": kind, "id": f"{kind}_1", "status": "completed"}
    if kind == "function_call":
        item.update(call_id="call_1", name="lookup", arguments='{"q": 1}')
    elif kind == "mcp_approval_request":
        item.update(name="create_issue", arguments="{}", server_label="tracker")
    elif kind == "custom_tool_call":
        item.update(call_id="call_1", name="apply", input="*** Begin Patch")
    elif kind == "message":
        item.update(role="assistant", content=[{"type": "output_text", "text": "hi"}])
    elif kind == "reasoning":
        item.update(summary=[], encrypted_content="opaque")
    elif kind.endswith("_output"):
        item.update(call_id="call_0", output="done")
    return item


def responses_stream(*middle: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    frames = [{"type": "response.created", "response": {"id": "resp_1", "model": "m"}}]
    frames += middle
    frames.append(
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}
    )
    return [(f["type"], f) for f in frames]


@pytest.mark.parametrize("kind", sorted(RESPONSES_ITEMS))
def test_responses_output_items_land(kind: str) -> None:
    item = responses_item(kind)
    text = []
    if kind == "message":
        text = [
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": "hi",
            }
        ]
    events, result = decode(
        "openai-responses",
        responses_stream(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress"},
            },
            *text,
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
    )
    assert landed(events, result, kind, RESPONSES_ITEMS[kind]), events


@pytest.mark.parametrize("kind", sorted(RESPONSES_ITEMS))
def test_responses_output_items_land_in_a_whole_response(kind: str) -> None:
    from toolwire.stream.decoder import decode_response

    body = {"id": "resp_1", "model": "m", "status": "completed", "output": [responses_item(kind)]}
    result = decode_response("openai-responses", body)
    assert result.error is None
    place = RESPONSES_ITEMS[kind]
    choice = result.choices[0]
    if place == "text":
        assert choice.text == "hi"
    elif place == "call":
        assert choice.tool_calls
    elif place == "server":
        assert choice.server_tool_calls
    elif place.startswith("state:"):
        assert [i["type"] for i in choice.provider_state] == [place.removeprefix("state:")]
    else:
        assert place == "unknown"
        assert [(u.type, u.payload) for u in result.unknown_items] == [(kind, body["output"][0])]


@pytest.mark.parametrize(
    "kind", sorted(k for k, v in RESPONSES_EVENTS.items() if v in ("progress", "unknown"))
)
def test_responses_stream_events_land(kind: str) -> None:
    event = {"type": kind, "item_id": "x_1", "output_index": 0, "sequence_number": 2}
    events, _ = decode("openai-responses", responses_stream(event))
    unknown = [e for e in events if isinstance(e, UnknownItem)]
    if RESPONSES_EVENTS[kind] == "progress":
        assert not unknown
    else:
        assert [(e.type, e.payload) for e in unknown] == [(kind, event)]


# -- OpenAI Chat Completions ------------------------------------------------------------------


def chat_call(kind: str) -> dict[str, Any]:
    if kind == "custom":
        return {"id": "call_1", "type": "custom", "custom": {"name": "patch", "input": "*** x"}}
    return {"id": "call_1", "type": kind, kind: {"name": "lookup", "arguments": "{}"}}


@pytest.mark.parametrize("kind", sorted(CHAT_TOOL_CALLS))
def test_chat_tool_calls_land(kind: str) -> None:
    call = {"index": 0, **chat_call(kind)}
    chunks = [
        {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    events, result = decode("openai-chat", [(None, c) for c in chunks])
    assert landed(events, result, kind, CHAT_TOOL_CALLS[kind]), events


_FIELD_VALUES: dict[str, Any] = {
    "content": "hi",
    "refusal": "no",
    "tool_calls": [chat_call("function")],
    "function_call": {"name": "lookup", "arguments": "{}"},
    "annotations": [{"type": "url_citation", "url_citation": {"url": "https://example.com"}}],
    "audio": {"id": "audio_1", "data": "UklGRg==", "transcript": "hi"},
}


@pytest.mark.parametrize("field", sorted(set(CHAT_MESSAGE_FIELDS) - {"role"}))
@pytest.mark.parametrize("streamed", [True, False], ids=["delta", "message"])
def test_chat_message_fields_land(field: str, streamed: bool) -> None:
    from toolwire.stream.decoder import decode_response

    value = _FIELD_VALUES[field]
    if streamed:
        if field == "tool_calls":
            value = [{"index": 0, **value[0]}]
        delta = {"role": "assistant", field: value}
        chunks = [
            {"id": "c", "choices": [{"index": 0, "delta": delta}]},
            {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        events, result = decode("openai-chat", [(None, c) for c in chunks])
        assert landed(events, result, field, CHAT_MESSAGE_FIELDS[field]), events
        return
    message = {"role": "assistant", field: value}
    body = {"id": "c", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    result = decode_response("openai-chat", body)
    place = CHAT_MESSAGE_FIELDS[field]
    if place == "text":
        assert result.choices[0].text == value
    elif place == "call":
        assert result.tool_calls
    else:  # a whole response's unknown fields are parts that become UnknownItem events
        parts = OpenAIChatCodec().decode_response(body)
        assert [p.type for p in parts if isinstance(p, UnknownPart)] == [field]


# -- Anthropic Messages ---------------------------------------------------------------------


def anthropic_stream(
    block: dict[str, Any], *deltas: dict[str, Any]
) -> list[tuple[str | None, dict[str, Any]]]:
    frames: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        *({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    return [(f["type"], f) for f in frames]


def anthropic_block(kind: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": kind}
    if kind == "text":
        block["text"] = "hi"
    elif kind == "thinking":
        block.update(thinking="hm", signature="c2ln")
    elif kind == "redacted_thinking":
        block["data"] = "opaque"
    elif kind.endswith("tool_use"):
        block.update(id="toolu_1", name="lookup", input={})
    else:
        block.update(tool_use_id="srvtoolu_1", content={"type": f"{kind}_content"})
    return block


@pytest.mark.parametrize("kind", sorted(ANTHROPIC_BLOCKS))
def test_anthropic_blocks_land(kind: str) -> None:
    events, result = decode("anthropic-messages", anthropic_stream(anthropic_block(kind)))
    assert landed(events, result, kind, ANTHROPIC_BLOCKS[kind]), events


_DELTA_BLOCKS = {
    "text_delta": ({"type": "text", "text": ""}, {"text": "hi"}),
    "input_json_delta": (
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        {"partial_json": '{"a": 1}'},
    ),
    "thinking_delta": ({"type": "thinking", "thinking": "", "signature": ""}, {"thinking": "hm"}),
    "signature_delta": ({"type": "thinking", "thinking": "", "signature": ""}, {"signature": "s"}),
    "citations_delta": (
        {"type": "text", "text": ""},
        {"citation": {"type": "char_location", "cited_text": "x"}},
    ),
    "compaction_delta": ({"type": "compaction", "content": ""}, {"content": "summary"}),
}


@pytest.mark.parametrize("kind", sorted(ANTHROPIC_DELTAS))
def test_anthropic_deltas_land(kind: str) -> None:
    block, fields = _DELTA_BLOCKS[kind]
    events, result = decode("anthropic-messages", anthropic_stream(block, {"type": kind, **fields}))
    assert landed(events, result, kind, ANTHROPIC_DELTAS[kind]), events


# -- Gemini ---------------------------------------------------------------------------------


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def gemini_part(field: str) -> dict[str, Any]:
    if field == "text":
        return {"text": "hi"}
    if field == "thought":
        return {"text": "hm", "thought": True}
    if field == "thought_signature":
        return {"thoughtSignature": "c2ln"}
    if field == "function_call":
        return {"functionCall": {"name": "lookup", "args": {}}}
    return {camel(field): {"value": 1}}


@pytest.mark.parametrize("field", sorted(GEMINI_PARTS))
def test_gemini_parts_land(field: str) -> None:
    chunk = {
        "candidates": [
            {
                "index": 0,
                "content": {"role": "model", "parts": [gemini_part(field)]},
                "finishReason": "STOP",
            }
        ]
    }
    events, result = decode("gemini", [(None, chunk)])
    kind = camel(field) if GEMINI_PARTS[field] == "unknown" else field
    assert landed(events, result, kind, GEMINI_PARTS[field]), events


# -- message-level and candidate-level fields ---------------------------------------------

_FIELD_VALUE: dict[str, Any] = {
    "context_management": {"applied_edits": [{"type": "clear_tool_uses_20250919"}]},
    "stop_details": {"type": "refusal", "category": "cyber"},
    "diagnostics": {"cache_miss_reason": {"type": "prefix_changed"}},
    "input_transformations": [{"type": "thinking_dropped", "index": 0}],
    "stop_sequence": "END",
}


def _anthropic_field_stream(
    where: str, field: str, value: Any
) -> list[tuple[str | None, dict[str, Any]]]:
    message: dict[str, Any] = {"id": "msg_1", "model": "m", "content": []}
    end: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}
    if where == "message":
        message[field] = value
    elif where == "message_delta":
        end[field] = value
    else:
        end["delta"][field] = value
    frames = [{"type": "message_start", "message": message}, end, {"type": "message_stop"}]
    return [(f["type"], f) for f in frames]


@pytest.mark.parametrize(
    ("where", "field"),
    [
        (where, f)
        for where, table in (
            ("message", ANTHROPIC_MESSAGE_FIELDS),
            ("message_delta", ANTHROPIC_MESSAGE_DELTA_FIELDS),
            ("delta", ANTHROPIC_DELTA_FIELDS),
        )
        for f, p in table.items()
        if p == "unknown"
    ],
)
def test_anthropic_message_fields_land(where: str, field: str) -> None:
    value = _FIELD_VALUE[field]
    events, _ = decode("anthropic-messages", _anthropic_field_stream(where, field, value))
    unknown = [(e.type, e.payload) for e in events if isinstance(e, UnknownItem)]
    assert unknown == [(field, {field: value})]


def test_anthropic_whole_message_fields_land() -> None:
    from toolwire.stream.codecs.anthropic import AnthropicCodec

    body = {"id": "msg_1", "model": "m", "content": [], "stop_reason": "refusal"}
    body["stop_details"] = _FIELD_VALUE["stop_details"]
    parts = AnthropicCodec().decode_response(body)
    assert [p.type for p in parts if isinstance(p, UnknownPart)] == []
    (finish,) = [p for p in parts if isinstance(p, FinishPart)]
    assert finish.refusal is not None and finish.refusal.category == "cyber"


@pytest.mark.parametrize("field", sorted(ANTHROPIC_USAGE_FIELDS))
def test_anthropic_usage_fields_land(field: str) -> None:
    frames = _anthropic_field_stream("message_delta", "usage", {"output_tokens": 3, field: 7})
    _, result = decode("anthropic-messages", frames)
    assert result.usage is not None and result.usage.raw[field] == 7


@pytest.mark.parametrize(
    ("where", "field"),
    [
        *(("candidate", f) for f, p in GEMINI_CANDIDATE_FIELDS.items() if p == "unknown"),
        *(("response", f) for f, p in GEMINI_RESPONSE_FIELDS.items() if p == "unknown"),
    ],
)
def test_gemini_fields_land(where: str, field: str) -> None:
    value = {"webSearchQueries": ["q"]} if field != "create_time" else "2026-01-01T00:00:00Z"
    candidate: dict[str, Any] = {
        "index": 0,
        "content": {"role": "model", "parts": [{"text": "hi"}]},
        "finishReason": "STOP",
    }
    chunk: dict[str, Any] = {"candidates": [candidate]}
    (candidate if where == "candidate" else chunk)[camel(field)] = value
    events, result = decode("gemini", [(None, chunk)])
    unknown = [(e.type, e.payload) for e in events if isinstance(e, UnknownItem)]
    assert unknown == [(camel(field), {camel(field): value})]
    assert result.choices[0].text == "hi"


def test_inspect_shows_unknown_items(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from toolwire.cli import main

    frames = responses_stream(
        {"type": "response.audio.delta", "delta": "UklGRg==", "sequence_number": 2}
    )
    path = tmp_path / "audio.sse"
    path.write_text("".join(f"event: {e}\ndata: {json.dumps(p)}\n\n" for e, p in frames))
    out = CliRunner().invoke(main, ["inspect", "--dialect", "openai-responses", str(path)])
    assert out.exit_code == 0, out.output
    assert "unknown item response.audio.delta" in out.output
