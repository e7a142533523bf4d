"""``runs show`` and ``runs list`` print model text, tool output and names as
text: a terminal escape sequence in them is shown escaped, never sent to the
terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.agent.test_agent_http import agent_for, collect
from toolwire import tool
from toolwire.cli import main as cli_main
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

CLEAR = "\x1b[2J\x1b]0;pwned\x07"


@tool(read_only=True)
def shout() -> str:
    """Shout."""
    return f"tool says {CLEAR}"


async def test_escapes_from_model_text_and_tools_are_shown_escaped(tmp_path: Path) -> None:
    scenario = Scenario.from_dict(
        {
            "name": "escapes",
            "turns": [
                {"tool_calls": [{"name": "shout", "arguments": {}}]},
                {"text": f"answer {CLEAR} done"},
            ],
        }
    )
    path = tmp_path / "j.sqlite3"
    with EmulationServer(scenario) as server:
        agent = agent_for(server, "openai-chat", [shout], journal=SQLiteJournal(path))
        _, result = await collect(agent, f"question {CLEAR}")
    assert CLEAR in (result.output or "")
    for args in (["runs", "show", result.run_id], ["runs", "list"]):
        shown = CliRunner().invoke(cli_main, [*args, "--journal", str(path)])
        assert shown.exit_code == 0, shown.output
        assert "\x1b" not in shown.output and "\x07" not in shown.output
    shown = CliRunner().invoke(cli_main, ["runs", "show", result.run_id, "--journal", str(path)])
    assert "answer \\x1b[2J\\x1b]0;pwned\\x07 done" in shown.output
    assert "tool says \\x1b[2J" in shown.output
