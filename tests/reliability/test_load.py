"""Load: many concurrent journaled runs in one process, bounded in count and
time, on loopback; every run answers correctly and its journal is sound.

``make test`` runs 100 at once; ``bench/soak.py`` runs 500 and reports
runs/s, latency overhead and memory (see the README's Reliability section).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.soak import batch, scenario

from toolwire.testing import EmulationServer

RUNS = 100


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.slow
async def test_concurrent_journaled_runs_all_answer(tmp_path: Path) -> None:
    async with EmulationServer(scenario(0.002)) as server:
        # batch() checks every answer, the payments, and each run's journal.
        seconds, latencies, events, _ = await batch(server, RUNS, "inline", tmp_path, limit=60)
    assert len(latencies) == RUNS and seconds < 60
    assert events == RUNS * 10, "run, 2 requests and answers, 2 intents and outcomes, end"
