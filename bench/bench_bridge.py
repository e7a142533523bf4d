"""``toolwire bridge`` beside litellm's proxy: CPU per streamed chunk, added first byte.

Four processes, as a user runs them: the emulation server (``toolwire serve``)
as an OpenAI-compatible upstream; ``toolwire bridge --serve anthropic-messages
--upstream openai-chat`` in front of it; litellm's proxy (``litellm --config``,
its model ``openai/bench`` at the same upstream) serving Anthropic's
``/v1/messages`` from it too; and this client. The answer is Claude Code's
kind of traffic: a sentence, then a tool call whose arguments stream in small
fragments.

Time to first byte: each round asks each target once, in a shuffled order,
and times the first body byte and the first content delta; the figure is the
median over the rounds of (through the proxy - straight), as in
``bench_proxy.py``. CPU: each proxy in turn answers the same requests one
after the other, and the proxy process's own CPU time (user + system, from
``/proc``) over them, less what it spends idle over as long, is divided by the
upstream chunks it relayed. Before timing, both proxies' answers are checked:
the tool call reassembled from the stream must equal the upstream's.

    python bench/bench_bridge.py [--rounds 200] [--requests 200] [--json FILE]
        [--readme docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_proxy import _load, toolwire, toolwire_process, update_readme  # noqa: E402

README_START = "<!-- bench-bridge:start -->"
README_END = "<!-- bench-bridge:end -->"
PROXIES = ("toolwire bridge", "litellm proxy")
TARGETS = ("straight", *PROXIES)
ARGUMENTS = {
    "file_path": "/srv/app/src/handlers/orders.py",
    "old_string": "    return total\n",
    "new_string": "    # Rounded to the cent, as the invoice shows it.\n"
    + "    return round(total, 2)  # see the ledger's rules\n" * 40,
}
SCENARIO = {
    "name": "bench",
    "turns": [
        {
            "text": "I will change the rounding in the orders handler.",
            "tool_calls": [{"name": "Edit", "arguments": ARGUMENTS}],
            "chunk_size": 16,
            "delay": 0,
        }
    ],
}
TOOLS = [
    {
        "name": "Edit",
        "description": "Replace a string in a file.",
        "input_schema": {
            "type": "object",
            "properties": {k: {"type": "string"} for k in ARGUMENTS},
            "required": list(ARGUMENTS),
        },
    }
]
MESSAGES_BODY = {
    "model": "bench",
    "max_tokens": 4096,
    "stream": True,
    "tools": TOOLS,
    "messages": [{"role": "user", "content": "Round the order totals to the cent."}],
}
CHAT_BODY = {
    "model": "bench",
    "stream": True,
    "messages": [{"role": "user", "content": "Round the order totals to the cent."}],
}
READY_SECONDS = 180.0
"""How long litellm's proxy may take to start (it imports a great deal)."""


BRIDGE = ("bridge", "--serve", "anthropic-messages", "--upstream", "openai-chat")
ADDRESS = ("--host", "127.0.0.1", "--port")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def litellm_proxy(upstream_v1: str, key: str) -> Iterator[tuple[str, int]]:
    """litellm's proxy in its own process, on ``upstream_v1``; its URL and pid."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.json"  # YAML reads JSON
        config.write_text(
            json.dumps(
                {
                    "model_list": [
                        {
                            "model_name": "bench",
                            "litellm_params": {
                                "model": "openai/bench",
                                "api_base": upstream_v1,
                                "api_key": "sk-bench",
                            },
                        }
                    ],
                    "litellm_settings": {"telemetry": False},
                }
            )
        )
        port = _free_port()
        script = "import sys; from litellm_cli.main import proxy_server; sys.exit(proxy_server())"
        process = subprocess.Popen(
            [sys.executable, "-c", script, "--config", str(config), *ADDRESS, str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # No price list from the internet at start; the key its proxy requires.
            env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_MASTER_KEY=key),
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(url + "/health/liveliness", process)
            yield url, process.pid
        finally:
            process.terminate()
            process.wait(timeout=30)


def _wait_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"litellm's proxy exited ({process.returncode})")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"litellm's proxy did not answer {url} in {READY_SECONDS:.0f} s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Target:
    """One way to ask for the answer: its URL, body and headers."""

    def __init__(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        self.url, self.body, self.headers = url, body, headers
        self.delta = b"content_block_delta" if "tools" in body else b'"delta"'

    def ask(self, client: httpx.Client) -> tuple[float, float, bytes]:
        """Seconds to the first body byte and to the first delta; the whole body."""
        started = time.perf_counter()
        first = delta = 0.0
        body = bytearray()
        with client.stream("POST", self.url, json=self.body, headers=self.headers) as response:
            for piece in response.iter_raw():
                if not body:
                    first = time.perf_counter() - started
                body += piece
                if not delta and self.delta in body:
                    delta = time.perf_counter() - started
        if response.status_code != 200:
            raise RuntimeError(f"{self.url} answered {response.status_code}: {bytes(body)[:200]!r}")
        return first, delta, bytes(body)


def _events(body: bytes) -> list[dict[str, Any]]:
    out = []
    for line in body.decode().splitlines():
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            out.append(json.loads(line[5:]))
    return out


def chat_call(body: bytes) -> tuple[str, dict[str, Any], int]:
    """The streamed Chat answer's tool call (name, arguments) and its chunk count."""
    events = _events(body)
    name, arguments = "", ""
    for event in events:
        for choice in event.get("choices", []):
            for call in choice.get("delta", {}).get("tool_calls") or []:
                name += call.get("function", {}).get("name") or ""
                arguments += call.get("function", {}).get("arguments") or ""
    return name, json.loads(arguments), len(events)


