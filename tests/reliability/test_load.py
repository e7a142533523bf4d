"""Load: many concurrent journaled runs in one client process, the emulation
server in another (``toolwire serve``), bounded in count and time, on loopback;
every run answers correctly and its journal is sound.

``make test`` runs 200 at once, for correctness; ``bench/soak.py`` runs 2,000
and reports runs/s, latency overhead, memory and journal write latency (see
docs/reliability.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.soak import batch, serving

RUNS = 200


@pytest.mark.anyio
@pytest.mark.slow
async def test_concurrent_journaled_runs_all_answer(tmp_path: Path) -> None:
    async with serving(0.002, "process") as url:
        # batch() checks every answer, the payments, and each run's journal.
        _, latencies, events, _ = await batch(url, RUNS, "inline", tmp_path, limit=300)
    assert len(latencies) == RUNS
    assert events == RUNS * 10, "run, 2 requests and answers, 2 intents and outcomes, end"
