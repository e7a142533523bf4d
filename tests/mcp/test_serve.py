"""``toolwire mcp serve``: the official SDK's client lists and calls a toolwire
toolbox in a real process, over stdio and over streamable HTTP on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client, StdioServerParameters

from toolwire.journal import SQLiteJournal
from toolwire.mcp import mcp_server

from .served import toolbox_app

pytestmark = pytest.mark.anyio

SERVED = Path(__file__).parent / "served"
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # the server is a separate process; one backend is enough here


def _env(journal: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(SRC), "TOOLWIRE_JOURNAL": str(journal)}


def serve_command(journal: Path, *extra: str) -> StdioServerParameters:
    args = ["-m", "toolwire", "mcp", "serve", "toolbox_app:toolbox", *extra]
    return StdioServerParameters(
        command=sys.executable, args=args, cwd=str(SERVED), env=_env(journal)
    )


@pytest.fixture(scope="module")
def journal_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("served") / "journal.sqlite3"


@pytest.fixture(scope="module")
async def stdio_client(journal_file: Path) -> AsyncIterator[Client]:
    asked: list[str] = []

    async def elicit(_ctx: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        yes = "R-1" in params.message
        return mcp_types.ElicitResult(action="accept", content={"approve": yes})

    async with Client(serve_command(journal_file), elicitation_callback=elicit) as client:
        client.asked = asked  # type: ignore[attr-defined]
        yield client


@pytest.fixture(scope="module")
def http_url(journal_file: Path) -> Iterator[str]:
    command = [sys.executable, "-m", "toolwire", "mcp", "serve", "toolbox_app:make_toolbox",
               "--http", "--port", "0", "--name", "served-over-http"]  # fmt: skip
    proc = subprocess.Popen(
        command,
        cwd=SERVED,
        env={**os.environ, **_env(journal_file), "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # printed once the socket listens
        assert "serving served-over-http at http://127.0.0.1:" in line, line
        yield line.split(" at ")[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


def text(result: mcp_types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, mcp_types.TextContent)
    return block.text


async def test_the_sdk_client_lists_the_toolbox_over_stdio(stdio_client: Client) -> None:
    listed = {t.name: t for t in (await stdio_client.list_tools()).tools}
    assert set(listed) == {"add", "get_weather", "delete_record"}  # not the external tool
    add = listed["add"]
    assert add.description is not None and add.description.startswith("Add two integers")
    assert add.input_schema["required"] == ["a", "b"]
    first = {"type": "integer", "description": "the first number."}
    assert add.input_schema["properties"]["a"] == first
    assert add.annotations is not None and add.annotations.read_only_hint is True
    gated = listed["delete_record"].annotations
    assert gated is not None and gated.destructive_hint is True


async def test_calls_and_structured_content_over_stdio(stdio_client: Client) -> None:
    added = await stdio_client.call_tool("add", {"a": 2, "b": 40})
    assert not added.is_error and text(added) == "42"
    weather = await stdio_client.call_tool("get_weather", {"city": "杭州"})
    assert weather.structured_content == {
        "city": "杭州", "condition": "light rain", "temperature_c": 24.5
    }  # fmt: skip


async def test_invalid_arguments_are_an_error_result_not_a_crash(stdio_client: Client) -> None:
    bad = await stdio_client.call_tool("add", {"a": "two"})
    assert bad.is_error
    assert "a: Input should be a valid integer" in text(bad) and "b: required" in text(bad)
    unknown = await stdio_client.call_tool("pick_color", {})  # external: not served
    assert unknown.is_error and "no tool named" in text(unknown)
    # The server is still there.
    assert text(await stdio_client.call_tool("add", {"a": 1, "b": 1})) == "2"


async def test_approval_is_asked_of_the_client_by_elicitation(stdio_client: Client) -> None:
    allowed = await stdio_client.call_tool("delete_record", {"record_id": "R-1"})
    assert not allowed.is_error and text(allowed) == "deleted R-1"
    refused = await stdio_client.call_tool("delete_record", {"record_id": "R-2"})
    assert refused.is_error and "denied and did not run" in text(refused)
    asked: list[str] = stdio_client.asked  # type: ignore[attr-defined]
    assert asked[-2:] == [
        'Allow the tool \'delete_record\' to run with {"record_id":"R-1"}?',
        'Allow the tool \'delete_record\' to run with {"record_id":"R-2"}?',
    ]


async def test_the_legacy_handshake_asks_too(http_url: str) -> None:
    async def elicit(_ctx: Any, _params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"approve": True})

    async with Client(http_url, elicitation_callback=elicit, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        done = await client.call_tool("delete_record", {"record_id": "L-1"})
    assert not done.is_error and text(done) == "deleted L-1"


async def test_a_client_that_cannot_be_asked_is_refused(http_url: str) -> None:
    async with Client(http_url) as client:
        refused = await client.call_tool("delete_record", {"record_id": "R-3"})
    assert refused.is_error and "cannot be asked" in text(refused)


async def test_approval_refuse_refuses_without_asking() -> None:
    async def elicit(_ctx: Any, _params: Any) -> mcp_types.ElicitResult:
        raise AssertionError("not asked")

    server = mcp_server(toolbox_app.toolbox, approval="refuse", journal=None)
    async with Client(server, elicitation_callback=elicit) as client:  # in process
        refused = await client.call_tool("delete_record", {"record_id": "R-4"})
    assert refused.is_error and "refuses such calls" in text(refused)


async def test_list_and_call_over_streamable_http(http_url: str) -> None:
    async with Client(http_url) as client:
        assert client.server_info is not None and client.server_info.name == "served-over-http"
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["add", "get_weather", "delete_record"]
        assert text(await client.call_tool("add", {"a": 20, "b": 22})) == "42"
        bad = await client.call_tool("get_weather", {})
        assert bad.is_error and "city: required" in text(bad)


async def test_each_call_is_journaled(stdio_client: Client, journal_file: Path) -> None:
    await stdio_client.call_tool("add", {"a": 5, "b": 6})
    journal = SQLiteJournal(journal_file, read_only=True)
    try:
        (latest,) = journal.list_runs(limit=1)
        log = journal.load_run(latest.run_id)
    finally:
        journal.close()
    kinds = [event.kind for event in log.events]
    assert kinds[:1] == ["run_started"] and "tool_intent" in kinds and "tool_outcome" in kinds
    assert log.run.status == "answered"


def test_the_app_must_name_a_toolbox(monkeypatch: pytest.MonkeyPatch) -> None:
    import click

    from toolwire.cli.mcp import load_toolbox

    monkeypatch.chdir(SERVED)
    assert load_toolbox("toolbox_app:make_toolbox").names == toolbox_app.toolbox.names
    with pytest.raises(click.BadParameter, match=r"is a int, not a toolwire\.Toolbox"):
        load_toolbox("toolbox_app:not_a_toolbox")
    with pytest.raises(click.BadParameter, match="use module:attribute"):
        load_toolbox("toolbox_app")
    with pytest.raises(click.BadParameter, match="cannot import"):
        load_toolbox("toolbox_app:nothing_here")


def test_http_listens_on_loopback_only() -> None:
    from click.testing import CliRunner

    from toolwire.cli import main

    ran = CliRunner().invoke(
        main, ["mcp", "serve", "x:y", "--http", "--host", "0.0.0.0"], standalone_mode=False
    )
    assert ran.exception is not None and "not a loopback address" in str(ran.exception)
