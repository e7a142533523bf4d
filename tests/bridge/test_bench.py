"""The bridge benchmark's arithmetic, answer checks and report (no timing here)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_bridge  # noqa: E402

META = {
    "command": "c",
    "machine": "m",
    "python": "3",
    "versions": "v",
    "load_before": "1",
    "load_after": "1",
}


def _times(first: list[float]) -> dict[str, list[float]]:
    return {"first_byte": first, "first_delta": [t + 1 for t in first]}


def _measured() -> dict[str, Any]:
    return {
        "chunks": 100,
        "requests": 10,
        "times": {
            "straight": _times([1.0, 5.0, 1.0, 1.0]),
            "toolwire bridge": _times([2.0, 9.0, 2.5, 2.0]),  # round 2's spike hits both
            "litellm proxy": _times([11.0, 15.0, 13.0, 12.0]),
        },
        "cpu": {
            "toolwire bridge": {"per_chunk_us": 20.0, "per_request_ms": 2.0},
            "litellm proxy": {"per_chunk_us": 150.0, "per_request_ms": 15.0},
        },
    }


def test_the_added_times_are_medians_of_paired_differences_and_the_ratios_follow() -> None:
    result = bench_bridge.summary(_measured())
    assert result["rounds"] == 4
    assert result["toolwire bridge"]["first_byte_added_ms"] == 1.25
    assert result["toolwire bridge"]["first_delta_added_ms"] == 1.25
    assert result["litellm proxy"]["first_byte_added_ms"] == 10.5
    assert result["straight"]["first_byte_median_ms"] == 1.0
    assert result["cpu_ratio"] == 7.5
    assert result["added_ratio"] == 10.5 / 1.25
    text = bench_bridge.render(result, META)
    assert "| litellm proxy | 150.0 µs (7.5× the bridge) | 15.00 ms | +10.50 ms |" in text
    assert "Headline: litellm's proxy spends 7.5× the bridge's CPU per streamed chunk" in text


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def _messages_answer(stop: str) -> bytes:
    arguments = json.dumps({"a": 1})
    return _sse(
        [
            {"type": "message_start"},
            {
                "type": "content_block_start",
                "content_block": {"type": "tool_use", "name": "Edit", "input": {}},
            },
            *(
                {
                    "type": "content_block_delta",
                    "delta": {"type": "input_json_delta", "partial_json": part},
                }
                for part in (arguments[:3], arguments[3:])
            ),
            {"type": "message_delta", "delta": {"stop_reason": stop}},
        ]
    )


def test_a_relayed_call_is_reassembled_and_a_lost_one_is_refused() -> None:
    assert bench_bridge.messages_call(_messages_answer("tool_use")) == ("Edit", {"a": 1})
    with pytest.raises(RuntimeError, match="ended 'end_turn'"):
        bench_bridge.messages_call(_messages_answer("end_turn"))


def test_the_upstream_answer_gives_its_call_and_its_chunk_count() -> None:
    def chunk(**function: str) -> dict[str, Any]:
        return {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": function}]}}]}

    body = (
        _sse([chunk(name="Edit", arguments='{"a"'), chunk(arguments=": 1}")]) + b"data: [DONE]\n\n"
    )
    assert bench_bridge.chat_call(body) == ("Edit", {"a": 1}, 2)


def test_a_process_cpu_time_is_read_and_grows() -> None:
    before = bench_bridge.cpu_seconds(os.getpid())
    sum(i * i for i in range(3_000_000))  # far more than one clock tick of CPU
    assert bench_bridge.cpu_seconds(os.getpid()) > before


def test_the_section_is_replaced_between_its_own_markers(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    start, end = bench_bridge.README_START, bench_bridge.README_END
    page.write_text(f"a\n{start}\nold\n{end}\nb\n")
    bench_bridge.update_readme(page, "new", start, end)
    assert page.read_text() == f"a\n{start}\nnew\n{end}\nb\n"


def test_the_benchmarks_page_states_a_measured_figure() -> None:
    page = (BENCH.parent / "docs" / "benchmarks.md").read_text()
    section = page.split(bench_bridge.README_START)[1].split(bench_bridge.README_END)[0]
    assert "Headline: litellm's proxy spends" in section and "| toolwire bridge |" in section
