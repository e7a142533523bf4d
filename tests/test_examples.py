"""Every example in examples/ runs as written, offline, as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"


def run_example(name: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_weather_agent() -> None:
    out = run_example("weather_agent.py")
    assert "[get_weather: ok" in out and "[get_current_time: ok" in out
    assert "杭州现在小雨,24.0°C。" in out
    assert "(2 turns," in out


def test_approval() -> None:
    out = run_example("approval.py")
    assert out.splitlines()[:3] == ["get_weather: ok", "delete_file: denied", "delete_file: ok"]
    assert "deleted: ['/tmp/scratch.txt']" in out
    assert "/etc/passwd is outside /tmp" in out


def test_inspect_stream() -> None:
    out = run_example("inspect_stream.py")
    assert "ready: get_weather({'city': 'Mexico City'})" in out
    assert "openai-chat: 2 call(s), error=None" in out


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_is_covered(name: str) -> None:
    if name.startswith(("_", "test_")):
        return  # helpers, and pytest examples collected by pytest itself
    tests = Path(__file__).parent
    runners = [p for p in tests.rglob("test_*.py") if name in p.read_text(encoding="utf-8")]
    assert runners, f"examples/{name} has no test running it"


def test_ray_scale_out(tmp_path: Path) -> None:
    results = str(tmp_path / "results.jsonl")
    out = run_example("ray_scale_out.py", results)
    assert "c: ok=True" in out and '"result":1025' in out
    assert "bad: ok=False" in out
    assert "8 runs (8 answered, 0 failed), 0 skipped" in out
    lines = Path(results).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8 and all('"outcome":"answered"' in line for line in lines)
