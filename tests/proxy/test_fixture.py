"""The ``toolwire_cassette`` fixture in a user's own test suite (an inner
pytest run): record with a key, replay without the upstream or the key, fail
clearly on a request the cassette lacks."""

from __future__ import annotations

from typing import Any

import pytest

from ._support import Upstream, weather

USER_TEST = """
import os
import openai


def test_weather(toolwire_cassette):
    wire = toolwire_cassette(os.environ["UPSTREAM"])
    with openai.OpenAI(base_url=wire.url, api_key=wire.api_key("MY_KEY"), max_retries=0) as client:
        completion = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": os.environ["QUESTION"]}]
        )
    assert [c.function.name for c in completion.choices[0].message.tool_calls] == [
        "get_weather", "get_current_time"
    ]
    assert wire.recording == (os.environ.get("TOOLWIRE_RECORD") == "1")
"""
SECRET = "sk-fixture-key-5f4e3d2c1b0a9988"


def _pytest(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, **env: str) -> Any:
    monkeypatch.delenv("TOOLWIRE_RECORD", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "test_user.py")


def test_record_then_replay_then_mismatch(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    question = "杭州天气怎么样?"
    with Upstream(weather()) as upstream:
        recorded = _pytest(
            pytester,
            monkeypatch,
            TOOLWIRE_RECORD="1",
            MY_KEY=SECRET,
            UPSTREAM=upstream.url_for("openai-chat"),
            QUESTION=question,
        )
    recorded.assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_user" / "test_weather"
    assert sorted(p.name for p in cassette.iterdir()) == ["0001.json", "0001.response.json"]
    assert all(SECRET.encode() not in p.read_bytes() for p in cassette.iterdir())

    # The upstream is gone and the key too: the replay answers.
    monkeypatch.delenv("MY_KEY")
    gone = "http://127.0.0.1:9/v1"
    _pytest(pytester, monkeypatch, UPSTREAM=gone).assert_outcomes(passed=1)

    changed = _pytest(pytester, monkeypatch, QUESTION="巴黎天气怎么样?")
    changed.assert_outcomes(failed=1, errors=1)  # the client's error, then the fixture's
    output = changed.stdout.str()
    assert "The nearest is #1 (0001.json) POST /chat/completions" in output
    assert (
        'body.messages[0].content: recorded "杭州天气怎么样?", received "巴黎天气怎么样?"' in output
    )

    (pytester.path / "cassettes").rename(pytester.path / "elsewhere")
    missing = _pytest(pytester, monkeypatch, QUESTION=question)
    missing.assert_outcomes(failed=1)
    assert "no cassette at" in missing.stdout.str()
    assert "TOOLWIRE_RECORD=1" in missing.stdout.str()


def test_recording_without_the_key_fails_clearly(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    monkeypatch.delenv("MY_KEY", raising=False)
    result = _pytest(
        pytester, monkeypatch, TOOLWIRE_RECORD="1", UPSTREAM="http://127.0.0.1:9/v1", QUESTION="?"
    )
    result.assert_outcomes(failed=1)
    assert "needs a real key in $MY_KEY" in result.stdout.str()
