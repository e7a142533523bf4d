"""Synthetic streamed tool calls for the benchmarks: the generator and its fallback.

The benchmark prefers an external ``gen.py`` (``--gen PATH``, or
``../shared/bench/gen.py`` next to the repository) whose ``openai_sse`` and
``anthropic_sse`` return ``(body_bytes, calls)``. A clone without it uses the
built-in generator below, which produces the same wire shapes:

* OpenAI chat completions: a role chunk, then per call a chunk with
  ``index``/``id``/``type``/``name`` and empty ``arguments``, then one chunk per
  argument fragment, a ``finish_reason`` chunk, a usage chunk and ``[DONE]``;
* Anthropic Messages: ``message_start``, ``ping``, per call a
  ``content_block_start`` (``tool_use``), ``input_json_delta`` fragments and
  ``content_block_stop``, then ``message_delta`` and ``message_stop``;
* Bedrock ConverseStream (built in only): AWS event-stream messages
  ``messageStart``, per call a ``contentBlockStart`` (``toolUse``),
  ``toolUse.input`` fragments and ``contentBlockStop``, then ``messageStop``
  and ``metadata``, each payload with its ``"p"`` padding, as Bedrock sends them.

Arguments are ``{"path": ..., "content": <source code>}`` of exactly
``n_bytes`` UTF-8 bytes, with escapes (quotes, backslashes, tabs, newlines)
and 2-, 3- and 4-byte characters, cut into fragments of ``c - 2`` to ``c + 2``
characters that may split an escape but never a code point.
"""

from __future__ import annotations

import importlib.util
import json
import random
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "DEFAULT_GEN",
    "Generator",
    "anthropic_sse",
    "bedrock_converse",
    "load_generator",
    "make_arguments",
    "openai_sse",
]

Calls = list[dict[str, str]]
StreamFn = Callable[..., tuple[bytes, Calls]]

_REPO = Path(__file__).resolve().parents[1]
DEFAULT_GEN = _REPO.parent / "shared" / "bench" / "gen.py"
"""Where a checkout next to the shared tree finds the common generator."""


def _default_gen() -> Path | None:
    # ``../shared/bench/gen.py`` from the repository, or from any directory
    # above it (a worktree nested one level deeper still finds it).
    for parent in _REPO.parents:
        candidate = parent / "shared" / "bench" / "gen.py"
        if candidate.is_file():
            return candidate
    return None


# Lines of source code in several languages: each one exercises JSON escapes
# (\" \\ \n \t) and multi-byte UTF-8 somewhere.
_LINES = (
    "import os, sys  # utilitaires réseau\n",
    'def render(user: str) -> str:\n    return f"<p class=\\"x\\">Grüße, {user} ✨</p>"\n',
    "\tif path.startswith('C:\\\\Temp'):\n\t\tpath = path.replace('\\\\', '/')\n",
    "PATTERN = re.compile(r'^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$')  # e-mail\n",
    'let greeting = "こんにちは、世界"; // 🌏 hello\n',
    'fmt.Printf("%-10s|%5.2f€\\n", name, price)\n',
    "UPDATE items SET label = 'Ελληνικά' WHERE id = 7; -- ✔ done\n",
    '    raise ValueError("unexpected \\"}\\" at column 3")\n',
    "echo 'Привет' | tr -d '\\r' > /tmp/out.txt  # 🐚\n",
    "}\n\n",
)

_COMPACT: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, **_COMPACT)


def make_arguments(n_bytes: int, seed: int = 0) -> str:
    """A JSON object ``{"path", "content"}`` of exactly ``n_bytes`` UTF-8 bytes."""
    rng = random.Random(seed)
    path = f"src/app/mod_{rng.randrange(10_000):04d}.py"
    overhead = len(_dumps({"path": path, "content": ""}).encode())
    if n_bytes < overhead:
        raise ValueError(f"n_bytes must be at least {overhead}")
    budget = n_bytes - overhead
    lines: list[str] = []
    used = 0
    while True:
        line = _LINES[rng.randrange(len(_LINES))]
        cost = len(_dumps(line).encode()) - 2  # encoded size inside the string
        if used + cost > budget:
            break
        lines.append(line)
        used += cost
    content = "".join(lines) + "#" * (budget - used)  # ASCII pads to the exact size
    text = _dumps({"path": path, "content": content})
    assert len(text.encode()) == n_bytes
    return text


def _fragments(text: str, c: int, rng: random.Random) -> list[str]:
    low, high = max(1, c - 2), c + 2
    out: list[str] = []
    i = 0
    while i < len(text):
        step = rng.randint(low, high)
        out.append(text[i : i + step])
        i += step
    return out


def _calls(n_bytes: int, k: int, seed: int, prefix: str) -> Calls:
    rng = random.Random(seed)
    return [
        {
            "id": f"{prefix}{rng.getrandbits(64):016x}",
            "name": "write_file",
            "arguments": make_arguments(n_bytes, seed=seed * 100 + i),
        }
        for i in range(k)
    ]


def _data(obj: Any) -> bytes:
    return b"data: " + _dumps(obj).encode() + b"\n\n"


