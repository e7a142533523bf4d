"""The "Record real traffic, replay it in tests" section of docs/integrations.md
runs as written: its first block against the emulation server standing in
for OpenAI, its second as a user's test file, recorded and then replayed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolwire.testing import Cassette, Scenario

from ._support import Upstream

README = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
HEADING = "## Record real traffic, replay it in tests\n"
KEY = "sk-readme-key-0011223344556677"
SCENARIO = Scenario.from_dict(
    {
        "turns": [
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Hangzhou"}}]},
            {"text": "Hangzhou: {result:get_weather.condition}."},
        ]
    }
)


def _blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_section_has_its_two_python_blocks() -> None:
    blocks = _blocks()
    assert len(blocks) == 2
    assert "RecordingProxy" in blocks[0] and "def test_weather_agent" in blocks[1]


def test_record_then_replay_from_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with Upstream(SCENARIO) as upstream:
        monkeypatch.setenv("OPENAI_BASE_URL", upstream.url_for("openai-chat"))
        exec(compile(_blocks()[0], str(README), "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in printed] == ["#1", "#2"]
    assert 'calls get_weather({"city": "Hangzhou"})' in printed[0]
    assert '| text "Hangzhou: light rain."' in printed[1]
    cassette = Cassette.load(tmp_path / "cassettes" / "weather")
    assert len(cassette) == 2
    for path in (tmp_path / "cassettes" / "weather").iterdir():
        assert KEY.encode() not in path.read_bytes()


def test_the_fixture_block_records_then_replays(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_weather=_blocks()[1])
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with Upstream(SCENARIO) as upstream:
        monkeypatch.setenv("OPENAI_BASE_URL", upstream.url_for("openai-chat"))
        monkeypatch.setenv("TOOLWIRE_RECORD", "1")
        pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_weather" / "test_weather_agent"
    assert len(Cassette.load(cassette)) == 2

    monkeypatch.delenv("TOOLWIRE_RECORD")
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing there
    pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider").assert_outcomes(passed=1)
