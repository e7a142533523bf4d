"""``toolwire inspect``: the human reading, and its exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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
    code, out = invoke("--dialect", "openai-chats", str(QWEN))
    assert code == 2 and "Traceback" not in out
    code, out = invoke("--chunk-size", "0", str(QWEN))
    assert code == 2


NOT_STREAMS = [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\xfd" * 8, "is binary"),
    (b"hello, just some text\n", "holds no stream payload"),
    (
        b'{"id":"msg_1","type":"message","role":"assistant","content":[]}',
        "is one JSON body (a non-streamed response?), not a stream",
    ),
]


@pytest.mark.parametrize(("body", "message"), NOT_STREAMS)
@pytest.mark.parametrize("as_json", [[], ["--json"]], ids=["human", "json"])
def test_an_input_that_is_no_stream_is_named(
    tmp_path: Path, body: bytes, message: str, as_json: list[str]
) -> None:
    path = tmp_path / "input.sse"
    path.write_bytes(body)
    code, out = invoke(*as_json, str(path))
    assert code == 2
    assert out.splitlines() == [out.rstrip("\n")] and out.startswith(f"Error: {path} {message}")
    assert "stream_truncated" not in out


@pytest.mark.parametrize("body", [b"", b" \n\n"])
def test_an_empty_input_is_a_stream_cut_before_its_first_byte(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "empty.sse"
    path.write_bytes(body)
    code, out = invoke(str(path))
    assert code == 1
    assert (
        out.splitlines()[1]
        == f"input: empty ({len(body)} bytes): a stream cut before its first byte"
    )


def test_a_non_streamed_body_it_can_read_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "completion.json"
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
        ],
    }
    path.write_text(json.dumps(body), encoding="utf-8")
    code, out = invoke(str(path))
    assert code == 0
    assert out.splitlines()[1] == "input: one JSON body (a non-streamed response), not a stream"


def test_a_server_tools_input_is_the_models_output() -> None:
    trace = CORPUS / "anthropic" / "server_tool_then_client_tool_use.sse"
    code, out = invoke(str(trace))
    assert code == 0
    lines = out.splitlines()
    model = [line for line in lines if " model " in line]
    assert any("server tool call name tool_search_tool_bm25 (server_tool_use)" in m for m in model)
    inputs = [line.split("+= ", 1)[1] for line in model if "server tool input +=" in line]
    assert (
        "".join(json.loads(part) for part in inputs)
        == '{"query": "USD EUR exchange rate currency conversion"}'
    )
    assert not any("server tool" in line and "(nothing from the model)" in line for line in lines)


def test_the_former_option_name_api_is_still_accepted_with_a_warning() -> None:
    result = CliRunner().invoke(main, ["inspect", "--api", "openai-chat", "--json", str(QWEN)])
    assert result.exit_code == 0 and json.loads(result.stdout)["dialect"] == "openai-chat"
    assert "--api is deprecated" in result.stderr and "use --dialect" in result.stderr
    both = ["inspect", "--api", "gemini", "--dialect", "openai-chat", "-"]
    clash = CliRunner().invoke(main, both)
    assert clash.exit_code == 2 and "disagree" in clash.stderr
