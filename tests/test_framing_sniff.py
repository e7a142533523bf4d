"""The framing package's face: one interface, the sniffing reader, text that
is not UTF-8, and the old ``toolwire.sse`` import path."""

from __future__ import annotations

import sys

import pytest

import toolwire
from toolwire.errors import RemoteProtocolError
from toolwire.stream.framing import (
    END_OF_BODY,
    FrameReader,
    JSONArrayDecoder,
    NDJSONDecoder,
    SniffingReader,
    SSEDecoder,
    reader_for,
)

ALL = frozenset({"sse", "ndjson", "json-array"})


def frames(reader: FrameReader, *pieces: bytes) -> list[tuple[str, str]]:
    out = []
    for piece in pieces:
        out += reader.feed_pairs(piece)
    return out + reader.close_pairs()


@pytest.mark.parametrize(
    ("body", "kind", "expected"),
    [
        (b'data: {"a": 1}\n\n', "sse", [("message", '{"a": 1}')]),
        (b'{"a": 1}\n{"b": 2}\n', "ndjson", [("message", '{"a": 1}'), ("message", '{"b": 2}')]),
        (b'[{"a": 1}]', "json-array", [("message", '{"a": 1}'), END_OF_BODY]),
        (b"\r\n \n\t[1,2]", "json-array", [("message", "1"), ("message", "2"), END_OF_BODY]),
        (b"\xef\xbb\xbf\n\ndata: x\n\n", "sse", [("message", "x")]),
    ],
)
def test_the_first_significant_byte_tells_the_framing(
    body: bytes, kind: str, expected: list[tuple[str, str]]
) -> None:
    for split in (len(body), 1):
        reader = SniffingReader(ALL)
        pieces = [body[i : i + split] for i in range(0, len(body), split)]
        assert frames(reader, *pieces) == expected
        assert reader.kind == kind


def test_a_framing_not_allowed_falls_back_to_sse() -> None:
    reader = SniffingReader(frozenset({"sse", "json-array"}))
    assert frames(reader, b'{"a": 1}\n\n') == []  # an SSE line named '{"a"': ignored
    assert reader.kind == "sse"


def test_a_leading_space_on_the_first_line_is_kept_for_sse() -> None:
    # " data: x" is a field named " data": the standard ignores it.
    assert frames(SniffingReader(ALL), b"\n \n data: x\n\ndata: y\n\n") == [("message", "y")]


def test_a_body_of_whitespace_gives_nothing() -> None:
    reader = SniffingReader(ALL)
    assert frames(reader, b" \n\r\n\t ") == []
    assert reader.kind is None


def test_reader_for_names_each_framing() -> None:
    assert isinstance(reader_for("sse"), SSEDecoder)
    assert isinstance(reader_for("ndjson"), NDJSONDecoder)
    assert isinstance(reader_for("json-array"), JSONArrayDecoder)


@pytest.mark.parametrize(
    ("reader", "body"),
    [
        (SSEDecoder(errors="surrogateescape"), b"data: a\xffb\n\n"),
        (NDJSONDecoder(errors="surrogateescape"), b'"a\xffb"\n'),
        (JSONArrayDecoder(errors="surrogateescape"), b'["a\xffb"]'),
    ],
)
def test_bytes_that_are_not_utf8_can_be_kept_exactly(reader: FrameReader, body: bytes) -> None:
    (first, *_) = frames(reader, body)
    assert "\udcff" in first[1]
    assert reader.undecodable


def test_sse_replaces_or_refuses_as_asked() -> None:
    assert SSEDecoder().feed(b"data: a\xffb\n\n")[0].data == "a\ufffdb"
    with pytest.raises(RemoteProtocolError, match="not valid UTF-8"):
        SSEDecoder(errors="strict").feed(b"data: a\xffb\n\n")


def test_a_json_array_element_past_the_depth_limit_is_refused() -> None:
    with pytest.raises(RemoteProtocolError, match="deeper than 256"):
        JSONArrayDecoder().feed(b"[" + b"[" * 300)


def test_the_old_import_path_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "toolwire.sse", raising=False)  # imported afresh
    monkeypatch.delattr(toolwire, "sse", raising=False)
    with pytest.warns(DeprecationWarning, match=r"toolwire\.sse is now toolwire\.stream\.framing"):
        from toolwire import sse

    assert sse.SSEDecoder is SSEDecoder and sse.NDJSONDecoder is NDJSONDecoder
