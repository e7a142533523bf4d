"""EventStreamDecoder: AWS event-stream framing, on AWS's published vectors and
on messages of our own, split every way, with every bit flipped."""

from __future__ import annotations

import json
import uuid
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import RemoteProtocolError, StreamErrorEvent, StreamTruncated, UsageError
from toolwire.stream.framing import EventStreamDecoder, EventStreamMessage, SniffingReader
from toolwire.stream.framing.eventstream import (
    HeaderValue,
    encode_message,
    event_message,
    exception_message,
)

VECTORS: dict[str, dict[str, str]] = json.loads(
    (Path(__file__).parent / "fixtures" / "eventstream" / "vectors.json").read_text()
)["vectors"]
POSITIVE = sorted(k for k, v in VECTORS.items() if v["expectation"] == "success")
NEGATIVE = sorted(k for k, v in VECTORS.items() if v["expectation"] == "failure")
PAYLOAD = b"{'foo':'bar'}"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

# What AWS's fixture says each positive vector decodes to.
DECODED: dict[str, tuple[dict[str, HeaderValue], bytes]] = {
    "all_headers": (
        {
            "event-type": 40972,
            "content-type": "application/json",
            "bool false": False,
            "bool true": True,
            "byte": -49,
            "byte buf": b"I'm a little teapot!",
            "timestamp": EPOCH + timedelta(milliseconds=8675309),
            "int16": 42,
            "int64": 42424242,
            "uuid": uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10"),
        },
        PAYLOAD,
    ),
    "empty_message": ({}, b""),
    "int32_header": ({"event-type": 40972}, PAYLOAD),
    "payload_no_headers": ({}, PAYLOAD),
    "payload_one_str_header": ({"content-type": "application/json"}, PAYLOAD),
}


def vector(name: str) -> bytes:
    return bytes.fromhex(VECTORS[name]["hex"])


def read(pieces: list[bytes], **kwargs: Any) -> list[EventStreamMessage]:
    decoder = EventStreamDecoder(**kwargs)
    out: list[EventStreamMessage] = []
    for piece in pieces:
        out += decoder.feed(piece)
    return out + decoder.close()


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def test_the_vectors_are_the_published_nine() -> None:
    assert (len(POSITIVE), len(NEGATIVE)) == (5, 4)
    assert set(DECODED) == set(POSITIVE)


@pytest.mark.parametrize("name", POSITIVE)
def test_positive_vectors_decode_whole_and_bytewise(name: str) -> None:
    headers, payload = DECODED[name]
    for pieces in ([vector(name)], bytewise(vector(name))):
        (message,) = read(pieces)
        assert dict(message.headers) == headers
        assert [type(v) for v in message.headers.values()] == [type(v) for v in headers.values()]
        assert message.payload == payload


@pytest.mark.parametrize("name", NEGATIVE)
def test_negative_vectors_are_refused_whole_and_bytewise(name: str) -> None:
    for pieces in ([vector(name)], bytewise(vector(name))):
        with pytest.raises(RemoteProtocolError, match="CRC32") as info:
            read(pieces)
        assert not isinstance(info.value, StreamTruncated)


