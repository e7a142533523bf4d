"""Members of a chunk, choice or whole response that toolwire
does not read (Azure's filter results, Groq's ``x_groq``, llama.cpp's
``timings``, OpenRouter's ``provider``, logprobs...) are ``UnknownItem``s: once
when first sent and again when their value changes, never per repeating
chunk; in the stream's events and in its result, streamed or whole."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolwire import StreamDecoder
from toolwire.events import Event, UnknownItem
from toolwire.stream.decoder import decode_response

HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chunk(choices: list[dict[str, Any]], **members: Any) -> dict[str, Any]:
    return {**HEAD, **members, "choices": choices}


def delta(value: dict[str, Any], finish: str | None = None, **members: Any) -> dict[str, Any]:
    return {"index": 0, "delta": value, "logprobs": None, "finish_reason": finish, **members}


def args(index: int, text: str) -> dict[str, Any]:
    return delta({"tool_calls": [{"index": index, "function": {"arguments": text}}]})


def body(chunks: list[dict[str, Any]]) -> bytes:
    text = "".join(
        f"data: {json.dumps(c, ensure_ascii=False, separators=(',', ':'))}\n\n" for c in chunks
    )
    return (text + "data: [DONE]\n\n").encode()


def decode(data: bytes, step: int | None = None, *, short_path: bool = True) -> Any:
    decoder = StreamDecoder("openai-chat", short_path=short_path)
    step = step or len(data)
    events: list[Event] = []
    for at in range(0, len(data), step):
        events += decoder.feed(data[at : at + step])
    events += decoder.close()
    result = decoder.result()
    assert result.error is None, result.error
    return events, result, decoder.short_path_deltas


def unknown(events: list[Event]) -> list[tuple[int, str, dict[str, Any]]]:
    return [(e.choice, e.type, e.payload) for e in events if isinstance(e, UnknownItem)]


FILTERS = [{"prompt_index": 0, "content_filter_results": {"hate": {"filtered": False}}}]
SAFE = {"hate": {"filtered": False, "severity": "safe"}}
STREAM = [
    chunk([], prompt_filter_results=FILTERS),  # Azure's first chunk
    chunk([delta({"role": "assistant", "content": "Hel"}, content_filter_results=SAFE)]),
    chunk([delta({"content": "lo"}, content_filter_results=SAFE)]),  # the same: not again
    chunk(
        [delta({}, "stop", content_filter_results={"hate": {"filtered": True}})],
        x_groq={"id": "req_1", "usage": {"queue_time": 0.1}},
    ),
    chunk([], usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}),
]


def test_unread_members_land_once_per_value_in_events_and_result() -> None:
    events, result, _ = decode(body(STREAM))

    assert unknown(events) == [
        (0, "prompt_filter_results", {"prompt_filter_results": FILTERS}),
        (0, "content_filter_results", {"content_filter_results": SAFE}),
        (0, "x_groq", {"x_groq": {"id": "req_1", "usage": {"queue_time": 0.1}}}),
        (0, "content_filter_results", {"content_filter_results": {"hate": {"filtered": True}}}),
    ]
    assert [(u.choice, u.type, u.payload) for u in result.unknown_items] == unknown(events)
    assert result.text == "Hello" and result.usage is not None
    assert json.loads(json.dumps(result.to_dict()))["unknown_items"][0]["type"] == (
        "prompt_filter_results"
    )


def test_logprobs_of_each_chunk_land() -> None:
    first = {"content": [{"token": "Hel", "logprob": -0.1}]}
    second = {"content": [{"token": "lo", "logprob": -0.2}]}
    stream = [
        chunk([{**delta({"content": "Hel"}), "logprobs": first}]),
        chunk([{**delta({"content": "lo"}, "stop"), "logprobs": second}]),
    ]
    events, _, _ = decode(body(stream))

    assert unknown(events) == [
        (0, "logprobs", {"logprobs": first}),
        (0, "logprobs", {"logprobs": second}),
    ]


def test_a_whole_response_hands_on_its_unread_members() -> None:
    response = {
        **HEAD,
        "object": "chat.completion",
        "choices": [
            {
                "index": 1,
                "message": {"role": "assistant", "content": "hi"},
                "finish_reason": "stop",
                "stop_reason": 128009,
            }
        ],
        "timings": {"prompt_n": 3},
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    result = decode_response("openai-chat", response)

    assert result.error is None
    assert [(u.choice, u.type, u.payload) for u in result.unknown_items] == [
        (0, "timings", {"timings": {"prompt_n": 3}}),
        (1, "stop_reason", {"stop_reason": 128009}),
    ]


def provider_stream(fragments: list[str]) -> bytes:
    start = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    chunks = [chunk([delta({"role": "assistant", "tool_calls": [start]})], provider="Novita")]
    chunks += [chunk([args(0, text)], provider="Novita") for text in fragments]
    chunks.append(
        chunk([delta({}, "tool_calls", native_finish_reason="tool_calls")], provider="Novita")
    )
    return body(chunks)


@given(
    st.lists(st.text(alphabet="ab c:1", min_size=1, max_size=5), min_size=3, max_size=12),
    st.integers(min_value=1, max_value=200),
)
def test_a_member_every_chunk_repeats_lands_once_on_either_path(
    fragments: list[str], step: int
) -> None:
    arguments = json.dumps({"q": "".join(fragments)})
    pieces = [arguments[i : i + 3] for i in range(0, len(arguments), 3)]
    data = provider_stream(pieces)

    short = decode(data, step)
    general = decode(data, step, short_path=False)

    expected = [
        (0, "provider", {"provider": "Novita"}),
        (0, "native_finish_reason", {"native_finish_reason": "tool_calls"}),
    ]
    assert unknown(short[0]) == unknown(general[0]) == expected
    assert repr(short[0]) == repr(general[0])
    assert short[1].tool_calls[0].arguments == json.loads(arguments)
    assert general[2] == 0
    # One read per chunk: the chunks after the first argument chunk are matched.
    by_chunk = StreamDecoder("openai-chat")
    events = [e for piece in data.split(b"\n\n") for e in by_chunk.feed(piece + b"\n\n")]
    events += by_chunk.close()
    assert by_chunk.short_path_deltas == len(pieces) - 1
    assert repr(events) == repr(general[0])


def test_a_gemini_field_every_chunk_repeats_lands_once_and_again_when_it_changes() -> None:
    def gemini_chunk(text: str, **fields: Any) -> str:
        candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
        return json.dumps({"candidates": [candidate], **fields})

    chunks = [
        gemini_chunk("Hel", createTime="2026-01-01T00:00:00Z"),
        gemini_chunk("lo", createTime="2026-01-01T00:00:00Z"),
        gemini_chunk("!", createTime="2026-01-01T00:00:01Z"),
    ]
    decoder = StreamDecoder("gemini")
    events = decoder.feed("".join(f"data: {c}\n\n" for c in chunks).encode()) + decoder.close()

    assert [p for _, _, p in unknown(events)] == [
        {"createTime": "2026-01-01T00:00:00Z"},
        {"createTime": "2026-01-01T00:00:01Z"},
    ]
    assert decoder.result().text == "Hello!"


def test_a_delta_holding_only_a_member_toolwire_does_not_read_lands() -> None:
    annotations = [{"type": "url_citation", "url_citation": {"url": "https://example.com"}}]
    stream = [
        chunk([delta({"role": "assistant", "content": "See"})]),
        chunk([delta({"annotations": annotations})]),
        chunk([delta({}, "stop")]),
    ]
    events, result, _ = decode(body(stream))

    assert unknown(events) == [(0, "annotations", {"annotations": annotations})]
    assert result.text == "See"


def test_ollama_members_it_does_not_read_land_once() -> None:
    def line(content: str, done: bool = False, **members: Any) -> str:
        message = {"role": "assistant", "content": content, **members}
        return json.dumps(
            {"model": "qwen3", "created_at": content, "message": message, "done": done}
        )

    lines = [
        line("Hel", logprobs=[{"token": "Hel"}]),
        line("lo", logprobs=[{"token": "lo"}]),
        line("", True),
    ]
    decoder = StreamDecoder("ollama-ndjson")
    events = decoder.feed("".join(f"{x}\n" for x in lines).encode()) + decoder.close()

    assert [p for _, _, p in unknown(events)] == [
        {"logprobs": [{"token": "Hel"}]},
        {"logprobs": [{"token": "lo"}]},
    ]
    assert decoder.result().text == "Hello"
