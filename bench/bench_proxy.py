"""What ``toolwire proxy`` adds to the time to first byte, on loopback.

Three processes, as a user runs them: the emulation server (``toolwire serve``)
as the upstream, ``toolwire proxy`` in front of it (once plain, once with
``--record``), and this client. Each round asks each target once, in a
shuffled order, for a streamed answer and times the first body byte; the
figure is the median over the rounds of (through the proxy - straight), so
that the machine's load, which moves both, cancels out as far as it can.

    python bench/bench_proxy.py [--rounds 300] [--json FILE] [--readme docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

README_START = "<!-- bench-proxy:start -->"
README_END = "<!-- bench-proxy:end -->"
TARGETS = ("straight", "proxy", "proxy --record")
BODY = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
SCENARIO = {"name": "bench", "turns": [{"text": "Streaming a short answer. " * 8, "delay": 0}]}


@contextmanager
def toolwire(*args: str) -> Iterator[str]:
    """``toolwire ARGS`` in its own process; yields the URL its first line ends with."""
    with toolwire_process(*args) as (url, _pid):
        yield url


@contextmanager
def toolwire_process(*args: str) -> Iterator[tuple[str, int]]:
    """``toolwire ARGS`` in its own process; yields its URL and its pid."""
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    assert process.stdout is not None
    stdout = process.stdout
    first = stdout.readline()
    # The servers print a line per request: keep the pipe drained.
    threading.Thread(target=lambda: [None for _ in stdout], daemon=True).start()
    try:
        words = [w for w in first.split() if w.startswith("http://")]
        if not words:
            raise RuntimeError(f"toolwire {' '.join(args)} did not start: {first!r}")
        yield words[0], process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def first_byte(client: httpx.Client, url: str) -> float:
    """Seconds from sending the request to the first byte of the body."""
    started = time.perf_counter()
    with client.stream("POST", url, json=BODY) as response:
        chunks = response.iter_raw()
        next(chunks)
        elapsed = time.perf_counter() - started
        for _ in chunks:
            pass
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}")
    return elapsed


def measure(rounds: int, warmup: int) -> dict[str, list[float]]:
    """First-byte times in milliseconds, per target, round by round."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        scenario = folder / "scenario.json"
        scenario.write_text(json.dumps(SCENARIO))
        upstream = stack.enter_context(
            toolwire("serve", "--scenario", str(scenario), "--port", "0")
        )
        upstream_v1 = upstream + "/v1"
        proxy = stack.enter_context(toolwire("proxy", "--upstream", upstream_v1, "--port", "0"))
        record = ["--record", str(folder / "cassette")]
        recorder = stack.enter_context(
            toolwire("proxy", "--upstream", upstream_v1, *record, "--port", "0")
        )
        urls = {
            "straight": upstream_v1 + "/chat/completions",
            "proxy": proxy + "/chat/completions",
            "proxy --record": recorder + "/chat/completions",
        }
        times: dict[str, list[float]] = {name: [] for name in TARGETS}
        order = list(TARGETS)
        with httpx.Client(timeout=30) as client:
            for n in range(warmup + rounds):
                random.shuffle(order)
                for name in order:
                    elapsed = first_byte(client, urls[name]) * 1000
                    if n >= warmup:
                        times[name].append(elapsed)
    return times


def summary(times: dict[str, list[float]]) -> dict[str, Any]:
    straight = times["straight"]
    out: dict[str, Any] = {"rounds": len(straight)}
    for name in TARGETS:
        row = sorted(times[name])
        out[name] = {
            "median_ms": statistics.median(row),
            "p90_ms": row[int(0.9 * (len(row) - 1))],
        }
        if name != "straight":
            added = [t - s for t, s in zip(times[name], straight, strict=True)]
            out[name]["added_median_ms"] = statistics.median(added)
    return out


def render(result: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        f"`{meta['command']}` on {meta['machine']}, Python {meta['python']}; "
        f"load average {meta['load_before']} before, {meta['load_after']} after "
        f"({result['rounds']} rounds; a shared machine).",
        "",
        "| time to first byte | median | p90 | added (median of per-round differences) |",
        "|---|---|---|---|",
    ]
    for name in TARGETS:
        row = result[name]
        added = f"{row['added_median_ms']:+.2f} ms" if "added_median_ms" in row else "-"
        lines.append(f"| {name} | {row['median_ms']:.2f} ms | {row['p90_ms']:.2f} ms | {added} |")
    verdict = max(result[n]["added_median_ms"] for n in TARGETS[1:])
    met = "met" if verdict < 2.0 else "NOT met"
    lines += ["", f"Headline: the proxy adds {verdict:.2f} ms median (target < 2 ms: {met})."]
    return "\n".join(lines)


def update_readme(path: Path, text: str, start: str = README_START, end: str = README_END) -> None:
    """Replace the text between the page's markers (by default bench-proxy's)."""
    readme = path.read_text()
    if start not in readme or end not in readme:
        raise SystemExit(f"{path} has no {start} ... {end} section")
    head, rest = readme.split(start, 1)
    _old, tail = rest.split(end, 1)
    path.write_text(f"{head}{start}\n{text}\n{end}{tail}")


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="measured rounds")
    parser.add_argument("--warmup", type=int, default=30, help="rounds not measured")
    parser.add_argument("--json", type=Path, help="save the raw figures here")
    parser.add_argument("--readme", type=Path, help="put the table in this page")
    args = parser.parse_args(argv)
    load_before = _load()
    times = measure(args.rounds, args.warmup)
    result = summary(times)
    meta = {
        "command": "python bench/bench_proxy.py"
        + (f" --rounds {args.rounds}" if args.rounds != 300 else ""),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "python": platform.python_version(),
        "load_before": load_before,
        "load_after": _load(),
    }
    text = render(result, meta)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "summary": result, "times": times}))
    if args.readme:
        update_readme(args.readme, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