def messages_call(body: bytes) -> tuple[str, dict[str, Any]]:
    """The streamed Messages answer's tool_use block (name, input)."""
    name, partial, stop = "", "", ""
    for event in _events(body):
        if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
            name = event["content_block"]["name"]
        elif (
            event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta"
        ):
            partial += event["delta"]["partial_json"]
        elif event["type"] == "message_delta":
            stop = event["delta"].get("stop_reason") or stop
    if stop != "tool_use":
        raise RuntimeError(f"the answer ended {stop!r}, not tool_use")
    return name, json.loads(partial)


def check(targets: dict[str, Target], client: httpx.Client) -> int:
    """Every proxy relays the upstream's call; the upstream's chunks per answer."""
    name, arguments, chunks = chat_call(targets["straight"].ask(client)[2])
    if (name, arguments) != ("Edit", ARGUMENTS):
        raise RuntimeError("the upstream did not answer the scripted call")
    for proxy in PROXIES:
        got = messages_call(targets[proxy].ask(client)[2])
        if got != (name, arguments):
            raise RuntimeError(f"{proxy} relayed {got[0]!r} with other arguments")
    return chunks


def first_bytes(
    targets: dict[str, Target], client: httpx.Client, rounds: int, warmup: int
) -> dict[str, dict[str, list[float]]]:
    """Milliseconds to the first byte and to the first delta, per target, round by round."""
    times: dict[str, dict[str, list[float]]] = {
        name: {"first_byte": [], "first_delta": []} for name in TARGETS
    }
    order = list(TARGETS)
    for n in range(warmup + rounds):
        random.shuffle(order)
        for name in order:
            first, delta, _ = targets[name].ask(client)
            if n >= warmup:
                times[name]["first_byte"].append(first * 1000)
                times[name]["first_delta"].append(delta * 1000)
    return times


def cpu_per_chunk(
    target: Target, pid: int, client: httpx.Client, requests: int, chunks: int
) -> dict[str, float]:
    """The proxy's own CPU over ``requests`` answers, less its idle CPU, per chunk."""
    idle_from, idle_started = cpu_seconds(pid), time.perf_counter()
    time.sleep(2.0)
    idle_rate = (cpu_seconds(pid) - idle_from) / (time.perf_counter() - idle_started)
    before, started = cpu_seconds(pid), time.perf_counter()
    for _ in range(requests):
        target.ask(client)
    time.sleep(0.5)  # whatever it does once an answer is sent (logging) counts too
    wall = time.perf_counter() - started
    busy = cpu_seconds(pid) - before - idle_rate * wall
    return {
        "cpu_s": busy,
        "idle_cpu_per_s": idle_rate,
        "per_chunk_us": busy / (requests * chunks) * 1e6,
        "per_request_ms": busy / requests * 1000,
    }


def measure(rounds: int, warmup: int, requests: int) -> dict[str, Any]:
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        scenario = folder / "scenario.json"
        scenario.write_text(json.dumps(SCENARIO))
        upstream = stack.enter_context(
            toolwire("serve", "--scenario", str(scenario), "--port", "0")
        )
        upstream_v1 = upstream + "/v1"
        bridge_args = [*BRIDGE, "--base-url", upstream_v1, "--port", "0"]
        bridge, bridge_pid = stack.enter_context(toolwire_process(*bridge_args))
        key = "sk-" + secrets.token_hex(32)
        litellm, litellm_pid = stack.enter_context(litellm_proxy(upstream_v1, key))
        messages = {"anthropic-version": "2023-06-01", "x-api-key": key}
        targets = {
            "straight": Target(upstream_v1 + "/chat/completions", CHAT_BODY, {}),
            "toolwire bridge": Target(bridge + "/v1/messages", MESSAGES_BODY, messages),
            "litellm proxy": Target(litellm + "/v1/messages", MESSAGES_BODY, messages),
        }
        client = stack.enter_context(httpx.Client(timeout=60))
        pids = {"toolwire bridge": bridge_pid, "litellm proxy": litellm_pid}
        chunks = check(targets, client)
        times = first_bytes(targets, client, rounds, warmup)
        cpu = {
            name: cpu_per_chunk(targets[name], pids[name], client, requests, chunks)
            for name in PROXIES
        }
    return {"chunks": chunks, "requests": requests, "times": times, "cpu": cpu}


