"""A quiet library: nothing on stderr unless the application configures logging."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# A tool that fails twice with a transient error, then succeeds, in a run
# against the emulation server; the script configures logging only when told.
SCRIPT = textwrap.dedent(
    """
    import logging
    import sys

    import toolwire
    from toolwire.providers import OpenAIChat
    from toolwire.testing import EmulationServer, Scenario

    if sys.argv[1] != "unconfigured":
        logging.basicConfig(level=getattr(logging, sys.argv[1]))

    attempts = []


    @toolwire.tool(retries=2)
    def flaky(city: str) -> str:
        \"\"\"Weather that needs a few tries.\"\"\"
        attempts.append(city)
        if len(attempts) < 3:
            raise ConnectionError(f"upstream reset, try {len(attempts)}")
        return "sunny"


    scenario = Scenario.from_dict({"turns": [
        {"tool_calls": [{"name": "flaky", "arguments": {"city": "Paris"}}]},
        {"text": "It is {result:flaky}."},
    ]})
    with EmulationServer(scenario) as server:
        provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="test")
        agent = toolwire.Agent(provider, model="m", tools=[flaky], journal=False)
        result = agent.run_sync("Weather in Paris?")
    print(result.output, result.tool_calls[0].result.attempts)
    """
)


def run_script(tmp_path: Path, level: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "flaky_agent.py"
    script.write_text(SCRIPT, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script), level],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_failed_attempts_print_nothing_when_logging_is_unconfigured(tmp_path: Path) -> None:
    proc = run_script(tmp_path, "unconfigured")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It is sunny. 3\n"
    assert proc.stderr == ""


def test_failed_attempts_are_one_line_each_at_info(tmp_path: Path) -> None:
    proc = run_script(tmp_path, "INFO")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("INFO:toolwire.tools:")]
    assert len(lines) == 2
    assert "attempt 1 raised ConnectionError: upstream reset, try 1" in lines[0]
    assert "Traceback" not in proc.stderr


def test_nothing_at_warning_either(tmp_path: Path) -> None:
    proc = run_script(tmp_path, "WARNING")
    assert proc.returncode == 0, proc.stderr
    assert "toolwire" not in proc.stderr


def test_the_traceback_is_there_at_debug(tmp_path: Path) -> None:
    proc = run_script(tmp_path, "DEBUG")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("Traceback (most recent call last)") >= 2
    assert "ConnectionError: upstream reset, try 2" in proc.stderr


def test_the_library_has_a_null_handler() -> None:
    import logging

    import toolwire  # noqa: F401

    handlers = logging.getLogger("toolwire").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)
