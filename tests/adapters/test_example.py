"""``examples/sdk_interop.py`` runs: two SDK agent loops through the adapters."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "sdk_interop.py"


def test_sdk_interop_example(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("sdk_interop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    answers = module.main()
    assert set(answers) == {"openai-chat", "anthropic-messages"}
    for answer in answers.values():
        # The answer quotes the sample tools' results: the calls really ran.
        assert answer.startswith("杭州现在小雨,气温 24.0°C")
        assert "{result:" not in answer
    out = capsys.readouterr().out
    assert out.count('-> get_weather .... {"city": "杭州"}') == 2
    assert out.count('{"timezone": "Asia/Shanghai"}') == 2
