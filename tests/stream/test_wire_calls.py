"""The wire reader of ``toolwire conform`` agrees with the decoder on real streams.

On every recording of the corpus in a dialect it reads, the calls the wire
opened are the calls the decoder found (complete, invalid or cut), and no
argument text arrives under an index no call opened: real servers of the
corpus split no call. Constructed streams show what it keeps of each call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire.errors import UsageError
from toolwire.stream.codecs.wire_calls import READERS, read_wire, trailing_repeat
from toolwire.stream.decoder import StreamDecoder

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
RECORDINGS = [
    side
    for side in sorted(CORPUS.rglob("*.json"))
    if json.loads(side.read_text(encoding="utf-8")).get("api") in READERS
]


def test_the_corpus_has_recordings_of_each_dialect() -> None:
    dialects = {json.loads(side.read_text(encoding="utf-8"))["api"] for side in RECORDINGS}
    assert dialects == set(READERS) and len(RECORDINGS) > 100


@pytest.mark.parametrize("side", RECORDINGS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_the_wire_opens_the_calls_the_decoder_finds(side: Path) -> None:
    dialect = json.loads(side.read_text(encoding="utf-8"))["api"]
    decoder = StreamDecoder(dialect)
    body = side.with_suffix(".sse").read_bytes()
    frames = decoder.feed_frames(body) + decoder.close_frames()
    wire = read_wire(dialect, [(frame.event, frame.data) for frame in frames if frame.data])
    result = decoder.result()
    found = 0
    if result.choices:
        choice = result.choices[0]
        found = len(choice.tool_calls + choice.invalid_tool_calls) + len(
            choice.incomplete_tool_calls
        )
    assert sum(call.opened for call in wire.calls) == found
    assert [call.index for call in wire.calls if not call.opened and call.text] == []


def chat(*deltas: dict[str, object], finish: str | None = None) -> list[tuple[str, str]]:
    chunks = [{"choices": [{"index": 0, "delta": delta}]} for delta in deltas]
    if finish is not None:
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return [("message", json.dumps(chunk)) for chunk in chunks] + [("message", "[DONE]")]


def test_each_call_as_sent() -> None:
    opener = {"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x"'}}
    rest = {"index": 0, "function": {"arguments": ": 1}"}}
    stray = {"index": 1, "function": {"arguments": ', "y": 2}'}}
    whole = {"index": 2, "function": {"name": "g", "arguments": {"z": 3}}}
    wire = read_wire(
        "openai-chat",
        chat(
            {"tool_calls": [opener]},
            {"tool_calls": [rest, stray]},
            {"tool_calls": [whole]},
            finish="length",
        ),
    )
    first, second, third = wire.calls
    assert (first.id, first.name, first.opener_args, first.pieces) == ("a", "f", '{"x"', [": 1}"])
    assert (second.opened, second.text) == (False, ', "y": 2}')
    assert (third.id, third.as_value, third.opener_args) == (None, True, '{"z":3}')
    assert (wire.finish, wire.payloads) == ("length", 5)


def test_a_new_id_at_an_index_in_use_is_another_call() -> None:
    first = {"id": "a", "function": {"name": "f", "arguments": "{}"}}
    second = {"id": "b", "function": {"name": "g", "arguments": "{}"}}
    wire = read_wire("openai-chat", chat({"tool_calls": [first]}, {"tool_calls": [second]}))
    assert [(call.index, call.id) for call in wire.calls] == [("0", "a"), ("0", "b")]


@pytest.mark.parametrize(
    ("text", "repeated"),
    [
        ('{"a": 1}{"a": 1}', True),
        ('{"a": 1}\n {"a":1} ', True),
        ('{"a": 1}{"a": 2}', False),
        ('{"a": 1}', False),
        ("[1][1]", False),
        ('{"a": 1}{"a": 1}{"a": 1}', False),
        ('{"a": 1', False),
    ],
)
def test_a_trailing_repeat(text: str, repeated: bool) -> None:
    assert trailing_repeat(text) is repeated


def test_a_dialect_without_a_reader() -> None:
    with pytest.raises(UsageError, match="no wire reader for 'gemini'"):
        read_wire("gemini", [])
