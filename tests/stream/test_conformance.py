"""Every recorded trace gives its sidecar's expected result.

Through ``toolwire inspect --json`` (the CLI in-process, and once as a real
subprocess), fed whole and one byte at a time, and through the decoder at
random split points chosen by Hypothesis.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests.conftest import CORPUS, TRACES, Trace
from toolwire import StreamDecoder
from toolwire.cli import main

assert len(TRACES) == 152, "the conformance corpus is incomplete"


def check(trace: Trace, out: dict[str, Any]) -> None:
    """Compare an ``inspect --json`` object with the sidecar's expectations."""
    expected = trace.expected
    choice = out["choices"][0]
    got_calls = choice["tool_calls"]
    want_calls = expected.get("tool_calls", [])
    assert [c["name"] for c in got_calls] == [c["name"] for c in want_calls]
    assert [c["arguments"] for c in got_calls] == [c["arguments"] for c in want_calls]
    for got, exp in zip(got_calls, want_calls, strict=True):
        if exp["id"] is not None:
            assert got["id"] == exp["id"]
        else:
            assert got["id"], "a call without a provider id gets a minted one"
    ids = [c["id"] for c in got_calls]
    assert len(set(ids)) == len(ids), "ids are unique within a response"
    assert choice["text"] == expected["text"]
    assert choice["reasoning"] == expected.get("reasoning", expected.get("tool_plan", ""))
    servers = [
        {k: s[k] for k in ("id", "name", "type", "arguments")} for s in choice["server_tool_calls"]
    ]
    assert servers == expected.get("server_tool_calls", [])
    invalid = [{"id": c["id"], "name": c["name"]} for c in choice["invalid_tool_calls"]]
    assert invalid == expected.get("invalid_tool_calls", [])
    incomplete = [c["name"] for c in choice["incomplete_tool_calls"]]
    if "incomplete_tool_calls" in expected:
        assert incomplete == [c["name"] for c in expected["incomplete_tool_calls"]]
    else:
        assert incomplete == expected.get("incomplete_names", [])
    if expected.get("cut"):
        assert out["error"] is not None
        assert out["error"]["type"] == "stream_truncated"
    elif isinstance(expected.get("error"), str):
        # The second set names the provider's error code only.
        assert out["error"] is not None
        assert out["error"]["code"] == expected["error"]
    elif "error" in expected:
        want = expected["error"]
        assert out["error"] is not None
        assert out["error"]["message"] == want["message"]
        if isinstance(want["code"], int):
            # An integer code (OpenRouter's in-band error) is an HTTP status.
            assert out["error"]["status_code"] == want["code"]
        else:
            assert out["error"]["code"] == want["code"]
            assert out["error"]["status_code"] == want["status_code"]
    else:
        assert out["error"] is None


def _fails(trace: Trace) -> bool:
    return "error" in trace.expected or bool(trace.expected.get("cut"))


def run_inspect(trace: Trace, *args: str) -> tuple[int, dict[str, Any]]:
    path = CORPUS / f"{trace.name}.sse"
    result = CliRunner().invoke(main, ["inspect", "--json", *args, str(path)])
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, "--json prints exactly one JSON object"
    return result.exit_code, json.loads(lines[0])


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
@pytest.mark.parametrize("chunking", [[], ["--chunk-size", "1"]], ids=["whole", "bytewise"])
def test_inspect_json_gives_expected(trace: Trace, chunking: list[str]) -> None:
    code, out = run_inspect(trace, "--dialect", trace.decoder_api, *chunking)
    check(trace, out)
    assert out["dialect"] == trace.decoder_api
    assert code == (1 if _fails(trace) else 0)


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_auto_detects_the_dialect(trace: Trace) -> None:
    _, out = run_inspect(trace, "--chunk-size", "5")
    # An empty body (a server that failed after its headers) tells nothing.
    assert out["dialect"] == (trace.decoder_api if trace.body.strip() else "auto")
    check(trace, out)


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_random_splits_give_the_same_result(data: st.DataObject) -> None:
    trace = data.draw(st.sampled_from(TRACES), label="trace")
    n = len(trace.body)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=40), label="cuts"))
    decoder = StreamDecoder(trace.decoder_api)
    start = 0
    for cut in [*cuts, n]:
        decoder.feed(trace.body[start:cut])
        start = cut
    decoder.close()
    check(trace, decoder.result().to_dict())


@pytest.mark.slow
def test_inspect_runs_as_a_real_command() -> None:
    path = CORPUS / "openai" / "chat_parallel_2_mixed_args.sse"
    proc = subprocess.run(
        [sys.executable, "-m", "toolwire", "inspect", "--json", "--chunk-size", "3", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    names = [c["name"] for c in out["choices"][0]["tool_calls"]]
    assert names == ["get_weather", "get_product_name"]
