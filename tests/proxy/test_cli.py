"""``toolwire proxy`` and ``toolwire serve --cassette`` as real subprocesses,
and ``toolwire inspect`` reading a cassette."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from click.testing import CliRunner

from toolwire.cli import main

from ._clients import KEY, openai_chat
from ._support import Upstream, weather


@contextmanager
def _toolwire(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``toolwire ARGS`` running; yields the process and its first line."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        # Printed once uvicorn is serving: no polling needed.
        yield process, process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def test_proxy_prints_a_line_per_exchange_and_serve_replays_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette"
    with Upstream(weather()) as upstream:
        upstream_url = upstream.url_for("openai-chat")
        args = ["proxy", "--upstream", upstream_url, "--record", str(cassette), "--port", "0"]
        with _toolwire(*args) as (process, first):
            assert first.startswith("toolwire proxy listening on http://127.0.0.1:"), first
            assert first.strip().endswith(f"-> {upstream_url}")
            proxy_url = first.split()[4]
            assert process.stdout is not None
            assert process.stdout.readline().strip() == f"recording into {cassette}"
            proxied = openai_chat(proxy_url, True)
            lines = [process.stdout.readline() for _ in range(2)]
    assert lines[0].startswith("#1 POST /chat/completions 200 openai-chat gpt-4o stream | ")
    assert 'calls get_weather({"city": "杭州"}), get_current_time(' in lines[0]
    assert lines[1].startswith("#2 POST /chat/completions 200 openai-chat gpt-4o stream | ")
    assert '| text "杭州现在的天气' in lines[1]
    assert KEY not in "".join(lines)

    with _toolwire("serve", "--cassette", str(cassette), "--port", "0") as (process, first):
        assert ", 2 exchanges) listening on http://127.0.0.1:" in first, first
        assert process.stdout is not None
        # Each recorded dialect's base URL: the proxy was this client's base URL.
        assert process.stdout.readline().split() == ["openai-chat:", first.split()[-1]]
        replayed = openai_chat(first.split()[-1], True)
        missing = httpx.post(first.split()[-1] + "/chat/completions", json={"model": "other"})
        log = [process.stdout.readline() for _ in range(3)]
    assert replayed == proxied
    assert missing.status_code == 400 and "nearest is #1" in missing.json()["error"]["message"]
    assert [line.split()[-1] for line in log[:2]] == ["0001.json", "0002.json"]
    assert "no recorded exchange matches" in log[2]


def test_inspect_reads_a_cassette_and_its_sidecars(tmp_path: Path) -> None:
    with Upstream(weather()) as upstream:
        from toolwire.testing import RecordingProxy

        with RecordingProxy(upstream.url_for("openai-chat"), record=tmp_path) as proxy:
            openai_chat(proxy.base_url, True)
            openai_chat(proxy.base_url, False)
    runner = CliRunner()
    listing = runner.invoke(main, ["inspect", str(tmp_path)])
    assert listing.exit_code == 0, listing.output
    lines = listing.output.splitlines()
    assert [line.split()[0] for line in lines] == ["#1", "#2", "#3", "#4"]
    assert [line.split()[6] for line in lines] == ["stream", "stream", "whole", "whole"]
    assert all("get_weather(" in lines[i] for i in (0, 2))
    as_json = runner.invoke(main, ["inspect", "--json", str(tmp_path)])
    records = [json.loads(line) for line in as_json.output.splitlines()]
    assert [r["sidecar"] for r in records] == ["0001.json", "0002.json", "0003.json", "0004.json"]

    stream = runner.invoke(main, ["inspect", str(tmp_path / "0001.json")])
    assert stream.exit_code == 0, stream.output
    assert "dialect: openai-chat" in stream.output
    assert "tool call #0 get_weather id=call_" in stream.output
    same = runner.invoke(main, ["inspect", str(tmp_path / "0001.response.sse")])
    assert same.output == stream.output
    whole = runner.invoke(main, ["inspect", str(tmp_path / "0003.json")])
    assert whole.exit_code == 0 and whole.output == lines[2] + "\n"


def test_the_cli_refuses_what_it_should() -> None:
    runner = CliRunner()
    remote = runner.invoke(main, ["proxy", "--upstream", "http://x", "--host", "0.0.0.0"])
    assert remote.exit_code == 2 and "loopback" in remote.output
    bad = runner.invoke(main, ["proxy", "--upstream", "not a url", "--port", "0"])
    assert bad.exit_code == 1 and "http(s) URL" in bad.output
    alone = runner.invoke(main, ["serve", "--realtime"])
    assert alone.exit_code == 2 and "--cassette" in alone.output
