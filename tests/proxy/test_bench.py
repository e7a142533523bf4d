"""The proxy benchmark's arithmetic and report (no timing here)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_proxy  # noqa: E402

META = {"command": "c", "machine": "m", "python": "3", "load_before": "1", "load_after": "1"}


def test_the_added_time_is_the_median_of_paired_differences() -> None:
    times = {
        "straight": [1.0, 5.0, 1.0, 1.0],
        "proxy": [2.0, 9.0, 2.5, 2.0],  # the load spike of round 2 hits both
        "proxy --record": [3.0, 6.0, 3.0, 3.5],
    }
    result = bench_proxy.summary(times)
    assert result["rounds"] == 4
    assert result["proxy"]["added_median_ms"] == 1.25
    assert result["proxy --record"]["added_median_ms"] == 2.0
    assert result["straight"]["median_ms"] == 1.0
    text = bench_proxy.render(result, META)
    assert "| proxy | 2.25 ms |" in text
    assert "adds 2.00 ms median (target < 2 ms: NOT met)" in text


def test_the_readme_section_is_replaced(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"a\n{bench_proxy.README_START}\nold\n{bench_proxy.README_END}\nb\n")
    bench_proxy.update_readme(readme, "new")
    assert readme.read_text() == (
        f"a\n{bench_proxy.README_START}\nnew\n{bench_proxy.README_END}\nb\n"
    )


def test_the_benchmarks_page_states_a_measured_figure() -> None:
    readme = (BENCH.parent / "docs" / "benchmarks.md").read_text()
    section = readme.split(bench_proxy.README_START)[1].split(bench_proxy.README_END)[0]
    assert "Headline: the proxy adds" in section and "| proxy --record |" in section
