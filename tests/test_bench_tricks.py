"""The speed-tricks benchmark measures what it says (no timing here).

Its plain version of a trick must really be in place while its batches run
(and the trick back after), every answer is checked, and the report has a
row per plain version measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import _agents  # noqa: E402
import bench_tricks  # noqa: E402

from toolwire.http.transport import HttpxTransport  # noqa: E402
from toolwire.testing import EmulationServer  # noqa: E402


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the benchmark runs under asyncio.run
async def test_the_plain_request_goes_through_the_client_and_the_trick_comes_back() -> None:
    async with HttpxTransport() as transport:
        direct = transport._direct
        assert direct is not None
        switches = bench_tricks.Switches(transport)
        with switches.plain({"request"}):
            assert transport._direct is None  # so _attempt sends with client.send
        assert transport._direct is direct
        with pytest.raises(RuntimeError), switches.plain({"request"}):
            raise RuntimeError("a batch that failed")
        assert transport._direct is direct


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_measurement_checks_every_answer_and_reports_each_plain_version() -> None:
    args = argparse.Namespace(
        repeats=2, runs=2, concurrency=[1, 2], variants=list(bench_tricks.VARIANT_NAMES)
    )
    async with EmulationServer(_agents.scenario(_agents.VARIANTS["small"])) as server:
        figures = await bench_tricks.measure(server.base_url + "/v1", args, lambda _line: None)
    assert set(figures) == {1, 2}
    for fig in figures.values():
        assert fig["as_is"] > 0
        assert set(fig["ratios"]) == set(bench_tricks.TRICKS)
        assert all(len(r) == 2 and all(x > 0 for x in r) for r in fig["ratios"].values())
    text = bench_tricks.report(figures, args)
    for name in bench_tricks.TRICKS:
        assert f"| {name} | " in text
    assert "1 at a time" in text and "2 at a time" in text
