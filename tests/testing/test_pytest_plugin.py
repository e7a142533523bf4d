"""The pytest plugin as users get it: loading it costs nothing, and a user's
own test suite that uses the fixture writes nothing outside pytest's
temporary directory (a real pytest process, HOME pointed at an empty folder)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests._userland import run_pytest, user_env

USER_TEST = textwrap.dedent(
    """
    import toolwire
    from toolwire.providers import OpenAIChat
    from toolwire.testing import Scenario


    @toolwire.tool(read_only=True)
    def get_weather(city: str) -> dict:
        \"\"\"Current weather of a city.\"\"\"
        return {"city": city, "condition": "light rain"}


    def test_agent(toolwire_server):
        server = toolwire_server(Scenario.from_dict({"turns": [
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"text": "It is {result:get_weather.condition} in Paris."},
        ]}))
        agent = toolwire.Agent(OpenAIChat(base_url=server.url_for("openai-chat"), api_key="t"),
                               model="m", tools=[get_weather])
        result = agent.run_sync("Weather in Paris?")
        assert result.output == "It is light rain in Paris."
        # the fixture exposes the test's journal: the run is in it
        journal = toolwire.SQLiteJournal(toolwire_server.journal)
        assert [run.run_id for run in journal.list_runs()] == [result.run_id]
        journal.close()


    def test_journal_alone(toolwire_journal):
        import os
        assert os.environ["TOOLWIRE_JOURNAL"] == str(toolwire_journal)
        assert not toolwire_journal.exists()
    """
)


def test_loading_the_plugin_imports_no_server_code() -> None:
    code = (
        "import json, sys, toolwire.testing.pytest_plugin; print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    modules = json.loads(out)
    loaded = {m for m in modules if m.split(".")[0] in ("starlette", "uvicorn", "pydantic")}
    assert not loaded
    toolwire = [m for m in modules if m.startswith(("toolwire.testing.", "toolwire.agent"))]
    assert toolwire == ["toolwire.testing.pytest_plugin"]


def test_a_users_suite_writes_nothing_in_home(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    test_file = project / "test_agent.py"
    test_file.write_text(USER_TEST, encoding="utf-8")
    proc = run_pytest(test_file, env=user_env(home), basetemp=tmp_path / "pytest")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert list(home.iterdir()) == []
    assert {p.name for p in project.iterdir()} <= {"__pycache__", "test_agent.py"}
