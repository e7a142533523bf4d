"""``toolwire conform`` against the emulation server playing each quirk.

Each quirk a scenario can play is detected when it is played, and only
then; the decoded calls stay right whatever is played (what the agent gets);
recorded streams of two real llama.cpp servers show what they showed when
recorded; and the command's JSON has its shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from toolwire.cli import main
from toolwire.providers import Anthropic, OpenAIChat, OpenAIResponses, Provider
from toolwire.testing import EmulationServer, Scenario
from toolwire.testing.conform import QUIRKS, ConformReport, check
from toolwire.testing.pytest_plugin import ServerFactory
from toolwire.testing.scenario import WIRE_QUIRKS

CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
    {"name": "get_time", "arguments": {"city": "Tokyo"}},
]
EXPECTED = [(call["name"], call["arguments"]) for call in CALLS]
LENGTH = {
    "openai-chat": "length",
    "anthropic-messages": "max_tokens",
    "openai-responses": "max_output_tokens",
}
PROVIDERS: dict[str, type[Provider]] = {
    "openai-chat": OpenAIChat,
    "anthropic-messages": Anthropic,
    "openai-responses": OpenAIResponses,
}
LLAMACPP = Path(__file__).resolve().parents[1] / "fixtures" / "conformance" / "llamacpp"


def scenario(*quirks: str, calls: list[dict[str, Any]] = CALLS, **turn: Any) -> Scenario:
    played = [q for q in quirks if q in WIRE_QUIRKS]
    return Scenario.from_dict(
        {"turns": [{"tool_calls": calls, "chunk_size": 5, "quirks": played, **turn}]}
    )


def run_check(server: EmulationServer, dialect: str = "openai-chat") -> ConformReport:
    provider = PROVIDERS[dialect](base_url=server.url_for(dialect), api_key="test")

    async def go() -> ConformReport:
        try:
            return await check(provider, model="m", deadline=30.0)
        finally:
            await provider.aclose()

    return anyio.run(go)


def decoded(report: ConformReport) -> list[list[tuple[str, Any]]]:
    return [[(c["name"], c["arguments"]) for c in probe.calls] for probe in report.probes]


def test_a_server_without_quirks_shows_none(toolwire_server: ServerFactory) -> None:
    report = run_check(toolwire_server(scenario()))
    assert [v.status for v in report.quirks] == ["not seen"] * len(QUIRKS)
    assert decoded(report) == [EXPECTED, EXPECTED]
    assert all(probe.error is None and probe.wire_finish == "tool_calls" for probe in report.probes)


@pytest.mark.parametrize("quirk", sorted(WIRE_QUIRKS))
def test_each_played_quirk_is_seen_and_only_it(toolwire_server: ServerFactory, quirk: str) -> None:
    report = run_check(toolwire_server(scenario(quirk)))
    assert report.seen == [quirk]
    verdict = next(v for v in report.quirks if v.id == quirk)
    assert verdict.probes == ["one call", "two calls"] and verdict.detail
    # The agent's calls are right all the same: toolwire repairs each of them.
    assert decoded(report) == [EXPECTED, EXPECTED]
    minted = [call["minted_id"] for probe in report.probes for call in probe.calls]
    assert all(minted) == (quirk == "missing_ids")


@pytest.mark.parametrize("quirk", ["repeated_object", "missing_ids"])
@pytest.mark.parametrize("dialect", ["anthropic-messages", "openai-responses"])
def test_quirks_of_the_other_dialects(
    toolwire_server: ServerFactory, dialect: str, quirk: str
) -> None:
    report = run_check(toolwire_server(scenario(quirk)), dialect)
    assert report.seen == [quirk]
    assert decoded(report) == [EXPECTED, EXPECTED]
    flag = "repaired" if quirk == "repeated_object" else "minted_id"
    assert all(call[flag] for probe in report.probes for call in probe.calls)


def test_a_merged_opener_and_a_split_call_together(toolwire_server: ServerFactory) -> None:
    report = run_check(toolwire_server(scenario("merged_opener", "split_call")))
    assert report.seen == ["merged_opener", "split_call"]
    assert decoded(report) == [EXPECTED, EXPECTED]


def test_a_stream_the_decoder_refuses_is_judged_on_its_wire(
    toolwire_server: ServerFactory,
) -> None:
    # Without ids, the second call opens at the index the first call's rest
    # took: which call is which cannot be told, and the decoder says so.
    report = run_check(toolwire_server(scenario("split_call", "missing_ids")))
    assert report.seen == ["split_call", "missing_ids"]
    assert all(probe.error and "already complete" in probe.error for probe in report.probes)
    statuses = {v.id: v.status for v in report.quirks}
    assert statuses["length_finish"] == "not checked" and statuses["lost_call"] == "not seen"


@pytest.mark.parametrize("dialect", sorted(PROVIDERS))
def test_length_after_complete_calls(toolwire_server: ServerFactory, dialect: str) -> None:
    server = toolwire_server(scenario(provider_finish={dialect: LENGTH[dialect]}))
    report = run_check(server, dialect)
    assert report.seen == ["length_finish"]
    assert all(probe.wire_finish == LENGTH[dialect] for probe in report.probes)


@pytest.mark.parametrize("dialect", sorted(PROVIDERS))
def test_a_lost_second_call(toolwire_server: ServerFactory, dialect: str) -> None:
    report = run_check(toolwire_server(scenario(calls=CALLS[:1])), dialect)
    assert report.seen == ["lost_call"]
    verdict = next(v for v in report.quirks if v.id == "lost_call")
    assert verdict.probes == ["two calls"]  # the first probe asks for one
    assert verdict.detail == "asked for 2 calls, got 1 (1 opened on the wire)"


@pytest.mark.parametrize("dialect", sorted(PROVIDERS))
def test_every_dialect_without_quirks(toolwire_server: ServerFactory, dialect: str) -> None:
    report = run_check(toolwire_server(scenario()), dialect)
    assert report.seen == [] and decoded(report) == [EXPECTED, EXPECTED]
    assert {v.status for v in report.quirks} == {"not seen"}


def test_no_call_is_not_checked(toolwire_server: ServerFactory) -> None:
    report = run_check(toolwire_server(scenario(calls=[], text="no tools today")))
    statuses = {v.id: v.status for v in report.quirks}
    assert statuses.pop("lost_call") == "seen"
    assert set(statuses.values()) == {"not checked"}


def test_a_failing_server_is_a_probe_error(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(scenario(faults=[{"status": 400, "message": "no tools here"}] * 4))
    result = CliRunner().invoke(
        main, ["conform", server.url_for("openai-chat"), "--dialect", "openai-chat", "--model", "m"]
    )
    assert result.exit_code == 1
    assert "no tools here" in result.output
    assert result.output.strip().endswith(
        "no probe got an answer from " + server.url_for("openai-chat")
    )


@pytest.mark.parametrize(
    ("recording", "seen"),
    [
        # llama-server --jinja: "{" in each opener, `length` after the JSON closed.
        ("ls_required_parallel.sse", ["merged_opener", "length_finish"]),
        # llama-cpp-python: its one call under a named tool choice.
        ("lcp_named_weather.sse", ["merged_opener", "lost_call"]),
    ],
)
def test_recorded_llama_cpp_streams(
    toolwire_server: ServerFactory, recording: str, seen: list[str]
) -> None:
    report = run_check(toolwire_server(Scenario.replay_file(LLAMACPP / recording)))
    assert report.seen == seen


def test_the_json_report(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(scenario("object_arguments"))
    url = server.url_for("openai-chat")
    args = ["conform", url, "--dialect", "openai-chat", "--model", "m", "--json"]
    result = CliRunner().invoke(main, [*args, "--extra", '{"seed": 7}', "--tool-choice", "auto"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert list(report) == ["base_url", "dialect", "model", "quirks", "probes"]
    assert (report["base_url"], report["dialect"], report["model"]) == (url, "openai-chat", "m")
    assert [q["id"] for q in report["quirks"]] == [quirk.id for quirk in QUIRKS]
    keys = ["id", "title", "seen", "probes", "detail", "handling", "status"]
    assert all(list(q) == keys for q in report["quirks"])
    seen = {q["id"]: q["status"] for q in report["quirks"] if q["seen"]}
    assert seen == {"object_arguments": "seen"}
    probe = report["probes"][0]
    assert list(probe) == [
        *("probe", "asked", "calls", "invalid", "incomplete", "finish", "wire_finish"),
        *("payloads", "notes", "error"),
    ]
    assert probe["notes"] == ["arguments as a JSON object"]  # the decoder's own note
    assert [c["name"] for c in probe["calls"]] == ["get_weather", "get_time"]
    sent = server.requests[-1]
    assert sent["seed"] == 7 and sent["tool_choice"] == "auto" and sent["stream"] is True


def test_the_table(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(scenario("repeated_object"))
    args = ["conform", server.url_for("openai-chat"), "--dialect", "openai-chat", "--model", "m"]
    result = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "repeated at the end" in line)
    assert "seen" in row and "one call, two calls" in row
    assert "one call: get_weather, get_time; finish 'tool_calls' (tool_calls)" in result.output
