"""The typed-output benchmark's readers read the right value (no timing here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_output  # noqa: E402


@pytest.mark.parametrize("chunk", [1, 7, 256])
def test_every_reader_ends_in_the_object(chunk: int) -> None:
    data = bench_output.invoice(3_000)
    assert 3_000 <= len(json.dumps(data)) < 3_300
    pieces = bench_output.chunks(json.dumps(data, ensure_ascii=False), chunk)
    for run in (bench_output.floor, bench_output.toolwire_output, bench_output.naive):
        assert run(pieces) == data, run.__name__
    truth = bench_output.Invoice.model_validate(data).model_dump()
    assert bench_output.pydantic_partial(pieces) == truth
    assert bench_output.toolwire_partial_objects(pieces) == truth


def test_a_wrong_reader_is_refused() -> None:
    pieces = bench_output.chunks(json.dumps({"a": 1}), 2)
    with pytest.raises(SystemExit, match="wrong final value"):
        bench_output.best(bench_output.floor, pieces, 1, {"a": 2})
