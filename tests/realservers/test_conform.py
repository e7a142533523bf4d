"""``toolwire conform`` against the two real llama.cpp servers.

Each server is checked through the command itself (``--json``), steered as
the agent tests steer it (a named tool for llama-cpp-python's grammar, a
bias towards ``<tool_call>`` for llama-server). Its verdicts must be the ones
kept in ``conform/<server>.json``; its table is written to
``build/conform/<server>.md`` (docs/conform.md shows them). Set
``TOOLWIRE_CONFORM_UPDATE=1`` to write the kept verdicts from a run instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.realservers.cache import REPO, Tokens
from tests.realservers.servers import Server
from tests.realservers.test_llamacpp import tool_call_bias
from toolwire.cli import main

KEPT = Path(__file__).resolve().parent / "conform"
BUILD = REPO / "build" / "conform"


def conform(server: Server, *options: str) -> dict[str, Any]:
    args = ["conform", server.base_url, "--dialect", "openai-chat", "--model", "tiny", "--json"]
    result = CliRunner().invoke(main, [*args, "--timeout", "300", *options])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.output)
    return report


def markdown(report: dict[str, Any]) -> str:
    """The report's quirks as a Markdown table, then one line per probe."""
    lines = ["| quirk | status | probes | evidence |", "|---|---|---|---|"]
    for quirk in report["quirks"]:
        cells = [quirk["title"], quirk["status"], ", ".join(quirk["probes"]), quirk["detail"]]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    lines.append("")
    for probe in report["probes"]:
        calls = ", ".join(call["name"] for call in probe["calls"]) or "no calls"
        line = f"- {probe['probe']}: {calls}; finish `{probe['wire_finish']}`"
        if probe["incomplete"]:
            line += f"; cut by the limit: {', '.join(probe['incomplete'])}"
        if probe["error"]:
            line += f"; error: {probe['error']}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def compare(name: str, report: dict[str, Any]) -> None:
    BUILD.mkdir(parents=True, exist_ok=True)
    (BUILD / f"{name}.md").write_text(markdown(report), encoding="utf-8")
    (BUILD / f"{name}.json").write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    verdicts = {quirk["id"]: quirk["status"] for quirk in report["quirks"]}
    kept = KEPT / f"{name}.json"
    if os.environ.get("TOOLWIRE_CONFORM_UPDATE") == "1":
        kept.write_text(json.dumps(verdicts, indent=2) + "\n", encoding="utf-8")
    assert verdicts == json.loads(kept.read_text(encoding="utf-8")), markdown(report)
    assert all(probe["error"] is None for probe in report["probes"]), markdown(report)


def test_conform_llama_cpp_python(llama_cpp_python: Server) -> None:
    # Its grammar makes the named tool's call, one per streamed turn.
    report = conform(llama_cpp_python, "--tool-choice", "get_weather", "--max-tokens", "64")
    compare("llama-cpp-python", report)


@pytest.mark.parametrize(
    ("name", "max_tokens"),
    [
        # The limit falls after the second call's JSON closed, before its
        # closing tag: `length`, with both calls complete.
        ("llama-server", "120"),
        # The limit cuts a call: `length` is due, and the cut call never runs.
        ("llama-server-cut", "200"),
    ],
)
def test_conform_llama_server(
    llama_server: Server, tokens: Tokens, name: str, max_tokens: str
) -> None:
    bias = {str(token): value for token, value in tool_call_bias(tokens).items()}
    extra = json.dumps({"logit_bias": bias, "parallel_tool_calls": True})
    report = conform(llama_server, "--max-tokens", max_tokens, "--extra", extra)
    compare(name, report)
