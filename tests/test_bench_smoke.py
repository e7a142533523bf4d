"""The streaming benchmark's runners and harness are correct (no timing here).

Every runner whose library is installed decodes a tiny stream of two parallel
calls in each format and must return the generator's ground truth; the
harness must report a wrong runner as wrong rather than time it.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import _peers  # noqa: E402
import _streams  # noqa: E402
import bench_stream  # noqa: E402

from toolwire.stream.framing import EventStreamDecoder  # noqa: E402

BUILTIN = _streams.load_generator(builtin=True)
ALWAYS = {"naive", "toolwire", "toolwire (no partial)"}
# litellm's own pydantic models warn when first built (a third-party notice,
# not something the benchmark does).
_LITELLM_WARNING = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)
INSTALLED = [
    pytest.param(
        fmt,
        runner,
        id=f"{fmt}-{runner.name}",
        marks=[_LITELLM_WARNING] if runner.name == "litellm" else [],
    )
    for fmt in _peers.FORMATS
    for runner in _peers.available_runners(fmt)
]


def _truth(calls: list[dict[str, str]]) -> list[Any]:
    return [json.loads(call["arguments"]) for call in calls]


def test_toolwire_and_naive_runners_are_always_there() -> None:
    for fmt in _peers.FORMATS:
        names = {runner.name for runner in _peers.available_runners(fmt)}
        assert names >= ALWAYS
        # Whatever is left out is said, never silently dropped.
        missing = _peers.missing_runners(fmt)
        assert len(names) + len(missing) == len(_runners_of(fmt))


def _runners_of(fmt: str) -> list[str]:
    if fmt == "bedrock":  # the peers read SSE only
        return sorted(ALWAYS)
    other = "anthropic SDK" if fmt == "openai" else "openai SDK"
    return [n for n in _peers.RUNNER_NAMES if n != other]


@pytest.mark.parametrize(("fmt", "runner"), INSTALLED)
def test_runner_returns_the_ground_truth(fmt: str, runner: _peers.Runner) -> None:
    body, calls = BUILTIN.stream(fmt, 1000, 2)
    expected = _truth(calls)
    assert len(expected) == 2 and expected[0] != expected[1]
    assert runner.run(body) == expected


@pytest.mark.parametrize("fmt", _peers.FORMATS)
def test_toolwire_partials_grow_to_the_final_arguments(fmt: str) -> None:
    body, calls = BUILTIN.stream(fmt, 1000, 2)
    dialect = {
        "openai": "openai-chat",
        "anthropic": "anthropic-messages",
        "bedrock": "bedrock-converse",
    }[fmt]
    partials = _peers.toolwire_partials(body, dialect)
    for index, final in enumerate(_truth(calls)):
        values = [value for i, value in partials if i == index]
        assert len(values) > 100  # one per 4-8 character fragment
        assert values[-1] == final
        lengths = [len(v.get("content", "")) for v in values]
        assert lengths == sorted(lengths) and lengths[-1] == len(final["content"])


@pytest.mark.parametrize("fmt", _peers.FORMATS)
def test_builtin_generator_has_the_promised_shape(fmt: str) -> None:
    body, calls = BUILTIN.stream(fmt, 3000, 3)
    assert [len(call["arguments"].encode()) for call in calls] == [3000] * 3
    content = "".join(json.loads(call["arguments"])["content"] for call in calls)
    assert '"' in content and "\\" in content and "\n" in content and "\t" in content
    assert max(map(ord, content)) > 0xFFFF  # 4-byte UTF-8 as well as 2- and 3-byte
    events = [json.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: {")]
    if fmt == "bedrock":
        frames = EventStreamDecoder().feed_pairs(body)
        events = [{"type": name, **json.loads(data)} for name, data in frames]
        pieces = [e["delta"]["toolUse"]["input"] for e in events if "delta" in e]
        assert events[0]["type"] == "messageStart" and events[-1]["type"] == "metadata"
    elif fmt == "openai":
        pieces = [
            call["function"]["arguments"]
            for event in events
            for choice in event["choices"]
            for call in choice["delta"].get("tool_calls") or ()
            if "id" not in call
        ]
        assert body.endswith(b"data: [DONE]\n\n")
    else:
        pieces = [
            event["delta"]["partial_json"]
            for event in events
            if event["type"] == "content_block_delta" and event["delta"]["partial_json"]
        ]
        assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    assert "".join(pieces) == "".join(call["arguments"] for call in calls)
    short = [p for p in pieces if not 4 <= len(p) <= 8]
    assert len(short) <= len(calls)  # only a call's last piece may be shorter


def test_an_explicit_missing_generator_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _streams.load_generator(tmp_path / "gen.py")


def test_projection_fits_a_linear_plus_quadratic_cost() -> None:
    assert math.isclose(bench_stream.fit_exponent(10, 1.0, 100, 100.0), 2.0)
    # t = n + n**2 / 1000: the power law through two points falls short of it.
    cost = [(n, n + n * n / 1000) for n in (1, 10, 100)]
    projected = bench_stream.project(cost, 1000)
    assert projected is not None
    assert math.isclose(projected.time, 2000.0)
    assert math.isclose(projected.low, 110 * 10 ** math.log10(110 / 10.1))
    assert math.isclose(projected.exponent, math.log10(2000 / 110))
    # Growth slower than linear: the power law it is.
    slow = bench_stream.project([(10, 1.0), (100, 2.0)], 1000)
    assert slow is not None and math.isclose(slow.time, 4.0) and slow.low == slow.time
    assert bench_stream.project([(10, 1.0)], 100) is None


def _settings(*cases: bench_stream.Case, cap: float = 20.0) -> bench_stream.Settings:
    return bench_stream.Settings(
        cases=cases, cap=cap, budget=0.0, max_repeats=1, min_repeats=1, collect=False
    )


def _quiet(_line: str) -> None:
    pass


def test_a_wrong_runner_is_reported_not_timed() -> None:
    good = _peers.available_runners("openai")[0]
    runs = []

    def wrong_after_warm_up(body: bytes) -> list[Any]:
        runs.append(len(body))
        return good.run(body)[: 1 if len(runs) > 1 else None]

    always_wrong = _peers.Runner("drops a call", "openai", lambda b: good.run(b)[:1], False)
    late = _peers.Runner("wrong later", "openai", wrong_after_warm_up, False)
    cases = (bench_stream.Case("1 KB x2", 1000, 2),)
    cells = bench_stream.bench_format(
        "openai", BUILTIN, [good, always_wrong, late], _settings(*cases), _quiet
    )
    assert cells["naive"]["1 KB x2"].status == "measured"
    assert cells["naive"]["1 KB x2"].wall is not None
    warm = cells["drops a call"]["1 KB x2"]
    assert warm.status == "n/a" and "wrong" in warm.note and warm.wall is None
    timed = cells["wrong later"]["1 KB x2"]
    assert timed.status == "wrong" and timed.wall is None and timed.walls == []
    table = bench_stream.render_table(cells, cases)
    assert "| drops a call | n/a |" in table and "| wrong later | wrong |" in table


def test_a_runner_over_the_cap_is_not_run_at_larger_sizes() -> None:
    naive = _peers.available_runners("openai")[0]
    cases = tuple(bench_stream.Case(f"{n} B", n) for n in (600, 1200))
    cells = bench_stream.bench_format("openai", BUILTIN, [naive], _settings(*cases), _quiet)
    assert [cells["naive"][c.label].status for c in cases] == ["measured", "measured"]
    tight = _settings(*cases, cap=1e-9)
    cells = bench_stream.bench_format("openai", BUILTIN, [naive], tight, _quiet)
    # Stopped by the alarm at the first size, with no growth to project from.
    first, second = (cells["naive"][c.label] for c in cases)
    assert first.status == "stopped" and first.walls == [] and "stopped" in first.note
    assert second.status == "n/a" and second.wall is None
    table = bench_stream.render_table(cells, cases)
    assert "s (stopped) | n/a |" in table


def test_projection_from_measured_growth_is_marked() -> None:
    measured = {1000: (0.01, 0.01), 10_000: (1.0, 0.9)}
    estimate = bench_stream._estimate(measured, bench_stream.Case("100 KB", 100_000))
    assert estimate is not None
    assert math.isclose(estimate.wall, 100.0) and math.isclose(estimate.exponent, 2.0)
    assert math.isclose(estimate.cpu, 89.0)  # 0.111 s linear + 88.9 s quadratic
    parallel = bench_stream._estimate(measured, bench_stream.Case("8 x 10 KB", 10_000, 8))
    assert parallel is not None and math.isclose(parallel.wall, 8.0)
    cases = (bench_stream.Case("10 KB", 10_000), bench_stream.Case("100 KB", 100_000))
    cell = bench_stream.Cell
    cells = {
        "naive": {"10 KB": cell("measured", 0.01, 0.01), "100 KB": cell("measured", 0.1, 0.1)},
        "toolwire": {"10 KB": cell("measured", 0.01, 0.01), "100 KB": cell("measured", 0.1, 0.1)},
        "slow": {"10 KB": cell("measured", 1.0, 1.0), "100 KB": cell("projected", 100.0, 90.0)},
    }
    table = bench_stream.render_table(cells, cases)
    row = next(line for line in table.splitlines() if line.startswith("| slow |"))
    assert "~100 s (~1,000× naive, ~1,000× tw) (projected)" in row
    assert row.endswith("| ~100.0 (n^2.00) |")


def test_readme_section_is_replaced_not_appended(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# toolwire\n\n```sh\nmake demo\n```\n")
    bench_stream.update_readme(readme, "| old |")
    bench_stream.update_readme(readme, "| new |")
    text = readme.read_text()
    assert text.startswith("# toolwire\n\n```sh\nmake demo\n```\n")
    assert text.count("## Benchmarks") == 1 and "| new |" in text and "| old |" not in text


def test_headline_states_each_target() -> None:
    cell = bench_stream.Cell
    cases = (bench_stream.Case("100 KB", 100_000), bench_stream.Case("1 MB", 1_000_000))
    row = {"100 KB": cell("measured", 0.1, 0.1), "1 MB": cell("measured", 1.0, 1.0)}
    cells = {
        "naive": row,
        "toolwire": {"100 KB": cell("measured", 0.1, 0.1), "1 MB": cell("measured", 1.4, 1.6)},
        "openai SDK": {"100 KB": cell("measured", 5.0, 5.0), "1 MB": cell("projected", 160, 140)},
    }
    lines = bench_stream.headline({"openai": cells}, cases)
    assert lines == [
        "- openai: toolwire (partial values read) / naive at 1 MB: 1.40× wall, 1.60× CPU "
        "(target ≤ 1.0×: NOT met)",
        "- openai: toolwire time(1 MB) / time(100 KB): 14.0 wall, 16.0 CPU (target ≤ 11: NOT met)",
        "- openai: openai SDK / toolwire at 1 MB (projected): ~114× wall, ~88× CPU "
        "(target ≥ 30×: met; goal ≥ 100×)",
        "- openai: openai SDK / toolwire at 100 KB (measured): 50× wall, 50× CPU "
        "(target ≥ 30×: met; goal ≥ 100×)",
    ]
    # Anthropic's target is the naive loop's time (1.0×): 1.05× misses it; the
    # growth target is met at 10.5 for ten times the size.
    cells["toolwire"] = {"100 KB": cell("measured", 0.1, 0.1), "1 MB": cell("measured", 1.0, 1.05)}
    anthropic = bench_stream.headline({"anthropic": cells}, cases)
    assert anthropic[:2] == [
        "- anthropic: toolwire (partial values read) / naive at 1 MB: 1.00× wall, 1.05× CPU "
        "(target ≤ 1.0×: NOT met)",
        "- anthropic: toolwire time(1 MB) / time(100 KB): 10.0 wall, 10.5 CPU (target ≤ 11: met)",
    ]


def test_saved_figures_render_the_same_report() -> None:
    cell = bench_stream.Cell
    cases = (bench_stream.Case("1 KB", 1000), bench_stream.Case("8 × 1 KB", 1000, 8))
    results = {
        "openai": {
            "naive": {"1 KB": cell("measured", 0.001, 0.001, [0.001], [0.001]), "8 × 1 KB": cell()},
            "toolwire": {"1 KB": cell("wrong", note="wrong result"), "8 × 1 KB": cell()},
        }
    }
    settings = _settings(*cases)
    meta = {
        "machine": "test",
        "versions": {"toolwire": "0"},
        "load_before": "0",
        "load_after": "0",
        "missing": {"openai": ["litellm (litellm not installed)"]},
    }
    raw = bench_stream._to_json(results, settings, "gen", "python bench/bench_stream.py", meta)
    again = bench_stream._from_json(json.loads(json.dumps(raw)))
    text = bench_stream.report(results, settings, "gen", "python bench/bench_stream.py", meta)
    assert bench_stream.report(*again) == text
    assert "Not run: litellm (litellm not installed)." in text
    assert "- toolwire at 1 KB: wrong result" in text


def test_fast_runners_are_repeated_slow_ones_are_not() -> None:
    settings = bench_stream.Settings(cases=(), cap=30.0, budget=4.0, max_repeats=7, min_repeats=3)
    assert bench_stream._repeats(0.001, settings) == 7
    assert bench_stream._repeats(1.0, settings) == 4
    assert bench_stream._repeats(1.5, settings) == 2
    assert bench_stream._repeats(3.9, settings) == 2
    assert bench_stream._repeats(10.0, settings) == 1


def test_many_calls_bench_checks_every_run_and_renders_its_growth() -> None:
    import _many_calls

    rows = _many_calls.bench_many_calls((50, 200), lambda line: None)
    assert [row.calls for row in rows] == [50, 200]
    text = _many_calls.render_many_calls(rows)
    assert "| 200 |" in text and "grows as n^" in text
    with pytest.raises(AssertionError, match="decoded"):
        _many_calls._decode(_many_calls._body(10), 11)