def test_every_flipped_bit_is_a_crc_error_never_a_message() -> None:
    body = vector("int32_header") + vector("payload_one_str_header")
    for bit in range(len(body) * 8):
        flipped = bytearray(body)
        flipped[bit // 8] ^= 1 << (bit % 8)
        decoder = EventStreamDecoder()
        with pytest.raises(RemoteProtocolError, match="CRC32"):
            messages = decoder.feed(bytes(flipped))
            # A flip in the second message: the first is still given, intact.
            assert [m.payload for m in messages] == [PAYLOAD]
            decoder.feed(b"")
            decoder.close()


def _messages() -> st.SearchStrategy[list[tuple[dict[str, HeaderValue], bytes]]]:
    value = st.one_of(
        st.booleans(),
        st.integers(-(2**63), 2**63 - 1),
        st.binary(max_size=40),
        st.text(max_size=40),
        st.integers(-(2**40), 2**40).map(lambda ms: EPOCH + timedelta(milliseconds=ms)),
        st.uuids(),
    )
    name = st.text(min_size=1, max_size=20).filter(lambda s: len(s.encode()) < 256)
    headers = st.dictionaries(name, value, max_size=6)
    return st.lists(st.tuples(headers, st.binary(max_size=200)), max_size=5)


@settings(max_examples=80, deadline=None)
@given(messages=_messages(), data=st.data())
def test_any_messages_split_anywhere_round_trip(
    messages: list[tuple[dict[str, HeaderValue], bytes]], data: st.DataObject
) -> None:
    body = b"".join(encode_message(h, p) for h, p in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=30)))
    pieces = [body[i:j] for i, j in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    decoded = read(pieces)
    assert [(dict(m.headers), m.payload) for m in decoded] == messages


def test_events_become_frames_and_exceptions_typed_errors() -> None:
    body = (
        event_message("contentBlockDelta", b'{"a":1}')
        + event_message("messageStop", b"{}")
        + exception_message("throttlingException", b'{"message":"Too many requests"}')
    )
    decoder = EventStreamDecoder()
    frames = decoder.feed_pairs(body)
    assert frames == [("contentBlockDelta", '{"a":1}'), ("messageStop", "{}")]
    with pytest.raises(StreamErrorEvent) as info:
        decoder.feed_pairs(b"")
    assert info.value.code == "throttlingException"
    assert info.value.error_type == "exception"
    assert "Too many requests" in info.value.message
    with pytest.raises(StreamErrorEvent):
        decoder.close_pairs()


def test_error_messages_carry_their_code() -> None:
    body = encode_message(
        {":message-type": "error", ":error-code": "InternalError", ":error-message": "boom"}, b""
    )
    with pytest.raises(StreamErrorEvent, match="InternalError: boom") as info:
        EventStreamDecoder().feed_pairs(body)
    assert info.value.code == "InternalError"


def test_a_message_past_the_limit_is_refused_from_its_prelude() -> None:
    big = event_message("chunk", b"x" * 5000)
    decoder = EventStreamDecoder(max_message_bytes=4096)
    with pytest.raises(RemoteProtocolError, match="out of bounds"):
        decoder.feed(big[:12])  # refused before its bytes are buffered


def test_headers_longer_than_the_message_are_refused() -> None:
    body = bytearray(event_message("chunk", b"{}"))
    body[4:8] = (len(body)).to_bytes(4, "big")
    body[8:12] = zlib.crc32(bytes(body[:8])).to_bytes(4, "big")
    with pytest.raises(RemoteProtocolError, match="headers length"):
        EventStreamDecoder().feed(bytes(body))


def test_a_header_running_past_its_block_is_refused() -> None:
    headers = b"\x05hello\x07\x00\x09abc"  # a string of 9 bytes, 3 present
    body = (16 + len(headers)).to_bytes(4, "big") + len(headers).to_bytes(4, "big")
    body += zlib.crc32(body).to_bytes(4, "big") + headers
    body += zlib.crc32(body).to_bytes(4, "big")
    with pytest.raises(RemoteProtocolError, match="header cannot be read"):
        EventStreamDecoder().feed(body)


def test_a_cut_body_is_truncated_and_the_messages_before_it_kept() -> None:
    body = event_message("messageStart", b"{}") + event_message("messageStop", b"{}")
    decoder = EventStreamDecoder()
    assert [m.header(":event-type") for m in decoder.feed(body[:-3])] == ["messageStart"]
    with pytest.raises(StreamTruncated, match="inside a message"):
        decoder.close()
    with pytest.raises(StreamTruncated):
        decoder.feed(b"abc")


def test_feed_after_close_is_a_usage_error() -> None:
    decoder = EventStreamDecoder()
    assert decoder.close() == []
    with pytest.raises(UsageError):
        decoder.feed(vector("empty_message"))


def test_payloads_that_are_not_utf8() -> None:
    body = event_message("chunk", b'{"a":"\xff"}')
    with pytest.raises(RemoteProtocolError, match="not valid UTF-8"):
        EventStreamDecoder().feed_pairs(body)
    decoder = EventStreamDecoder(errors="surrogateescape")
    assert decoder.feed_pairs(body) == [("chunk", '{"a":"\udcff"}')]
    assert decoder.undecodable


def test_the_sniffer_knows_an_event_stream_by_its_first_byte() -> None:
    reader = SniffingReader(frozenset({"sse", "eventstream"}))
    body = event_message("messageStart", b'{"role":"assistant"}')
    frames = [f for i in range(len(body)) for f in reader.feed_pairs(body[i : i + 1])]
    assert reader.kind == "eventstream"
    assert frames == [("messageStart", '{"role":"assistant"}')]


def test_botocore_reads_what_we_read() -> None:
    """botocore's own parser, on the vectors and on messages we encode."""
    eventstream = pytest.importorskip("botocore.eventstream")
    bodies = [vector(n) for n in POSITIVE]
    bodies.append(event_message("contentBlockDelta", b'{"delta":{"text":"hi"}}'))
    for body in bodies:
        buffer = eventstream.EventStreamBuffer()
        buffer.add_data(body)
        (theirs,) = list(buffer)
        (ours,) = read([body])
        assert theirs.payload == ours.payload
        assert set(theirs.headers) == set(ours.headers)
        for name, value in ours.headers.items():
            if isinstance(value, datetime):
                expected: Any = (value - EPOCH) // timedelta(milliseconds=1)
            elif isinstance(value, uuid.UUID):
                expected = value.bytes
            else:
                expected = value
            assert theirs.headers[name] == expected
    for name in NEGATIVE:
        buffer = eventstream.EventStreamBuffer()
        buffer.add_data(vector(name))
        with pytest.raises(eventstream.ParserError):
            list(buffer)
