"""``toolwire serve``: a real subprocess serving on loopback, and its refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from toolwire.cli import main

from ._wire import CONFORMANCE, sse_json

SECRET = "sk-test-must-never-be-printed"


@pytest.fixture
def serve_process(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[str], str]]:
    args = [sys.executable, "-m", "toolwire", "serve", "--port", "0", *request.param]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        assert process.stdout is not None
        # The first line is printed once uvicorn is serving: no polling needed.
        first = process.stdout.readline()
        assert "listening on http://127.0.0.1:" in first, first
        yield process, first.rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.parametrize("serve_process", [[]], indirect=True)
def test_serve_default_scenario_and_never_logs_keys(
    serve_process: tuple[subprocess.Popen[str], str],
) -> None:
    process, base_url = serve_process
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "天气?"}]}
    response = httpx.post(
        base_url + "/v1/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {SECRET}", "x-api-key": SECRET},
    )
    assert response.status_code == 200
    names = [
        call["function"]["name"]
        for _, chunk in sse_json(response.content)[:-1]
        for choice in chunk["choices"]
        for call in choice["delta"].get("tool_calls", [])
        if "id" in call
    ]
    assert names == ["get_weather", "get_current_time"]
    gemini = httpx.post(
        base_url + "/v1beta/models/g:generateContent",
        params={"key": SECRET},
        json={"contents": [{"role": "user", "parts": [{"text": "x"}]}]},
    )
    assert gemini.status_code == 200
    process.terminate()
    output, _ = process.communicate(timeout=10)
    assert "POST /v1/chat/completions 200 stream (turn 1, attempt 1)" in output
    assert "POST /v1beta/models/g:generateContent 200 json" in output
    assert SECRET not in output


@pytest.mark.parametrize(
    "serve_process",
    [["--replay", str(CONFORMANCE / "openai" / "chat_single_call_usage.sse")]],
    indirect=True,
)
def test_serve_replay(serve_process: tuple[subprocess.Popen[str], str]) -> None:
    _, base_url = serve_process
    response = httpx.post(base_url + "/v1/chat/completions", json={})
    assert response.content == (CONFORMANCE / "openai" / "chat_single_call_usage.sse").read_bytes()


def test_serve_refusals(tmp_path: Path) -> None:
    runner = CliRunner()
    remote = runner.invoke(main, ["serve", "--host", "0.0.0.0"])
    assert remote.exit_code == 2 and "--allow-remote" in remote.output
    both = runner.invoke(
        main, ["serve", "--scenario", "weather", "--replay", str(CONFORMANCE / "README.md")]
    )
    assert both.exit_code == 2 and "give one of --scenario, --replay and --cassette" in both.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"turns": [{"nope": 1}]}))
    invalid = runner.invoke(main, ["serve", "--scenario", str(bad)])
    assert invalid.exit_code == 1 and "invalid scenario" in invalid.output
    unknown = runner.invoke(main, ["serve", "--scenario", "no-such-scenario"])
    assert unknown.exit_code == 1 and "no-such-scenario" in unknown.output
    assert "built-in: quickstart, weather" in unknown.output
    recorded = runner.invoke(main, ["serve", "--scenario", str(CONFORMANCE / "README.md")])
    assert recorded.exit_code == 1 and "neither JSON nor YAML" in recorded.output
    body = runner.invoke(
        main, ["serve", "--scenario", str(CONFORMANCE / "openai" / "chat_single_call_usage.sse")]
    )
    assert body.exit_code == 1 and "--replay" in body.output


@pytest.mark.parametrize("port", ["99999", "-1", "65536", "http"])
def test_serve_refuses_a_port_out_of_range(port: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--port", port])
    assert result.exit_code == 2 and "Invalid value for '--port'" in result.output


@pytest.mark.parametrize(
    "serve_process", [["--scenario", "quickstart"]], indirect=True, ids=["quickstart"]
)
def test_serve_builtin_by_name(serve_process: tuple[subprocess.Popen[str], str]) -> None:
    _, base_url = serve_process
    body = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "?"}]}
    response = httpx.post(base_url + "/v1/chat/completions", json=body)
    assert response.status_code == 200
    [call] = response.json()["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"


YAML = "turns:\n  - text: 你好, from a YAML scenario\n"


@pytest.fixture
def yaml_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.txt"  # the content decides, not the name
    path.write_text(YAML, encoding="utf-8")
    return path


def test_serve_yaml_scenario(yaml_scenario: Path) -> None:
    args = [sys.executable, "-m", "toolwire", "serve", "--port", "0"]
    process = subprocess.Popen(
        [*args, "--scenario", str(yaml_scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert "(scenario) listening on" in first, first
        base_url = first.rsplit(" ", 1)[1].strip()
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        response = httpx.post(base_url + "/v1/chat/completions", json=body)
        assert response.json()["choices"][0]["message"]["content"] == "你好, from a YAML scenario"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
