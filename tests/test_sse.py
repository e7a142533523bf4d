"""SSEDecoder: the WHATWG event-stream rules, one named test per rule or quirk."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from toolwire.errors import RemoteProtocolError, UsageError
from toolwire.stream.framing import ServerSentEvent, SSEDecoder


def decode(*pieces: bytes, close: bool = True) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    out: list[ServerSentEvent] = []
    for piece in pieces:
        out += decoder.feed(piece)
    if close:
        out += decoder.close()
    return out


def ev(
    data: str, event: str = "message", id: str | None = None, retry: int | None = None
) -> ServerSentEvent:
    return ServerSentEvent(event=event, data=data, id=id, retry=retry)


# --- line ends -------------------------------------------------------------


def test_lf_line_ends() -> None:
    assert decode(b"data: a\n\ndata: b\n\n", close=False) == [ev("a"), ev("b")]


def test_cr_line_ends() -> None:
    assert decode(b"data: a\r\rdata: b\r\r", close=False) == [ev("a"), ev("b")]


def test_crlf_line_ends() -> None:
    assert decode(b"data: a\r\n\r\ndata: b\r\n\r\n", close=False) == [ev("a"), ev("b")]


def test_mixed_line_ends_in_one_event() -> None:
    assert decode(b"data: a\rdata: b\ndata: c\r\n\n", close=False) == [ev("a\nb\nc")]


def test_crlf_split_across_feeds_is_one_line_end() -> None:
    # Were the LF a second line end, "a" would be dispatched alone.
    assert decode(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n", close=False) == [ev("a\nb")]


def test_cr_then_empty_feed_then_lf_is_one_line_end() -> None:
    assert decode(b"data: a\r", b"", b"\ndata: b\n\n", close=False) == [ev("a\nb")]


def test_cr_at_end_of_feed_is_a_line_end_by_itself() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\r") == [ev("a")]
    assert decoder.feed(b"data: b\n\n") == [ev("b")]


def test_cr_cr_lf_is_two_line_ends() -> None:
    assert decode(b"data: a\r", b"\r\n", close=False) == [ev("a")]


# --- byte order mark -------------------------------------------------------


def test_leading_bom_is_dropped() -> None:
    assert decode(b"\xef\xbb\xbfdata: a\n\n", close=False) == [ev("a")]


def test_leading_bom_split_across_feeds_is_dropped() -> None:
    assert decode(b"\xef", b"\xbb", b"\xbfdata: a\n\n", close=False) == [ev("a")]


def test_only_one_bom_is_dropped() -> None:
    # The second BOM becomes part of the field name "\ufeffdata": an unknown field.
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n") == []


def test_bom_later_in_the_stream_is_kept() -> None:
    assert decode(b"data: a\n\n\xef\xbb\xbfdata: b\n\ndata: \xef\xbb\xbfc\n\n") == [
        ev("a"),
        ev("\ufeffc"),
    ]


def test_bom_on_an_unterminated_only_line() -> None:
    assert decode(b"\xef\xbb\xbfdata: a") == [ev("a")]


# --- comments, fields ------------------------------------------------------


def test_comments_and_keep_alives_are_ignored() -> None:
    body = b": keep-alive\n:\ndata: a\n: in the middle\ndata: b\n\n:ping\n\n"
    assert decode(body) == [ev("a\nb")]


def test_data_with_and_without_space() -> None:
    assert decode(b"data: a\n\ndata:b\n\n") == [ev("a"), ev("b")]


def test_two_spaces_keep_one() -> None:
    assert decode(b"data:  a\n\n") == [ev(" a")]


def test_trailing_spaces_are_kept() -> None:
    assert decode(b"data: a  \n\n") == [ev("a  ")]


def test_multi_line_data_joined_with_lf() -> None:
    assert decode(b'data: {\ndata:   "k": 1\ndata: }\n\n') == [ev('{\n  "k": 1\n}')]


def test_empty_data_line_dispatches_an_empty_event() -> None:
    # A "data:" line adds "" + LF to the buffer, so the buffer is not empty.
    assert decode(b"data:\n\n") == [ev("")]
    assert decode(b"data\ndata\n\n") == [ev("\n")]


@pytest.mark.parametrize(
    "order", list(itertools.permutations([b"event: e", b"id: 7", b"retry: 30", b"data: d"]))
)
def test_event_id_retry_in_any_order(order: tuple[bytes, ...]) -> None:
    assert decode(b"\n".join(order) + b"\n\n") == [ev("d", event="e", id="7", retry=30)]


def test_data_before_event_bedrock() -> None:
    body = b'data: {"type":"response.created"}\nevent: response.created\n\n'
    assert decode(body) == [ev('{"type":"response.created"}', event="response.created")]


def test_field_without_colon_has_empty_value() -> None:
    assert decode(b"data\n\n") == [ev("")]
    # "event" with an empty value leaves the type "message".
    assert decode(b"event\ndata: x\n\n") == [ev("x")]


def test_colon_in_value_is_kept() -> None:
    assert decode(b'data: {"a": "b:c"}\n\n') == [ev('{"a": "b:c"}')]


def test_unknown_fields_are_ignored() -> None:
    assert decode(b"foo: bar\nDATA: no\ndata: yes\nEvent: no\n\n") == [ev("yes")]


def test_leading_space_before_field_name_makes_it_unknown() -> None:
    # OpenRouter trace: " data: ..." is the field " data", which is ignored.
    assert decode(b" data: ignored\n\ndata: kept\n\n") == [ev("kept")]


def test_event_type_applies_to_its_event_only() -> None:
    assert decode(b"event: a\ndata: 1\n\ndata: 2\n\n") == [ev("1", event="a"), ev("2")]


def test_done_is_just_data() -> None:
    assert decode(b'data: {"x":1}\n\ndata: [DONE]\n\n') == [ev('{"x":1}'), ev("[DONE]")]


def test_error_event_is_just_an_event() -> None:
    assert decode(b'event: error\ndata: {"error":{}}\n\n') == [ev('{"error":{}}', event="error")]


# --- dispatch --------------------------------------------------------------


def test_event_without_data_is_not_dispatched() -> None:
    # The standard's rule, kept: no trace in the corpus has a data-less event.
    assert decode(b"event: ping\n\n") == []
    assert decode(b"event: ping\n\ndata: x\n\n") == [ev("x")]


def test_blank_lines_alone_dispatch_nothing() -> None:
    assert decode(b"\n\n\r\n\r\r") == []


def test_last_event_without_trailing_blank_line_is_flushed_by_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"event: message_stop\ndata: {}\n") == []
    assert decoder.close() == [ev("{}", event="message_stop")]


def test_unterminated_last_line_is_processed_by_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\nevent: message_stop\ndata: {") == [ev("a")]
    assert decoder.close() == [ev("{", event="message_stop")]


def test_close_with_nothing_pending_returns_nothing() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\n") == [ev("a")]
    assert decoder.close() == []


def test_close_does_not_flush_an_event_without_data() -> None:
    assert decode(b"data: a\n\nevent: x\nid: 3") == [ev("a")]


def test_close_twice_and_feed_after_close() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a")
    assert decoder.close() == [ev("a")]
    assert decoder.close() == []
    with pytest.raises(UsageError):
        decoder.feed(b"data: b\n\n")


def test_empty_feed_returns_nothing() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"") == []
    assert decoder.feed(b"data: a\n\n") == [ev("a")]


# --- id and retry ----------------------------------------------------------


def test_id_persists_across_events() -> None:
    body = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n"
    assert decode(body) == [ev("a", id="1"), ev("b", id="1"), ev("c", id="2")]


def test_id_set_after_data_applies_to_that_event() -> None:
    assert decode(b"data: a\nid: 9\n\n") == [ev("a", id="9")]


def test_id_in_a_data_less_block_still_persists() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 5\n\ndata: a\n\n") == [ev("a", id="5")]
    assert decoder.last_event_id == "5"


def test_id_containing_nul_is_ignored() -> None:
    assert decode(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n") == [
        ev("a", id="1"),
        ev("b", id="1"),
    ]


def test_empty_id_resets_it() -> None:
    assert decode(b"id: 1\ndata: a\n\nid\ndata: b\n\n") == [ev("a", id="1"), ev("b")]


def test_retry_only_when_all_ascii_digits() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 1500\ndata: a\n\n") == [ev("a", retry=1500)]
    assert decoder.feed(b"retry: 15a\ndata: b\n\nretry: -1\ndata: c\n\n") == [ev("b"), ev("c")]
    assert decoder.feed(b"retry: \xd9\xa3\ndata: d\n\nretry:\ndata: e\n\n") == [ev("d"), ev("e")]
    assert decoder.retry == 1500


def test_retry_does_not_leak_into_the_next_event() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 10\ndata: a\n\ndata: b\n\n") == [ev("a", retry=10), ev("b")]
    assert decoder.retry == 10


def test_retry_with_absurdly_many_digits_is_ignored() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: " + b"9" * 10_000 + b"\ndata: a\n\n") == [ev("a")]
    assert decoder.retry is None


# --- text decoding ---------------------------------------------------------


def test_utf8_multibyte_split_at_every_byte_offset() -> None:
    body = "event: é\ndata: 中文 😀 Ünïcode\nid: ß\n\n".encode()
    expected = [ev("中文 😀 Ünïcode", event="é", id="ß")]
    for i in range(len(body) + 1):
        assert decode(body[:i], body[i:]) == expected, i
        for j in range(i, min(i + 5, len(body)) + 1):
            assert decode(body[:i], body[i:j], body[j:]) == expected, (i, j)


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert decode(b"data: a\xffb\xe2\x82\n\n") == [ev("a\ufffdb\ufffd")]


def test_invalid_utf8_at_end_of_line_does_not_swallow_the_line_end() -> None:
    assert decode(b"data: \xe2\x82", b"\ndata: b\n\n") == [ev("\ufffd\nb")]


# --- limits and errors -----------------------------------------------------


def test_long_line_fed_in_pieces_exceeds_limit() -> None:
    decoder = SSEDecoder(max_event_bytes=100)
    decoder.feed(b"data: " + b"x" * 60)
    with pytest.raises(RemoteProtocolError, match="max_event_bytes=100") as info:
        decoder.feed(b"x" * 60)
    assert info.value.raw is not None


def test_long_line_in_one_feed_exceeds_limit() -> None:
    with pytest.raises(RemoteProtocolError, match="max_event_bytes"):
        SSEDecoder(max_event_bytes=100).feed(b": " + b"x" * 200 + b"\n")


def test_event_data_over_many_lines_exceeds_limit() -> None:
    decoder = SSEDecoder(max_event_bytes=100)
    decoder.feed(b"data: " + b"x" * 40 + b"\n")
    decoder.feed(b"data: " + b"x" * 40 + b"\n")
    with pytest.raises(RemoteProtocolError, match="data exceeds"):
        decoder.feed(b"data: " + b"x" * 40 + b"\n")


def test_many_small_events_stay_under_limit() -> None:
    decoder = SSEDecoder(max_event_bytes=100)
    assert len(decoder.feed(b"data: " + b"x" * 50 + b"\n\n")) == 1
    assert len(decoder.feed((b"data: " + b"x" * 50 + b"\n\n") * 50)) == 50


def test_events_before_an_error_are_returned_then_the_error_sticks() -> None:
    decoder = SSEDecoder(max_event_bytes=100)
    assert decoder.feed(b"data: a\n\ndata: " + b"x" * 200 + b"\n\n") == [ev("a")]
    with pytest.raises(RemoteProtocolError, match="max_event_bytes"):
        decoder.feed(b"data: b\n\n")
    with pytest.raises(RemoteProtocolError, match="max_event_bytes"):
        decoder.close()


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_invalid_limit_is_a_usage_error(bad: object) -> None:
    with pytest.raises(UsageError):
        SSEDecoder(max_event_bytes=bad)  # type: ignore[arg-type]


# --- the decoder against a direct reading of the standard -------------------


def reference_decode(body: bytes) -> list[ServerSentEvent]:
    """The standard's algorithm, written plainly over the whole body.

    Same two documented choices as SSEDecoder: an empty ``id:`` gives None,
    and the end of input dispatches a pending event that has data.
    """
    text = body.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    events: list[ServerSentEvent] = []
    data = ""
    event_type = ""
    last_id = ""
    retry: int | None = None
    for line in [*re.split(r"\r\n|\r|\n", text), ""]:
        if line == "":
            if data:
                events.append(
                    ServerSentEvent(event_type or "message", data[:-1], last_id or None, retry)
                )
            data, event_type, retry = "", "", None
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data += value + "\n"
        elif name == "event":
            event_type = value
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return events


_SSE_ATOMS = [
    b"data",
    b"event",
    b"id",
    b"retry",
    b":",
    b" ",
    b"\r",
    b"\n",
    b"\r\n",
    b"12",
    b"x",
    b"\xc3\xa9",
    b"\xf0\x9f\x98\x80",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\x00",
    b"[DONE]",
]


@st.composite
def sse_bodies_and_splits(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    body = b"".join(draw(st.lists(st.sampled_from(_SSE_ATOMS), max_size=60)))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=8)))
    return body, cuts


@settings(max_examples=examples(200), deadline=None)
@given(sse_bodies_and_splits())
def test_decoder_matches_the_standard_on_any_split(case: tuple[bytes, list[int]]) -> None:
    body, cuts = case
    pieces = [body[i:j] for i, j in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert decode(*pieces) == reference_decode(body)


def test_unterminated_tail_over_limit_after_complete_events() -> None:
    decoder = SSEDecoder(max_event_bytes=100)
    assert decoder.feed(b"data: a\n\ndata: " + b"x" * 200) == [ev("a")]
    with pytest.raises(RemoteProtocolError, match="line exceeds"):
        decoder.close()


def test_close_can_push_event_data_over_limit() -> None:
    decoder = SSEDecoder(max_event_bytes=100)
    assert decoder.feed(b"data: " + b"x" * 60 + b"\ndata: " + b"y" * 50) == []
    with pytest.raises(RemoteProtocolError, match="data exceeds"):
        decoder.close()
