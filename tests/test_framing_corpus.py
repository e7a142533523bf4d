"""The framing decoders on the recorded conformance corpus, split every way, and fuzzed.

Each trace is read with the decoder its sidecar's ``api`` calls for:
``ollama-ndjson`` -> NDJSON, a ``gemini`` body starting with ``[`` -> JSON
array, anything else -> SSE.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from toolwire.errors import ToolwireError
from toolwire.stream.framing import JSONArrayDecoder, NDJSONDecoder, ServerSentEvent, SSEDecoder

CORPUS = Path(__file__).parent / "fixtures" / "conformance"

Decoder: TypeAlias = SSEDecoder | NDJSONDecoder | JSONArrayDecoder
Frame: TypeAlias = ServerSentEvent | str


@dataclass(frozen=True)
class Trace:
    name: str
    body: bytes
    sidecar: dict[str, Any]

    @property
    def reader(self) -> type[Decoder]:
        dialect = self.sidecar["api"]
        if dialect == "ollama-ndjson":
            return NDJSONDecoder
        if dialect == "gemini" and self.body.lstrip().startswith(b"["):
            return JSONArrayDecoder
        return SSEDecoder


def load_traces() -> list[Trace]:
    traces = []
    for path in sorted(CORPUS.glob("*/*.sse")):
        sidecar = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        traces.append(Trace(f"{path.parent.name}/{path.stem}", path.read_bytes(), sidecar))
    return traces


TRACES = load_traces()
READERS: list[type[Decoder]] = [SSEDecoder, NDJSONDecoder, JSONArrayDecoder]
TRACE_IDS = [t.name for t in TRACES]


def run(reader: type[Decoder], pieces: list[bytes]) -> tuple[list[Frame], str | None]:
    """Frames up to the first error, and that error as "Type: message" (None if none)."""
    decoder = reader()
    frames: list[Frame] = []
    try:
        for piece in pieces:
            frames += decoder.feed(piece)
        frames += decoder.close()
    except ToolwireError as exc:
        return frames, f"{type(exc).__name__}: {exc}"
    return frames, None


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    cuts = sorted(cuts)
    return [body[i:j] for i, j in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def test_corpus_is_present_and_uses_all_three_readers() -> None:
    assert len(TRACES) >= 40
    readers = {t.reader for t in TRACES}
    assert readers == set(READERS)


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACES, ids=TRACE_IDS)
def test_trace_whole_equals_one_byte_at_a_time(trace: Trace) -> None:
    whole, error = run(trace.reader, [trace.body])
    assert error is None
    assert whole or not trace.body, "every trace with a body has frames"
    bytewise = run(trace.reader, [trace.body[i : i + 1] for i in range(len(trace.body))])
    assert bytewise == (whole, None)


@pytest.mark.parametrize("trace", TRACES, ids=TRACE_IDS)
def test_sse_trace_frames_are_the_json_payloads(trace: Trace) -> None:
    frames, _ = run(trace.reader, [trace.body])
    for frame in frames:
        text = frame.data if isinstance(frame, ServerSentEvent) else frame
        if text != "[DONE]":
            json.loads(text)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_trace_random_splits_give_the_same_frames(data: st.DataObject) -> None:
    trace = data.draw(st.sampled_from(TRACES), label="trace")
    n = len(trace.body)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=40), label="cuts")
    assert run(trace.reader, split(trace.body, cuts)) == run(trace.reader, [trace.body])


@pytest.mark.parametrize(
    "name", ["gemini/json_array_nested_args_with_id", "gemini/json_array_thought_then_call"]
)
def test_gemini_json_array_elements_parse_and_hold_the_call(name: str) -> None:
    trace = next(t for t in TRACES if t.name == name)
    assert trace.reader is JSONArrayDecoder
    decoder = JSONArrayDecoder()
    elements = decoder.feed(trace.body)
    assert decoder.finished
    assert decoder.close() == []
    chunks = [json.loads(e) for e in elements]
    assert len(chunks) == 2
    calls = [
        {"name": part["functionCall"]["name"], "arguments": part["functionCall"].get("args", {})}
        for chunk in chunks
        for candidate in chunk["candidates"]
        for part in candidate["content"]["parts"]
        if "functionCall" in part
    ]
    expected = [
        {"name": c["name"], "arguments": c["arguments"]}
        for c in trace.sidecar["expected"]["tool_calls"]
    ]
    assert calls == expected


def test_ollama_ndjson_lines_hold_the_call() -> None:
    trace = next(t for t in TRACES if t.reader is NDJSONDecoder)
    lines = [json.loads(line) for line in run(NDJSONDecoder, [trace.body])[0]]  # type: ignore[arg-type]
    calls = [c["function"] for line in lines for c in line["message"].get("tool_calls", [])]
    assert calls == [
        {"name": c["name"], "arguments": c["arguments"]}
        for c in trace.sidecar["expected"]["tool_calls"]
    ]


# --- fuzz: only toolwire errors may escape ---------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(
    reader=st.sampled_from(READERS),
    body=st.binary(max_size=300),
    cuts=st.lists(st.integers(0, 300), max_size=6),
)
def test_random_bytes_raise_only_toolwire_errors(
    reader: type[Decoder], body: bytes, cuts: list[int]
) -> None:
    cuts = [c for c in cuts if c <= len(body)]
    # run() lets any non-toolwire exception escape and fail the test.
    assert run(reader, split(body, cuts)) == run(reader, [body])


def mutate(data: st.DataObject, body: bytes) -> bytes:
    draw = data.draw
    mutated = bytearray(body)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["insert", "delete", "flip"]))
        at = draw(st.integers(0, len(mutated)))
        if op == "insert":
            junk = draw(st.sampled_from([b"\r", b"\n", b"[", b"]", b"{", b"}", b'"', b"\\"]))
            junk = draw(st.one_of(st.just(junk), st.binary(min_size=1, max_size=4)))
            mutated[at:at] = junk
        elif op == "delete" and mutated:
            del mutated[at : at + draw(st.integers(1, 8))]
        elif mutated:
            mutated[min(at, len(mutated) - 1)] ^= 1 << draw(st.integers(0, 7))
    return bytes(mutated)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_traces_raise_only_toolwire_errors(data: st.DataObject) -> None:
    # Any trace into any reader: mostly rejected at once by the wrong reader.
    trace = data.draw(st.sampled_from(TRACES), label="trace")
    body = mutate(data, trace.body)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=10), label="cuts")
    for reader in READERS:
        # Same frames and same error whatever the split: errors sit at a fixed
        # point of the input, and frames before it are never lost.
        assert run(reader, split(body, cuts)) == run(reader, [body])


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_traces_of_each_reader(reader: type[Decoder], data: st.DataObject) -> None:
    # A trace of the reader's own format, damaged: deep into the decoder's states.
    own = [t for t in TRACES if t.reader is reader]
    trace = data.draw(st.sampled_from(own), label="trace")
    body = mutate(data, trace.body)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=10), label="cuts")
    assert run(reader, split(body, cuts)) == run(reader, [body])
