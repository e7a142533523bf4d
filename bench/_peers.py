"""The benchmark's runners: toolwire, a naive loop, and the libraries users would pick.

Every runner takes the raw response body (bytes, as read from the socket) and
returns the parsed final arguments of every tool call, in call order. The
parsing of each SSE payload is part of every runner's work: the SDKs parse SSE
themselves, so a runner that started from pre-parsed dicts would get a head
start the others do not.

* ``naive``: split lines, ``json.loads`` each ``data:`` payload, join the
  argument fragments per call, one ``json.loads`` at the end. No partial
  values: the floor any Python decoder is measured against.
* ``toolwire`` / ``toolwire (no partial)``: ``StreamDecoder`` fed 64 KiB
  pieces (what an HTTP client hands over), reading ``ToolCallDelta.partial``
  of every delta in the first case.
* ``openai SDK``: ``openai.Stream`` over an in-memory ``httpx.Response`` (the
  SDK's own SSE decoder and chunk construction), wrapped in
  ``ChatCompletionStream`` whose ``ChatCompletionStreamState`` is given a
  strict ``pydantic_function_tool``: what ``client.chat.completions.stream()``
  does, minus the socket. It re-parses the whole argument buffer per chunk.
* ``anthropic SDK``: ``anthropic.Stream`` over an in-memory response, wrapped
  in ``MessageStream`` (what ``client.messages.stream()`` returns); it also
  re-parses the tool input buffer per delta.
* ``langchain-core``: one ``AIMessageChunk`` per payload with
  ``tool_call_chunks`` (the mapping langchain-openai and langchain-anthropic
  make), folded with ``+``; each sum re-parses partial arguments.
* ``litellm``: ``ModelResponseStream`` per OpenAI payload (Anthropic payloads
  go through litellm's own Anthropic chunk parser), then
  ``litellm.stream_chunk_builder`` and a ``json.loads`` of each call's
  arguments. litellm gives no partial values.
* ``jiter partial re-parse``: the per-chunk ``jiter.from_json(buffer,
  partial_mode="trailing-strings")`` most libraries do, alone, as a reference.

A runner whose library is not installed is simply absent from
:func:`available_runners`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["FORMATS", "PIECE", "Runner", "available_runners", "missing_runners"]

FORMATS = ("openai", "anthropic", "bedrock")
SSE_FORMATS = ("openai", "anthropic")
"""The formats the peer libraries read here (Bedrock's event stream: toolwire
and the naive loop only)."""
PIECE = 64 * 1024
"""Size of the pieces toolwire is fed: a typical HTTP client read."""

_LOOPBACK = "http://127.0.0.1:9"  # never contacted: the SDK clients only parse bodies here

RunFn = Callable[[bytes], list[Any]]


@dataclass(frozen=True)
class Runner:
    """One way of decoding a body, for one wire format."""

    name: str
    fmt: str
    run: RunFn
    partial: bool
    """Whether it produces parsed partial arguments while streaming."""
    note: str = ""


def _sdk_http(sdk: str) -> Any:
    """The HTTP package an SDK builds its responses with (``httpx2`` in recent
    releases, ``httpx`` before): the benchmark hands it a response of that kind."""
    base = importlib.import_module(f"{sdk}._base_client")
    return getattr(base, "httpx2", None) or base.httpx


def _pieces(body: bytes) -> list[bytes]:
    return [body[i : i + PIECE] for i in range(0, len(body), PIECE)]


def _data_lines(body: bytes) -> list[bytes]:
    return [line[6:] for line in body.split(b"\n") if line.startswith(b"data: ")]


# -- naive ----------------------------------------------------------------------------


def naive_openai(body: bytes) -> list[Any]:
    """Join fragments per call index, parse once at the end."""
    loads = json.loads
    fragments: dict[int, list[str]] = {}
    for line in body.split(b"\n"):
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        chunk = loads(line[6:])
        for choice in chunk["choices"]:
            for call in choice["delta"].get("tool_calls") or ():
                text = call.get("function", {}).get("arguments")
                if text:
                    fragments.setdefault(call["index"], []).append(text)
    return [loads("".join(fragments[i])) for i in sorted(fragments)]


def naive_anthropic(body: bytes) -> list[Any]:
    """Join ``input_json_delta`` pieces per block index, parse once at the end."""
    loads = json.loads
    fragments: dict[int, list[str]] = {}
    for line in body.split(b"\n"):
        if not line.startswith(b"data: "):
            continue
        event = loads(line[6:])
        if event["type"] == "content_block_start":
            if event["content_block"]["type"] == "tool_use":
                fragments[event["index"]] = []
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "input_json_delta":
                fragments[event["index"]].append(delta["partial_json"])
    return [loads("".join(fragments[i]) or "{}") for i in sorted(fragments)]


def naive_bedrock(body: bytes) -> list[Any]:
    """Cut the event-stream messages (both CRCs checked, as any reader must),
    join ``toolUse.input`` pieces per block index, parse once at the end."""
    loads, crc32, unpack_from = json.loads, zlib.crc32, struct.unpack_from
    fragments: dict[int, list[str]] = {}
    pos, end = 0, len(body)
    while pos < end:
        total, headers, prelude_crc = unpack_from(">III", body, pos)
        if crc32(body[pos : pos + 8]) != prelude_crc:
            raise ValueError("prelude CRC")
        (message_crc,) = unpack_from(">I", body, pos + total - 4)
        if crc32(body[pos : pos + total - 4]) != message_crc:
            raise ValueError("message CRC")
        event = loads(body[pos + 12 + headers : pos + total - 4])
        pos += total
        delta = event.get("delta")
        if delta is not None and "toolUse" in delta:
            fragments.setdefault(event["contentBlockIndex"], []).append(delta["toolUse"]["input"])
        elif "start" in event and "toolUse" in event["start"]:
            fragments[event["contentBlockIndex"]] = []
    return [loads("".join(fragments[i]) or "{}") for i in sorted(fragments)]


# -- toolwire -------------------------------------------------------------------------


def _toolwire(dialect: str, *, partial: bool) -> RunFn:
    import toolwire

    delta_type = toolwire.ToolCallDelta

    def run(body: bytes) -> list[Any]:
        decoder = toolwire.StreamDecoder(dialect)
        feed = decoder.feed
        value: Any = None
        for i in range(0, len(body), PIECE):
            events = feed(body[i : i + PIECE])
            if partial:
                for event in events:
                    if type(event) is delta_type:
                        value = event.partial  # what a UI would render
        for event in decoder.close():
            if partial and type(event) is delta_type:
                value = event.partial
        del value
        result = decoder.result()
        if result.error is not None:
            raise result.error
        return [call.arguments for call in result.choices[0].tool_calls]

    return run


def toolwire_partials(body: bytes, dialect: str) -> list[tuple[int, Any]]:
    """Every ``(index, partial)`` the decoder reports, each value copied (for tests)."""
    import copy

    import toolwire

    decoder = toolwire.StreamDecoder(dialect)
    out: list[tuple[int, Any]] = []
    for piece in [*_pieces(body), b""]:
        events = decoder.feed(piece) if piece else decoder.close()
        for event in events:
            if isinstance(event, toolwire.ToolCallDelta):
                out.append((event.index, copy.deepcopy(event.partial)))
    return out


# -- openai SDK -----------------------------------------------------------------------


def _openai_sdk() -> RunFn:
    import openai
    import pydantic
    from openai.lib.streaming.chat import ChatCompletionStream
    from openai.types.chat import ChatCompletionChunk

    class WriteFile(pydantic.BaseModel):
        path: str
        content: str

    tool = openai.pydantic_function_tool(WriteFile, name="write_file")
    client = openai.OpenAI(api_key="sk-bench-not-a-key", base_url=_LOOPBACK + "/v1")
    http = _sdk_http("openai")
    request = http.Request("POST", _LOOPBACK + "/v1/chat/completions")
    headers = {"content-type": "text/event-stream"}

    def run(body: bytes) -> list[Any]:
        response = http.Response(200, headers=headers, content=iter(_pieces(body)), request=request)
        raw = openai.Stream(cast_to=ChatCompletionChunk, response=response, client=client)
        stream: ChatCompletionStream[None] = ChatCompletionStream(
            raw_stream=raw, response_format=openai.omit, input_tools=[tool]
        )
        for _event in stream:
            pass  # events carry ``parsed_arguments``, the partial value
        completion = stream.get_final_completion()
        calls = completion.choices[0].message.tool_calls or []
        out: list[Any] = []
        for call in calls:
            parsed = call.function.parsed_arguments
            out.append(parsed.model_dump() if isinstance(parsed, pydantic.BaseModel) else parsed)
        return out

    return run


# -- anthropic SDK --------------------------------------------------------------------


def _anthropic_sdk() -> RunFn:
    import anthropic
    from anthropic.lib.streaming import MessageStream
    from anthropic.types import RawMessageStreamEvent

    http = _sdk_http("anthropic")
    client = anthropic.Anthropic(api_key="sk-ant-bench-not-a-key", base_url=_LOOPBACK)
    request = http.Request("POST", _LOOPBACK + "/v1/messages")
    headers = {"content-type": "text/event-stream"}

    def run(body: bytes) -> list[Any]:
        response = http.Response(200, headers=headers, content=iter(_pieces(body)), request=request)
        event_type: Any = RawMessageStreamEvent  # a union: what the SDK itself passes
        raw: Any = anthropic.Stream(cast_to=event_type, response=response, client=client)
        stream: Any = MessageStream(raw, output_format=anthropic.NOT_GIVEN)
        for _event in stream:
            pass  # the snapshot's tool input is the partial value
        message = stream.get_final_message()
        return [block.input for block in message.content if block.type == "tool_use"]

    return run


# -- langchain-core -------------------------------------------------------------------


def _langchain(fmt: str) -> RunFn:
    from langchain_core.messages import AIMessageChunk
    from langchain_core.messages.tool import tool_call_chunk

    def openai_chunks(body: bytes) -> list[AIMessageChunk]:
        out: list[AIMessageChunk] = []
        for line in _data_lines(body):
            if line == b"[DONE]":
                continue
            data = json.loads(line)
            for choice in data["choices"]:
                delta = choice["delta"]
                calls = [
                    tool_call_chunk(
                        name=(call.get("function") or {}).get("name"),
                        args=(call.get("function") or {}).get("arguments"),
                        id=call.get("id"),
                        index=call.get("index"),
                    )
                    for call in delta.get("tool_calls") or ()
                ]
                out.append(
                    AIMessageChunk(content=delta.get("content") or "", tool_call_chunks=calls)
                )
        return out

    def anthropic_chunks(body: bytes) -> list[AIMessageChunk]:
        out: list[AIMessageChunk] = []
        for line in _data_lines(body):
            event = json.loads(line)
            kind = event["type"]
            if kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
                block = event["content_block"]
                call = tool_call_chunk(
                    name=block["name"], args="", id=block["id"], index=event["index"]
                )
                out.append(AIMessageChunk(content="", tool_call_chunks=[call]))
            elif kind == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
                call = tool_call_chunk(
                    name=None, args=event["delta"]["partial_json"], id=None, index=event["index"]
                )
                out.append(AIMessageChunk(content="", tool_call_chunks=[call]))
            elif kind in ("message_start", "message_delta"):
                out.append(AIMessageChunk(content=""))
        return out

    to_chunks = openai_chunks if fmt == "openai" else anthropic_chunks

    def run(body: bytes) -> list[Any]:
        # Chunks are made one at a time and folded as they come, as a
        # ``for chunk in model.stream(...): full = full + chunk`` loop does.
        full: AIMessageChunk | None = None
        for chunk in to_chunks(body):
            full = chunk if full is None else full + chunk
        assert full is not None
        return [call["args"] for call in full.tool_calls]

    return run


# -- litellm --------------------------------------------------------------------------


def _import_litellm() -> Any:
    # litellm fetches a model price list from the internet at import unless
    # told to use its bundled copy; the benchmark makes no network traffic.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    return litellm


def _litellm(fmt: str) -> RunFn:
    litellm = _import_litellm()
    from litellm.types.utils import ModelResponseStream

    def openai_chunks(body: bytes) -> list[Any]:
        return [
            ModelResponseStream(**json.loads(line))
            for line in _data_lines(body)
            if line != b"[DONE]"
        ]

    def anthropic_chunks(body: bytes) -> list[Any]:
        from litellm.llms.anthropic.chat.handler import ModelResponseIterator

        lines = (b"data: " + line for line in _data_lines(body))
        iterator = ModelResponseIterator(lines, sync_stream=True)
        return [chunk for chunk in iterator if isinstance(chunk, ModelResponseStream)]

    to_chunks = openai_chunks if fmt == "openai" else anthropic_chunks

    def run(body: bytes) -> list[Any]:
        response = litellm.stream_chunk_builder(to_chunks(body))
        calls = response.choices[0].message.tool_calls or []
        return [json.loads(call.function.arguments) for call in calls]

    return run


# -- jiter ----------------------------------------------------------------------------


def _jiter(fmt: str) -> RunFn:
    from jiter import from_json

    def fragments_openai(body: bytes) -> Any:
        for line in _data_lines(body):
            if line == b"[DONE]":
                continue
            for choice in json.loads(line)["choices"]:
                for call in choice["delta"].get("tool_calls") or ():
                    text = call.get("function", {}).get("arguments")
                    if text:
                        yield call["index"], text

    def fragments_anthropic(body: bytes) -> Any:
        for line in _data_lines(body):
            event = json.loads(line)
            if event["type"] == "content_block_delta":
                delta = event["delta"]
                if delta["type"] == "input_json_delta" and delta["partial_json"]:
                    yield event["index"], delta["partial_json"]

    fragments = fragments_openai if fmt == "openai" else fragments_anthropic

    def run(body: bytes) -> list[Any]:
        buffers: dict[int, bytes] = {}
        partial: dict[int, Any] = {}
        for index, text in fragments(body):
            buffer = buffers.get(index, b"") + text.encode()
            buffers[index] = buffer
            partial[index] = from_json(buffer, partial_mode="trailing-strings")
        # The last partial value of a complete buffer is the final value.
        return [partial[i] for i in sorted(partial)]

    return run


# -- registry -------------------------------------------------------------------------

_API = {"openai": "openai-chat", "anthropic": "anthropic-messages", "bedrock": "bedrock-converse"}
_NAIVE = {"openai": naive_openai, "anthropic": naive_anthropic, "bedrock": naive_bedrock}

# name -> (module that must be importable, formats, factory(fmt), partial values?, note)
_SPECS: list[tuple[str, str | None, tuple[str, ...], Callable[[str], RunFn], bool, str]] = [
    (
        "naive",
        None,
        FORMATS,
        lambda fmt: _NAIVE[fmt],
        False,
        "",
    ),
    ("toolwire", None, FORMATS, lambda fmt: _toolwire(_API[fmt], partial=True), True, ""),
    (
        "toolwire (no partial)",
        None,
        FORMATS,
        lambda fmt: _toolwire(_API[fmt], partial=False),
        False,
        "",
    ),
    ("openai SDK", "openai", ("openai",), lambda fmt: _openai_sdk(), True, ""),
    ("anthropic SDK", "anthropic", ("anthropic",), lambda fmt: _anthropic_sdk(), True, ""),
    ("langchain-core", "langchain_core", SSE_FORMATS, _langchain, True, ""),
    ("litellm", "litellm", SSE_FORMATS, _litellm, False, ""),
    ("jiter partial re-parse", "jiter", SSE_FORMATS, _jiter, True, ""),
]

RUNNER_NAMES = tuple(spec[0] for spec in _SPECS)


def _installed(module: str | None) -> bool:
    return module is None or importlib.util.find_spec(module) is not None


def available_runners(fmt: str) -> list[Runner]:
    """The runners for ``fmt`` whose libraries are installed, in table order."""
    return [
        Runner(name, fmt, factory(fmt), partial, note)
        for name, module, formats, factory, partial, note in _SPECS
        if fmt in formats and _installed(module)
    ]


def missing_runners(fmt: str) -> list[str]:
    """Runners for ``fmt`` left out because their library is not installed."""
    return [
        f"{name} ({module} not installed)"
        for name, module, formats, _factory, _partial, _note in _SPECS
        if fmt in formats and not _installed(module)
    ]
