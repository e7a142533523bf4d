"""Bad input gets a typed error and loses nothing; prefixes never yield calls
that the whole stream would not.

Fuzzed with random bytes and mutated corpus traces; every recorded trace is
cut at byte offsets throughout, and the calls a prefix hands on as ready
must be exactly calls of the whole stream.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests.conftest import TRACES, Trace
from toolwire import DIALECTS, StreamDecoder, StreamResult, StreamTruncated, ToolwireError
from toolwire.events import StreamFailed, ToolCallReady


def run(body: bytes, dialect: str, pieces: list[int] | None = None) -> StreamResult:
    """Decode; only toolwire's own errors may escape (none do by design)."""
    decoder = StreamDecoder(dialect)
    start = 0
    for cut in [*sorted(pieces or []), len(body)]:
        decoder.feed(body[start:cut])
        start = cut
    decoder.close()
    return decoder.result()


def full_calls(trace: Trace) -> list[tuple[str, str]]:
    result = run(trace.body, trace.decoder_api)
    return [(c.name, c.raw_arguments) for c in result.choices[0].tool_calls]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=400), dialect=st.sampled_from(["auto", *DIALECTS]))
def test_random_bytes_never_raise(body: bytes, dialect: str) -> None:
    result = run(body, dialect)
    assert result.error is None or isinstance(result.error, ToolwireError)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Trace, bytes]:
    trace = draw(st.sampled_from(TRACES))
    body = bytearray(trace.body)
    for _ in range(draw(st.integers(1, 6))):
        if not body:
            break
        pos = draw(st.integers(0, len(body) - 1))
        action = draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
        if action == "flip":
            body[pos] ^= draw(st.integers(1, 255))
        elif action == "delete":
            del body[pos : pos + draw(st.integers(1, 20))]
        elif action == "insert":
            body[pos:pos] = draw(
                st.sampled_from([b"{", b"}", b'"', b"\\", b"\n\n", b"data: ", b"\xff"])
            )
        else:
            del body[pos:]
    return trace, bytes(body)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated(), auto=st.booleans())
def test_mutated_traces_never_raise_and_never_invent_calls(
    case: tuple[Trace, bytes], auto: bool
) -> None:
    trace, body = case
    result = run(body, "auto" if auto else trace.decoder_api)
    assert result.error is None or isinstance(result.error, ToolwireError)
    for choice in result.choices:
        for call in choice.tool_calls:
            assert isinstance(call.arguments, dict)
            assert call.name


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_every_cut_yields_only_true_calls(trace: Trace) -> None:
    """Cut at many offsets: ready calls are always calls of the whole stream,
    and a cut before the end marker is reported as truncated."""
    expected = full_calls(trace)
    n = len(trace.body)
    step = max(1, n // 150)
    offsets = sorted({*range(0, n, step), n - 1, n - 2})
    for cut in offsets:
        decoder = StreamDecoder(trace.decoder_api)
        events = decoder.feed(trace.body[:cut]) + decoder.close()
        result = decoder.result()
        got = [(c.name, c.raw_arguments) for c in result.choices[0].tool_calls]
        assert got == expected[: len(got)], f"cut at {cut}: a call that is not in the stream"
        ready = [e for e in events if isinstance(e, ToolCallReady)]
        assert len(ready) == len(got)
        if result.error is None:
            assert result.complete
        else:
            assert isinstance(events[-1], StreamFailed)
            if "error" not in trace.expected and result.choices[0].incomplete_tool_calls:
                assert isinstance(result.error, StreamTruncated)


def test_feed_after_close_is_a_usage_error() -> None:
    decoder = StreamDecoder("openai-chat")
    decoder.close()
    with pytest.raises(ToolwireError):
        decoder.feed(b"data: [DONE]\n\n")


def test_unknown_dialect_is_a_usage_error() -> None:
    with pytest.raises(ToolwireError, match="unknown dialect"):
        StreamDecoder("openai-chats")
    with (
        pytest.warns(DeprecationWarning, match="api is now dialect"),
        pytest.raises(ToolwireError, match="disagree"),
    ):
        StreamDecoder("gemini", api="openai-chat")


def test_the_former_keyword_api_is_still_accepted_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="StreamDecoder: api is now dialect"):
        decoder = StreamDecoder(api="openai-chat")
    assert decoder.dialect == "openai-chat"
    decoder.close()
    with pytest.warns(DeprecationWarning, match="StreamResult: api is now dialect"):
        assert decoder.result().api == decoder.result().dialect == "openai-chat"


@pytest.mark.slow
def test_the_core_imports_no_io_library() -> None:
    code = (
        "import sys\n"
        "import toolwire, toolwire.stream.decoder, toolwire.stream.accumulate\n"
        "import toolwire.stream.framing\n"
        "import toolwire.stream.codecs, toolwire.stream._jsonstream, toolwire.stream._repair\n"
        "bad = [m for m in ('httpx', 'anyio', 'asyncio', 'socket', 'trio', 'starlette',"
        " 'uvicorn', 'ssl', 'pydantic') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "", f"the sans-I/O core imported {proc.stdout.strip()}"