def openai_sse(n_bytes: int, k: int = 1, c: int = 6, seed: int = 0) -> tuple[bytes, Calls]:
    """An OpenAI chat-completions body with ``k`` tool calls of ``n_bytes`` each."""
    rng = random.Random(seed + 1)
    calls = _calls(n_bytes, k, seed, "call_")
    head = {
        "id": f"chatcmpl-{rng.getrandbits(64):016x}",
        "object": "chat.completion.chunk",
        "created": 1_760_000_000,
        "model": "gpt-4.1-2025-04-14",
        "system_fingerprint": "fp_0000000000",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _data({**head, "choices": [choice], "usage": None})

    out = [chunk({"role": "assistant", "content": None, "refusal": None})]
    pieces = 0
    for index, call in enumerate(calls):
        function = {"name": call["name"], "arguments": ""}
        first = {"index": index, "id": call["id"], "type": "function", "function": function}
        out.append(chunk({"tool_calls": [first]}))
        for piece in _fragments(call["arguments"], c, rng):
            pieces += 1
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 100, "completion_tokens": pieces, "total_tokens": 100 + pieces}
    out.append(_data({**head, "choices": [], "usage": usage}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out), calls


def _event(name: str, obj: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\n" + _data({"type": name, **obj})


def anthropic_sse(n_bytes: int, k: int = 1, c: int = 6, seed: int = 0) -> tuple[bytes, Calls]:
    """An Anthropic Messages body with ``k`` ``tool_use`` blocks of ``n_bytes`` each."""
    rng = random.Random(seed + 2)
    calls = _calls(n_bytes, k, seed, "toolu_")
    message: dict[str, Any] = {
        "id": f"msg_{rng.getrandbits(64):016x}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1},
    }
    out = [_event("message_start", {"message": message}), _event("ping", {})]
    pieces = 0
    for index, call in enumerate(calls):
        block = {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}
        out.append(_event("content_block_start", {"index": index, "content_block": block}))
        for piece in ["", *_fragments(call["arguments"], c, rng)]:
            pieces += 1
            delta = {"type": "input_json_delta", "partial_json": piece}
            out.append(_event("content_block_delta", {"index": index, "delta": delta}))
        out.append(_event("content_block_stop", {"index": index}))
    stop = {"stop_reason": "tool_use", "stop_sequence": None}
    out.append(_event("message_delta", {"delta": stop, "usage": {"output_tokens": pieces}}))
    out.append(_event("message_stop", {}))
    return b"".join(out), calls


def _aws_message(event: str, obj: dict[str, Any]) -> bytes:
    """One AWS event-stream message: string headers, a JSON payload, both CRCs."""
    headers = b""
    for name, value in ((":event-type", event), (":content-type", "application/json"),
                        (":message-type", "event")):  # fmt: skip
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    payload = _dumps(obj).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_converse(n_bytes: int, k: int = 1, c: int = 6, seed: int = 0) -> tuple[bytes, Calls]:
    """A Bedrock ConverseStream body with ``k`` ``toolUse`` blocks of ``n_bytes`` each."""
    rng = random.Random(seed + 3)
    calls = _calls(n_bytes, k, seed, "tooluse_")
    pad = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

    def event(name: str, **obj: Any) -> bytes:
        return _aws_message(name, {**obj, "p": pad[: rng.randint(1, len(pad))]})

    out = [event("messageStart", role="assistant")]
    pieces = 0
    for index, call in enumerate(calls):
        start = {"toolUse": {"name": call["name"], "toolUseId": call["id"]}}
        out.append(event("contentBlockStart", contentBlockIndex=index, start=start))
        for piece in _fragments(call["arguments"], c, rng):
            pieces += 1
            delta = {"toolUse": {"input": piece}}
            out.append(event("contentBlockDelta", contentBlockIndex=index, delta=delta))
        out.append(event("contentBlockStop", contentBlockIndex=index))
    out.append(event("messageStop", stopReason="tool_use"))
    usage = {"inputTokens": 100, "outputTokens": pieces, "totalTokens": 100 + pieces}
    out.append(event("metadata", metrics={"latencyMs": 100}, usage=usage))
    return b"".join(out), calls


@dataclass(frozen=True)
class Generator:
    """The stream functions the benchmark uses, and where they come from."""

    openai_sse: StreamFn
    anthropic_sse: StreamFn
    description: str

    def stream(self, fmt: str, n_bytes: int, k: int) -> tuple[bytes, Calls]:
        """The body and ground truth for ``fmt`` (``openai``, ``anthropic`` or
        ``bedrock``, always from the built-in generator)."""
        if fmt == "bedrock":
            return bedrock_converse(n_bytes, k=k, c=6)
        fn = self.openai_sse if fmt == "openai" else self.anthropic_sse
        return fn(n_bytes, k=k, c=6)


def _load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_gen", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_generator(path: Path | None = None, *, builtin: bool = False) -> Generator:
    """The external generator at ``path`` (or the default place), else the built-in one.

    An explicit ``path`` that does not exist is an error rather than a silent
    fallback: the figures would otherwise come from different streams than asked.
    """
    if builtin:
        return Generator(openai_sse, anthropic_sse, "the built-in generator (`bench/_streams.py`)")
    if path is not None and not path.is_file():
        raise FileNotFoundError(f"--gen {path}: no such file")
    candidate = path or _default_gen()
    if candidate is not None:
        module = _load_module(candidate)
        where = f"`{path}`" if path else "the shared generator (`../shared/bench/gen.py`)"
        return Generator(module.openai_sse, module.anthropic_sse, where)
    return Generator(
        openai_sse,
        anthropic_sse,
        "the built-in generator (`bench/_streams.py`; no `../shared/bench/gen.py` found)",
    )
