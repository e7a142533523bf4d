"""The protocol version toolwire's client agrees with a real server process
built with the official SDK, for each version the installed SDK speaks: the
2026-07-28 stateless protocol when the server speaks it, else the
``initialize`` handshake at the version the server counter-offers; the
version is recorded with each run that uses the server's tools."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)

import toolwire
from toolwire import UsageError
from toolwire.journal import RunStarted, SQLiteJournal
from toolwire.mcp import MCPProtocol, connect_stdio
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).parent / "versioned_server.py")
STATELESS = "2026-07-28"
TURNS = [
    {"tool_calls": [{"name": "version", "arguments": {}}]},
    {"text": "{result:version.result}"},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def agreed_and_spoken(
    tmp_path: Path, server_args: list[str], protocol: MCPProtocol
) -> tuple[str, str, object]:
    """The version agreed, the one the server says the call was made in,
    and what the run's journal records."""
    journal = SQLiteJournal(tmp_path / "runs.db")
    async with connect_stdio(sys.executable, [SERVER, *server_args], protocol=protocol) as server:
        with EmulationServer(Scenario.from_dict({"name": "v", "turns": TURNS})) as model:
            provider = toolwire.OpenAIChat(base_url=model.url_for("openai-chat"), api_key="k")
            tools = await server.tools()
            agent = toolwire.Agent(provider, model="m", tools=tools, journal=journal)
            try:
                result = await agent.run("which version?")
            finally:
                await agent.aclose()
    header = journal.load_run(result.run_id).events[0].record
    assert isinstance(header, RunStarted)
    return server.protocol_version, result.output, header.settings["tool_sources"]


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
async def test_an_older_server_is_spoken_to_at_the_version_it_counter_offers(
    tmp_path: Path, version: str
) -> None:
    agreed, spoken, recorded = await agreed_and_spoken(tmp_path, [version], "auto")
    assert (agreed, spoken) == (version, f"spoken: {version}")
    assert recorded == {"versioned-server": version}


@pytest.mark.skipif(STATELESS not in MODERN_PROTOCOL_VERSIONS, reason="SDK without 2026-07-28")
@pytest.mark.parametrize(
    ("protocol", "version"),
    [("auto", STATELESS), (STATELESS, STATELESS), ("handshake", LATEST_HANDSHAKE_VERSION)],
)
async def test_a_current_server_is_spoken_to_statelessly_unless_the_handshake_is_asked(
    tmp_path: Path, protocol: MCPProtocol, version: str
) -> None:
    agreed, spoken, recorded = await agreed_and_spoken(tmp_path, [], protocol)
    assert (agreed, spoken) == (version, f"spoken: {version}")
    # Pinned without a probe, the server has not introduced itself yet.
    name = "mcp-server" if protocol == STATELESS else "versioned-server"
    assert recorded == {name: version}


async def test_an_unknown_protocol_choice_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="protocol must be one of 'auto', 'handshake'"):
        connect_stdio(sys.executable, [SERVER], protocol="2025-11-25")  # type: ignore[arg-type]
