"""The agent benchmark's clients and harness are correct (no timing here).

Every client whose library is installed holds the benchmark's conversation
with a real emulation server and must give the scripted answer, which quotes
both tool results; the harness runs a round in a worker process against
``toolwire serve`` in another, and its verdicts follow the figures.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import _agents  # noqa: E402
import bench_agent  # noqa: E402

from toolwire.testing import EmulationServer  # noqa: E402

INSTALLED, _MISSING = bench_agent.available_clients()
SMALL = _agents.VARIANTS["small"]
# A few KB of arguments instead of 100: the same path, a test's budget.
WRITE = _agents.Variant("write", "write_file", note_bytes=3000)


# The peers are checked on the small conversation; toolwire and the floor on both.
CASES = [
    pytest.param(name, variant, id=f"{name}-{variant.name}")
    for name in INSTALLED
    for variant in (SMALL, WRITE)
    if variant is SMALL or name not in _agents.PACKAGES
]


# asyncio only: the benchmark runs every client under asyncio.run, and its
# peers (openai-agents, litellm) are asyncio libraries.
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(("name", "variant"), CASES)
async def test_every_client_gives_the_scripted_answer(name: str, variant: _agents.Variant) -> None:
    async with EmulationServer(_agents.scenario(variant)) as server:
        client = await _agents.make_client(name, server.url_for("openai-chat"), variant)
        try:
            first = await client.run()
            second = await client.run()
        finally:
            await client.aclose()
    assert first == second == variant.expected
    # The answer quotes the tool results, so both tools ran and were sent back.
    assert ("小雨" in first) == (variant is SMALL) and "14:05" in first
    assert variant is SMALL or "wrote 3000 characters" in first


def test_the_answer_would_be_wrong_without_the_tool_results() -> None:
    script = _agents.scenario(WRITE)
    assert "{result:write_file.chars}" in script["turns"][1]["text"]
    arguments = script["turns"][0]["tool_calls"][0]["arguments"]
    assert len(arguments["content"]) == 3000 and '"' in arguments["content"]


def test_a_round_in_worker_processes_against_a_served_emulator() -> None:
    with bench_agent.served(SMALL) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        got = bench_agent._spawn("toolwire", url, "small", 2, 1.0)
    assert got["status"] == "measured", got
    assert got["runs"] >= 8 and got["runs"] % 2 == 0
    assert 0 < got["cpu"] and 0 < got["wall"]


def _rows(**cpu: float) -> dict[str, dict[int, bench_agent.Cell]]:
    return {
        name: {
            n: bench_agent.Cell(status="measured", cpu=value, wall=value)
            for n in bench_agent.CONCURRENCY
        }
        for name, value in cpu.items()
    }


def test_verdicts_follow_the_figures() -> None:
    good = _rows(
        floor=1.0,
        toolwire=1.2,
        **{"toolwire+journal": 1.4, "openai-agents": 7.0, "pydantic-ai": 6.5},
    )
    lines = bench_agent.verdicts({"small": good})
    assert lines and all(line.endswith(": met)") for line in lines)
    bad = _rows(floor=1.0, toolwire=1.4, **{"toolwire+journal": 1.6, "openai-agents": 6.0})
    lines = bench_agent.verdicts({"small": bad})
    failed = [line for line in lines if "NOT met" in line]
    assert len(failed) == 2 * len(bench_agent.CONCURRENCY) + len(bench_agent.CONCURRENCY)
    assert not any("pydantic-ai" in line for line in lines)  # no figure, no verdict


def test_the_report_goes_between_the_readme_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        f"# x\n\n{bench_agent.README_START}\nold\n{bench_agent.README_END}\n\n## After\n"
    )
    bench_agent.update_readme(readme, "new table")
    text = readme.read_text()
    assert "old" not in text and "new table" in text and text.endswith("## After\n")
