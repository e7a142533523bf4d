"""NDJSONDecoder and JSONArrayDecoder: line and element framing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from toolwire.errors import RemoteProtocolError, StreamTruncated, UsageError
from toolwire.stream.framing import JSONArrayDecoder, NDJSONDecoder, SSEDecoder


def ndjson(*pieces: bytes) -> list[str]:
    decoder = NDJSONDecoder()
    out: list[str] = []
    for piece in pieces:
        out += decoder.feed(piece)
    return out + decoder.close()


def array(*pieces: bytes) -> list[str]:
    decoder = JSONArrayDecoder()
    out: list[str] = []
    for piece in pieces:
        out += decoder.feed(piece)
    assert decoder.finished
    return out + decoder.close()


# --- NDJSON ----------------------------------------------------------------


def test_ndjson_lf_lines() -> None:
    assert ndjson(b'{"a":1}\n{"b":2}\n') == ['{"a":1}', '{"b":2}']


def test_ndjson_crlf_lines() -> None:
    assert ndjson(b'{"a":1}\r\n{"b":2}\r\n') == ['{"a":1}', '{"b":2}']


def test_ndjson_crlf_split_between_feeds() -> None:
    assert ndjson(b'{"a":1}\r', b'\n{"b":2}\r', b"\n") == ['{"a":1}', '{"b":2}']


def test_ndjson_blank_lines_are_skipped_and_lines_stripped() -> None:
    assert ndjson(b'\n\n  {"a":1} \t\n\r\n   \n{"b":2}\n\n') == ['{"a":1}', '{"b":2}']


def test_ndjson_final_line_without_newline_comes_from_close() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a":1}\n{"b"') == ['{"a":1}']
    assert decoder.feed(b":2}") == []
    assert decoder.close() == ['{"b":2}']
    assert decoder.close() == []


def test_ndjson_text_is_not_parsed() -> None:
    assert ndjson(b"not json\n") == ["not json"]


def test_ndjson_utf8_split_at_every_offset() -> None:
    body = '{"city":"東京 😀"}\n{"é":1}\n'.encode()
    for i in range(len(body) + 1):
        assert ndjson(body[:i], body[i:]) == ['{"city":"東京 😀"}', '{"é":1}'], i


def test_ndjson_invalid_utf8_is_a_protocol_error() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a":1}\n{"b":"\xff"}\n') == ['{"a":1}']
    with pytest.raises(RemoteProtocolError, match="not valid UTF-8") as info:
        decoder.close()
    assert info.value.raw is not None and "\ufffd" in info.value.raw


def test_ndjson_invalid_utf8_in_final_line() -> None:
    decoder = NDJSONDecoder()
    decoder.feed(b'{"b":"\xc3')
    with pytest.raises(RemoteProtocolError, match="not valid UTF-8"):
        decoder.close()


def test_ndjson_line_over_limit() -> None:
    decoder = NDJSONDecoder(max_line_bytes=50)
    decoder.feed(b"x" * 30)
    with pytest.raises(RemoteProtocolError, match="max_line_bytes=50"):
        decoder.feed(b"x" * 30)
    with pytest.raises(RemoteProtocolError, match="max_line_bytes=50"):
        decoder.feed(b"\n")


def test_ndjson_long_line_in_one_feed_keeps_earlier_lines() -> None:
    decoder = NDJSONDecoder(max_line_bytes=50)
    assert decoder.feed(b"ok\n" + b"x" * 60 + b"\n") == ["ok"]
    with pytest.raises(RemoteProtocolError):
        decoder.close()


def test_ndjson_unterminated_tail_over_limit_after_complete_lines() -> None:
    decoder = NDJSONDecoder(max_line_bytes=50)
    assert decoder.feed(b"ok\n" + b"x" * 60) == ["ok"]
    with pytest.raises(RemoteProtocolError, match="max_line_bytes"):
        decoder.feed(b"\n")


def test_ndjson_feed_after_close() -> None:
    decoder = NDJSONDecoder()
    decoder.close()
    with pytest.raises(UsageError):
        decoder.feed(b"{}\n")


# --- JSON array ------------------------------------------------------------


def is_finished(decoder: JSONArrayDecoder) -> bool:
    # A call, so that the type checker does not narrow ``finished`` across feeds.
    return decoder.finished


GEMINI_LIKE = (
    b'[{\n  "candidates": [{"content": {"parts": [{"text": "a"}]}}]\n}\n,\r\n'
    b'{\n  "candidates": [{"content": {"parts": [{"functionCall": {"name": "f", '
    b'"args": {"q": "}]\\"["}}}]}}]\n}\n]'
)


def test_array_gemini_shape() -> None:
    elements = array(GEMINI_LIKE)
    assert len(elements) == 2
    assert json.loads(elements[1])["candidates"][0]["content"]["parts"][0]["functionCall"] == {
        "name": "f",
        "args": {"q": '}]"['},
    }
    # Exactly the received text, surrounding whitespace aside.
    assert elements[0] == '{\n  "candidates": [{"content": {"parts": [{"text": "a"}]}}]\n}'


def test_array_element_returned_as_soon_as_it_closes() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.feed(b'[{"a": 1}') == ['{"a": 1}']
    assert decoder.feed(b',\n{"b"') == []
    assert decoder.feed(b": 2}") == ['{"b": 2}']
    assert not decoder.finished
    assert decoder.feed(b"\n]\n") == []
    assert decoder.close() == []
    assert is_finished(decoder)


def test_array_every_split_point() -> None:
    expected = array(GEMINI_LIKE)
    for i in range(len(GEMINI_LIKE) + 1):
        assert array(GEMINI_LIKE[:i], GEMINI_LIKE[i:]) == expected, i


def test_array_one_byte_at_a_time() -> None:
    pieces = [GEMINI_LIKE[i : i + 1] for i in range(len(GEMINI_LIKE))]
    assert array(*pieces) == array(GEMINI_LIKE)


def test_array_braces_and_brackets_inside_strings() -> None:
    assert array(b'[{"a": "{[}]"}, {"b": "]"}]') == ['{"a": "{[}]"}', '{"b": "]"}']


def test_array_escaped_quote_and_backslashes() -> None:
    body = rb'[{"a": "x\"}"}, {"b": "\\"}, {"c": "\\\"]"}]'
    assert [json.loads(e) for e in array(body)] == [{"a": 'x"}'}, {"b": "\\"}, {"c": '\\"]'}]


def test_array_backslash_split_across_feeds() -> None:
    body = rb'[{"a": "\"}\\"}]'
    for i in range(len(body) + 1):
        assert array(body[:i], body[i:]) == [rb'{"a": "\"}\\"}'.decode()], i


def test_array_any_json_value_types() -> None:
    body = b'[ 1 , -2.5e3,"s]\\"", true,false ,null, [1, [2]], {}, [] ]'
    assert array(body) == [
        "1",
        "-2.5e3",
        '"s]\\""',
        "true",
        "false",
        "null",
        "[1, [2]]",
        "{}",
        "[]",
    ]


def test_array_scalar_split_across_feeds() -> None:
    assert array(b"[12", b"34", b"5]") == ["12345"]
    assert array(b"[12", b"]") == ["12"]


def test_array_empty() -> None:
    assert array(b"[]") == []
    assert array(b" \r\n[ \n ] \r\n") == []


def test_array_utf8_split_at_every_offset() -> None:
    body = '[{"t": "東京 😀"}, "é"]'.encode()
    for i in range(len(body) + 1):
        assert array(body[:i], body[i:]) == ['{"t": "東京 😀"}', '"é"'], i


def test_array_leading_whitespace_then_bracket() -> None:
    assert array(b"\n\n  ", b"  [1]") == ["1"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"a": 1}', "does not start with"),
        (b"data: [1]", "does not start with"),
        (b"[1 2]", "expected ',' or ']'"),
        (b'[{"a":1} x {"b":2}]', "expected ',' or ']'"),
        (b"[1,,2]", "expected a JSON value"),
        (b"[1,]", "expected a JSON value"),
        (b"[,1]", "expected a JSON value"),
        (b"[}", "expected a JSON value"),
        (b"[1] x", "after the closing"),
        (b"[1]]", "after the closing"),
        (b"[1][2]", "after the closing"),
        (b'[{"a": [1}]', "closes a bracket it did not open"),
        (b'[{"a": "\xff"}]', "not valid UTF-8"),
    ],
)
def test_array_malformed_framing(body: bytes, message: str) -> None:
    with pytest.raises(RemoteProtocolError, match=message) as info:
        decoder = JSONArrayDecoder()
        decoder.feed(body)
        decoder.close()
    assert info.value.raw
    assert not isinstance(info.value, StreamTruncated)


def test_array_elements_before_garbage_are_returned_then_error_sticks() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.feed(b'[{"a":1}, {"b":2} garbage') == ['{"a":1}', '{"b":2}']
    with pytest.raises(RemoteProtocolError, match="expected ','"):
        decoder.feed(b"]")
    with pytest.raises(RemoteProtocolError, match="expected ','"):
        decoder.close()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "before its opening"),
        (b"  \n", "before its opening"),
        (b"[", "before its closing"),
        (b'[{"a":1},', "before its closing"),
        (b'[{"a":1}', "before its closing"),
        (b'[{"a":', "inside an element"),
        (b'["abc', "inside an element"),
        (b"[12", "inside an element"),
    ],
)
def test_array_close_before_the_end_is_truncation(body: bytes, message: str) -> None:
    decoder = JSONArrayDecoder()
    decoder.feed(body)
    with pytest.raises(StreamTruncated, match=message):
        decoder.close()
    assert not decoder.finished


def test_array_element_over_limit() -> None:
    decoder = JSONArrayDecoder(max_element_bytes=50)
    assert decoder.feed(b'[{"a": 1}, {"b": "') == ['{"a": 1}']
    with pytest.raises(RemoteProtocolError, match="max_element_bytes=50"):
        decoder.feed(b"x" * 60)


def test_array_element_over_limit_in_one_feed() -> None:
    decoder = JSONArrayDecoder(max_element_bytes=50)
    body = b'[{"a": 1}, "' + b"x" * 60 + b'"]'
    assert decoder.feed(body) == ['{"a": 1}']
    with pytest.raises(RemoteProtocolError, match="max_element_bytes"):
        decoder.close()


def test_array_feed_after_close() -> None:
    decoder = JSONArrayDecoder()
    decoder.feed(b"[]")
    assert decoder.close() == []
    assert decoder.close() == []
    with pytest.raises(UsageError):
        decoder.feed(b" ")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)
whitespace = st.text(alphabet=" \t\r\n", max_size=3)


@st.composite
def streamed_arrays(draw: st.DrawFn) -> tuple[list[Any], bytes, list[int]]:
    values = draw(st.lists(json_values, max_size=5))
    parts = [draw(whitespace), "["]
    for k, value in enumerate(values):
        if k:
            parts += [draw(whitespace), ","]
        indent = draw(st.sampled_from([None, 2]))
        ascii_only = draw(st.booleans())
        parts += [draw(whitespace), json.dumps(value, indent=indent, ensure_ascii=ascii_only)]
    parts += [draw(whitespace), "]", draw(whitespace)]
    body = "".join(parts).encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    return values, body, cuts


@settings(max_examples=examples(100), deadline=None)
@given(streamed_arrays())
def test_array_any_values_any_split(case: tuple[list[Any], bytes, list[int]]) -> None:
    values, body, cuts = case
    pieces = [body[i:j] for i, j in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    elements = array(*pieces)
    assert [json.loads(e) for e in elements] == values
    assert all(e == e.strip() for e in elements)


# --- cost stays linear in the input -----------------------------------------
# A 2 MB frame in 64-byte pieces is ~33,000 feeds: a few tens of milliseconds
# when the pending tail is kept as pieces, minutes if each feed re-copied it.

BIG = 2 * 1024 * 1024


def pieces_of(body: bytes, size: int = 64) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.mark.timeout(5)
def test_long_sse_event_in_small_pieces_is_linear() -> None:
    decoder = SSEDecoder()
    events = []
    for piece in pieces_of(b"data: " + b"x" * BIG + b"\n\n"):
        events += decoder.feed(piece)
    assert [len(e.data) for e in events] == [BIG]


@pytest.mark.timeout(5)
def test_long_ndjson_line_in_small_pieces_is_linear() -> None:
    decoder = NDJSONDecoder()
    lines = []
    for piece in pieces_of(b'"' + b"x" * BIG + b'"\n'):
        lines += decoder.feed(piece)
    assert [len(line) for line in lines] == [BIG + 2]


@pytest.mark.slow
@pytest.mark.timeout(5)
def test_long_array_element_in_small_pieces_is_linear() -> None:
    decoder = JSONArrayDecoder()
    content = b'\\"{[' * (BIG // 4)
    elements = []
    for piece in pieces_of(b'[{"content": "' + content + b'"}]'):
        elements += decoder.feed(piece)
    assert [len(e) for e in elements] == [len(content) + 15]
    assert decoder.finished
