"""The WebSocket benchmark's clients and table are correct (no timing here).

Each transport's client holds the benchmark's 20-call conversation with a
real emulation server and must give the scripted answer, each call run once
(the client checks both); the WebSocket client's run uses one socket.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_websocket  # noqa: E402

from toolwire.testing import EmulationServer, Scenario  # noqa: E402


@pytest.mark.parametrize("transport", bench_websocket.TRANSPORTS)
@pytest.mark.anyio
async def test_each_transports_client_holds_the_conversation(transport: str) -> None:
    scenario = Scenario.from_dict(bench_websocket.scenario())
    with EmulationServer(scenario) as server:
        client = bench_websocket.Client(server.base_url, transport)
        try:
            await client.run()  # raises on a wrong answer or a call run twice
        finally:
            await client.agent.aclose()
    assert len(server.sockets) == (1 if transport == "websocket" else 0)


def test_the_table_names_both_transports_and_their_ratio() -> None:
    figures = {
        "http": {"cpu": [0.040, 0.036], "wall": [0.09, 0.08]},
        "websocket": {"cpu": [0.030, 0.027], "wall": [0.07, 0.06]},
    }
    meta = {
        "command": "python bench/bench_websocket.py",
        "machine": "test",
        "python": "3",
        "load_before": "0",
        "load_after": "0",
        "rounds": 2,
        "runs": 1,
    }
    text = bench_websocket.render(figures, meta)
    assert "| HTTP (SSE, the whole context each turn) | 36.0 ms | 80.0 ms |" in text
    assert "| WebSocket | 27.0 ms | 60.0 ms |" in text
    assert "0.75× the CPU and 0.75× the wall time" in text