def _paired(rows: list[float], straight: list[float]) -> float:
    return statistics.median(t - s for t, s in zip(rows, straight, strict=True))


def summary(measured: dict[str, Any]) -> dict[str, Any]:
    times, cpu = measured["times"], measured["cpu"]
    out: dict[str, Any] = {
        "rounds": len(times["straight"]["first_byte"]),
        "chunks": measured["chunks"],
        "requests": measured["requests"],
    }
    for name in TARGETS:
        row: dict[str, Any] = {}
        for kind in ("first_byte", "first_delta"):
            row[f"{kind}_median_ms"] = statistics.median(times[name][kind])
            if name != "straight":
                row[f"{kind}_added_ms"] = _paired(times[name][kind], times["straight"][kind])
        if name in cpu:
            row.update(cpu[name])
        out[name] = row
    bridge, litellm = out["toolwire bridge"], out["litellm proxy"]
    out["cpu_ratio"] = litellm["per_chunk_us"] / bridge["per_chunk_us"]
    out["added_ratio"] = litellm["first_delta_added_ms"] / bridge["first_delta_added_ms"]
    return out


def render(result: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        f"`{meta['command']}` on {meta['machine']}, Python {meta['python']}, "
        f"{meta['versions']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after ({result['rounds']} rounds of first bytes, "
        f"{result['requests']} answers per proxy for CPU; a shared machine).",
        "",
        f"Each answer: a sentence, then one tool call with {len(json.dumps(ARGUMENTS)):,} "
        f"characters of arguments, {result['chunks']} upstream chunks (OpenAI Chat), "
        "served as Anthropic Messages.",
        "",
        "| | CPU per upstream chunk | CPU per answer | first byte: added | first delta: added |",
        "|---|---|---|---|---|",
    ]
    straight = result["straight"]
    lines.append(
        f"| straight (the upstream) | - | - | {straight['first_byte_median_ms']:.2f} ms "
        f"(median) | {straight['first_delta_median_ms']:.2f} ms (median) |"
    )
    bridge = result["toolwire bridge"]
    for name in PROXIES:
        row = result[name]
        times = f"{row['per_chunk_us'] / bridge['per_chunk_us']:.1f}× the bridge"
        lines.append(
            f"| {name} | {row['per_chunk_us']:.1f} µs ({times}) | "
            f"{row['per_request_ms']:.2f} ms | {row['first_byte_added_ms']:+.2f} ms | "
            f"{row['first_delta_added_ms']:+.2f} ms |"
        )
    lines += [
        "",
        f"Headline: litellm's proxy spends {result['cpu_ratio']:.1f}× the bridge's CPU per "
        f"streamed chunk and adds {result['added_ratio']:.1f}× its time to the first delta.",
    ]
    return "\n".join(lines)


def _versions() -> str:
    return ", ".join(f"{d} {metadata.version(d)}" for d in ("toolwire", "litellm"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="measured first-byte rounds")
    parser.add_argument("--warmup", type=int, default=20, help="rounds not measured")
    parser.add_argument("--requests", type=int, default=200, help="answers per proxy for CPU")
    parser.add_argument("--json", type=Path, help="save the raw figures here")
    parser.add_argument("--readme", type=Path, help="put the table in this page")
    args = parser.parse_args(argv)
    load_before = _load()
    measured = measure(args.rounds, args.warmup, args.requests)
    result = summary(measured)
    options = [
        f"--{name} {getattr(args, name)}"
        for name, default in (("rounds", 200), ("requests", 200))
        if getattr(args, name) != default
    ]
    meta = {
        "command": " ".join(["python bench/bench_bridge.py", *options]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "python": platform.python_version(),
        "versions": _versions(),
        "load_before": load_before,
        "load_after": _load(),
    }
    text = render(result, meta)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "summary": result, **measured}))
    if args.readme:
        update_readme(args.readme, text, README_START, README_END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
