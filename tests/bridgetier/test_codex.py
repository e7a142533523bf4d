"""The real Codex CLI (``codex exec``) on an Anthropic model through
``toolwire bridge --serve openai-responses --upstream anthropic-messages``,
a custom model provider of ``$CODEX_HOME/config.toml`` on the Responses wire
(the only one Codex still speaks), the emulation server playing Claude:
thinking, then Codex's own shell tool (``exec_command``, its arguments
streamed three characters at a time), then the answer quoting the
command's output. The command runs for real, its output reaches the upstream
as an Anthropic ``tool_result``, and Codex's last message is the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.bridgetier._tier import Nowhere, agent, bridge, offline_env, run_agent
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

NOTE = "The launch code is kiwi-42.\n"
SHOUT = "tr a-z A-Z < notes.txt > shout.txt && cat shout.txt"

SCENARIO = Scenario.from_dict(
    {
        "name": "codex",
        "turns": [
            {
                "reasoning": "Shout the note, then show it.",
                "text": "On it.",
                "tool_calls": [{"name": "exec_command", "arguments": {"cmd": SHOUT}}],
                "chunk_size": 3,
            },
            {"text": "Done. {result:exec_command}"},
        ],
    }
)

CONFIG = """\
model = "claude-bridged"
model_provider = "toolwire"
check_for_update_on_startup = false

[model_providers.toolwire]
name = "toolwire bridge"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "TOOLWIRE_BRIDGE_KEY"

[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false

[analytics]
enabled = false
"""


def results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in request["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def test_codex_runs_a_shell_command_and_answers_through_the_bridge(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text(NOTE, encoding="utf-8")
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    journal_path = tmp_path / "bridge.sqlite3"
    last = tmp_path / "last-message.txt"
    options = ["--serve", "openai-responses", "--upstream", "anthropic-messages"]
    with Nowhere() as nowhere, EmulationServer(SCENARIO) as upstream:
        options += ["--model", "claude-sonnet-4-5", "--journal", str(journal_path)]
        with bridge(*options, "--base-url", upstream.url_for("anthropic-messages")) as served:
            config = CONFIG.replace("{url}", served.url)
            (codex_home / "config.toml").write_text(config, encoding="utf-8")
            env = offline_env(
                tmp_path / "home",
                nowhere,
                CODEX_HOME=str(codex_home),
                TOOLWIRE_BRIDGE_KEY="not-a-real-key",
            )
            command = [
                agent("codex"), "exec", "--skip-git-repo-check", "--ephemeral",
                "--color", "never", "--sandbox", "danger-full-access",
                "--output-last-message", str(last), "Shout notes.txt into shout.txt.",
            ]  # fmt: skip
            done = run_agent(command, folder, env)
        requests = list(upstream.requests)

    assert done.returncode == 0, done.stderr + done.stdout + served.log
    assert nowhere.asked == []  # nothing left loopback
    # The command ran: its file is on disk, and its output is in the answer.
    assert (folder / "shout.txt").read_text(encoding="utf-8") == NOTE.upper()
    answer = last.read_text(encoding="utf-8")
    assert answer.startswith("Done. ") and NOTE.upper() in answer

    # The upstream saw Anthropic requests: Codex's instructions as the
    # system prompt, its shell tool, and the command's output as a tool_result.
    assert len(requests) == 2 and {r["model"] for r in requests} == {"claude-sonnet-4-5"}
    first, second = requests
    assert "Codex" in first["system"]
    assert "exec_command" in {t["name"] for t in first["tools"]}
    assert results(first) == []
    [result] = results(second)
    assert result["is_error"] is False and NOTE.upper() in result["content"]
    [turn] = [m for m in second["messages"] if m["role"] == "assistant"]
    [call] = [b for b in turn["content"] if b["type"] == "tool_use"]
    assert call["id"] == result["tool_use_id"]
    assert (call["name"], call["input"]) == ("exec_command", {"cmd": SHOUT})

    journal = SQLiteJournal(journal_path)
    try:
        assert len(journal.list_runs()) == 2
    finally:
        journal.close()
