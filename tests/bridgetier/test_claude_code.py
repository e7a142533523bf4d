"""The real Claude Code (``claude -p``) on an OpenAI-compatible model
through ``toolwire bridge --serve anthropic-messages --upstream openai-chat``,
the emulation server playing the model: reasoning, then Claude Code's own
Read, then its Bash (the argument fragments streamed three characters at a
time), then the answer. The tools run for real (the file Bash writes is on
disk), their results reach the upstream as Chat Completions tool messages,
and the scripted answer, quoting the Bash output, is what ``claude`` prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.bridgetier._tier import Nowhere, agent, bridge, offline_env, run_agent
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

NOTE = "The launch code is kiwi-42.\n"
SHOUT = "tr a-z A-Z < notes.txt > shout.txt && ls"


def scenario(folder: Path) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "claude-code",
            "turns": [
                {
                    "reasoning": "The note first.",
                    "text": "Reading the note.",
                    "tool_calls": [
                        {"name": "Read", "arguments": {"file_path": str(folder / "notes.txt")}}
                    ],
                    "chunk_size": 3,
                },
                {
                    "text": "Now the shell.",
                    "tool_calls": [
                        {
                            "name": "Bash",
                            "arguments": {"command": SHOUT, "description": "Shout the note"},
                        }
                    ],
                    "chunk_size": 3,
                },
                {"text": "Shouted. The folder holds: {result:Bash}"},
            ],
        }
    )


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_claude_code_reads_runs_bash_and_answers_through_the_bridge(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text(NOTE, encoding="utf-8")
    journal_path = tmp_path / "bridge.sqlite3"
    home = tmp_path / "home"
    with Nowhere() as nowhere, EmulationServer(scenario(folder)) as upstream:
        options = [
            "--serve", "anthropic-messages", "--upstream", "openai-chat", "--model", "qwen3-coder",
            "--base-url", upstream.url_for("openai-chat"), "--journal", str(journal_path),
        ]  # fmt: skip
        with bridge(*options) as served:
            env = offline_env(
                home,
                nowhere,
                ANTHROPIC_BASE_URL=served.url,
                ANTHROPIC_API_KEY="sk-ant-not-a-real-key",
                CLAUDE_CONFIG_DIR=str(home / ".claude"),
                DISABLE_AUTOUPDATER="1",
                DISABLE_TELEMETRY="1",
                DISABLE_ERROR_REPORTING="1",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            )
            command = [
                agent("claude"), "-p", "Read notes.txt, then shout it into shout.txt.",
                "--allowedTools", "Read", "Bash", "--output-format", "json", "--max-turns", "5",
            ]  # fmt: skip
            done = run_agent(command, folder, env)
        requests = list(upstream.requests)

    assert done.returncode == 0, done.stderr + done.stdout + served.log
    assert nowhere.asked == []  # nothing left loopback
    report = json.loads(done.stdout)
    # The answer Claude Code prints: the scripted one, with the real ls output in it.
    assert report["is_error"] is False and report["num_turns"] == 3
    assert report["result"] == "Shouted. The folder holds: notes.txt\nshout.txt"
    # Bash ran: its file is on disk.
    assert (folder / "shout.txt").read_text(encoding="utf-8") == NOTE.upper()

    # The upstream saw Chat Completions requests: Claude Code's tools, its
    # system prompt (part of it sent inside `messages`), and each tool's result.
    assert len(requests) == 3 and {r["model"] for r in requests} == {"qwen3-coder"}
    first, second, third = requests
    # Claude Code's adaptive thinking asks for output_config.effort "medium".
    assert {r.get("reasoning_effort") for r in requests} == {"medium"}
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"Read", "Bash"} <= names
    systems = [m["content"] for m in first["messages"] if m["role"] == "system"]
    assert len(systems) >= 2 and any("Claude" in s for s in systems)
    [read] = tool_messages(second)
    assert "kiwi-42" in read and read.startswith("1\t")  # Read's numbered lines
    assert tool_messages(third) == [read, "notes.txt\nshout.txt"]
    calls = [c["function"] for m in third["messages"] for c in m.get("tool_calls") or []]
    assert [c["name"] for c in calls] == ["Read", "Bash"]
    assert json.loads(calls[1]["arguments"])["command"] == SHOUT

    # Each request is a run of the bridge's journal.
    journal = SQLiteJournal(journal_path)
    try:
        assert len(journal.list_runs()) == 3
    finally:
        journal.close()
