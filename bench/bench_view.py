"""The viewer's runs list at 100,000 runs: how long its pages take to answer.

Builds a journal of ``--runs`` runs (each with a start, two model turns with
usage and a tool call, and an end; every tenth failed), written through
:meth:`SQLiteJournal.record_steps` as an agent would write it, then serves
it with ``toolwire view``'s application (uvicorn, loopback, a thread) and
times, over HTTP, the first page, a page deep in the list (keyset cursor),
a status filter and a model search. Each figure is the median of
``--repeat`` requests, after one warm-up request.

    python bench/bench_view.py [--runs 100000] [--repeat 20] [--journal PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.view._support import serving

from toolwire.journal import SQLiteJournal, Step
from toolwire.journal._records import end_step


def _steps(number: int) -> list[Step]:
    header = json.dumps(
        {
            "model": ("gpt-4.1-mini", "claude-sonnet-4-5", "gemini-2.5-flash")[number % 3],
            "provider": ("openai", "anthropic", "gemini")[number % 3],
            "dialect": "openai-chat",
            "tools": ["get_weather"],
            "settings": {},
        }
    )
    usage = {"input_tokens": 480 + number % 50, "output_tokens": 17, "total_tokens": 497}
    response = json.dumps({"elapsed": 0.8, "finish_reason": "stop", "usage": usage})
    failed = number % 10 == 0
    summary = json.dumps(
        {"turns": 2, "tool_calls": 1, "usage": usage, "output": "ok", "error": None}
        if not failed
        else {"turns": 1, "error": {"type": "provider_error", "message": "HTTP 500"}}
    )
    return [
        Step("run_started", header, messages=[json.dumps({"kind": "user", "text": "hi"})]),
        Step("model_request", '{"messages": 1, "new": 1}', turn=1, attempt=1),
        Step("model_response", response, turn=1, attempt=1),
        Step("tool_intent", '{"name": "get_weather", "arguments": {}}', turn=1, call_id="c1"),
        Step("tool_outcome", '{"result": {"ok": true}}', turn=1, call_id="c1"),
        Step("model_request", '{"messages": 3, "new": 2}', turn=2, attempt=1),
        Step("model_response", response, turn=2, attempt=1),
        end_step("failed" if failed else "answered", summary, "{}"),
    ]


def build(path: Path, runs: int) -> float:
    started = time.perf_counter()
    journal = SQLiteJournal(path)
    for number in range(runs):
        journal.record_steps(f"run-{number:08d}", _steps(number))
    journal.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--journal", type=Path, default=None, help="reuse or build this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.journal or Path(scratch) / "journal.sqlite3"
        if not path.exists():
            took = build(path, args.runs)
            print(f"built {args.runs:,} runs in {took:.1f} s ({path.stat().st_size / 1e6:.0f} MB)")
        middle = args.runs // 2
        pages = {
            "first page": {},
            "a page in the middle": {"before": str(middle)},
            "status=failed": {"status": "failed"},
            "search a model": {"q": "claude"},
            "search a run id": {"q": f"run-{middle:08d}"},
        }
        with serving(path) as viewer, viewer.client() as client:
            for name, params in pages.items():
                assert client.get("/", params=params).status_code == 200
                times = []
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    response = client.get("/", params=params)
                    times.append(time.perf_counter() - started)
                    assert response.status_code == 200 and "<tr data-run=" in response.text
                median = statistics.median(times) * 1000
                print(f"{name:>22}: median {median:6.1f} ms, max {max(times) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
