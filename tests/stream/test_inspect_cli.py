"""``toolwire inspect``: the human reading, and its exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import CORPUS
from toolwire.cli import main

QWEN = CORPUS / "qwen" / "dashscope_empty_id_and_trailing_empty_delta.sse"


def invoke(*args: str, input: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["inspect", *args], input=input)
    return result.exit_code, result.output


def test_model_output_is_told_apart_from_what_the_protocol_added() -> None:
    code, out = invoke(str(QWEN))
    assert code == 0
    lines = out.splitlines()
    model = [line for line in lines if " model " in line]
    protocol = [line for line in lines if " protocol " in line]
    assert any('arguments += "{\\"location\\": \\"San Francisco"' in line for line in model)
    assert any("finish_reason=tool_calls" in line for line in protocol)
    assert any("usage in=295 out=22 total=317" in line for line in protocol)
    assert any("end of stream marker" in line for line in protocol)
    assert not any("finish_reason" in line or "usage" in line for line in model)
    assert (
        'tool call #0 weather id=call_eee11723464a4b9eb8cee71d: {"location": "San Francisco"}'
        in out
    )


def test_stdin_and_chunk_size() -> None:
    code, out = invoke("--json", "--chunk-size", "2", "-", input=QWEN.read_bytes())
    assert code == 0
    assert json.loads(out)["choices"][0]["tool_calls"][0]["name"] == "weather"


def test_a_cut_stream_exits_1_and_still_prints_its_reading(tmp_path: Path) -> None:
    cut = tmp_path / "cut.sse"
    body = QWEN.read_bytes()
    end_of_payload = body.index(b"\n\n", body.index(b"San Francisco")) + 2
    cut.write_bytes(body[:end_of_payload])
    code, out = invoke("--json", str(cut))
    assert code == 1
    reading = json.loads(out)
    assert reading["error"]["type"] == "stream_truncated"
    (incomplete,) = reading["choices"][0]["incomplete_tool_calls"]
    assert (
        incomplete["name"] == "weather"
        and incomplete["raw_arguments"] == '{"location": "San Francisco'
    )
    assert reading["choices"][0]["tool_calls"] == []
    code, out = invoke(str(cut))
    assert code == 1 and "INCOMPLETE tool call weather" in out


def test_bad_usage_and_unreadable_files_exit_2_without_a_traceback(tmp_path: Path) -> None:
    code, out = invoke(str(tmp_path / "missing.sse"))
    assert code == 2 and "cannot read" in out and "Traceback" not in out
    code, out = invoke("--api", "openai-chats", str(QWEN))
    assert code == 2 and "Traceback" not in out
    code, out = invoke("--chunk-size", "0", str(QWEN))
    assert code == 2
