"""``toolwire inspect``: read a recorded stream the way seed 001 does by hand.

Without ``--json`` it prints, payload by payload, what the model produced
(text, reasoning, tool names, argument fragments) apart from what the
protocol added (ids, indexes, finish reasons, usage, end markers), then the
final tool calls. With ``--json`` it prints exactly one JSON object.
Exit status: 0 for a complete stream, 1 for a cut stream or an error event,
2 for bad usage, an unreadable file, or an input that is no stream at all
(binary, plain text, or one JSON body it cannot read). An empty input is a
stream cut before its first byte (status 1), and a single JSON body it can
read (a non-streamed response) is shown; both are named as such.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from typing_extensions import assert_never

from toolwire import _compat
from toolwire.cli._terminal import terminal_json, terminal_text
from toolwire.errors import UsageError
from toolwire.events import (
    ChoiceFinished,
    Event,
    PartReceived,
    ProviderNotice,
    ReasoningDelta,
    ServerToolCallReady,
    StreamEnded,
    StreamFailed,
    TextDelta,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
    UnknownItem,
    UsageReported,
)
from toolwire.stream.codecs import registered
from toolwire.stream.decoder import DecodedFrame, StreamDecoder
from toolwire.testing.reading import MAX_FILE_BYTES, read_file
from toolwire.types import StreamResult

__all__ = ["inspect"]


def _say(line: str) -> None:
    """Print one line of what a stream or a recording holds (the terminal sink)."""
    click.echo(terminal_text(line))


def _read(path: str) -> bytes:
    if path == "-":
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise click.UsageError(f"stdin holds more than {MAX_FILE_BYTES} bytes")
        return data
    try:
        return read_file(path, what="")
    except UsageError as exc:
        hint = " (a pipe or a device can be read as '-', stdin)" if "regular" in str(exc) else ""
        raise click.UsageError(f"{exc}{hint}") from None


def _decode(
    body: bytes, dialect: str, chunk_size: int | None
) -> tuple[StreamDecoder, list[DecodedFrame]]:
    decoder = StreamDecoder(dialect)
    frames: list[DecodedFrame] = []
    step = chunk_size or len(body) or 1
    for start in range(0, len(body), step):
        frames.extend(decoder.feed_frames(body[start : start + step]))
    frames.extend(decoder.close_frames())
    return decoder, frames


def _decode_chunks(chunks: list[bytes], dialect: str) -> tuple[StreamDecoder, list[DecodedFrame]]:
    decoder = StreamDecoder(dialect)
    frames: list[DecodedFrame] = []
    for chunk in chunks:
        frames.extend(decoder.feed_frames(chunk))
    frames.extend(decoder.close_frames())
    return decoder, frames


def _recorded_body(path: str) -> tuple[str | None, list[bytes]] | None:
    """A cassette sidecar's dialect and body chunks, or ``None`` for another
    file. A body that is not a stream is summed up in one line, and that is all."""
    from toolwire.testing.cassette import CassetteError, is_sidecar, load_exchange
    from toolwire.testing.summary import is_streamed, summarize

    if not is_sidecar(path):
        return None
    try:
        exchange = load_exchange(Path(path))
        if not is_streamed(exchange):
            _say(summarize(exchange))
            sys.exit(0 if exchange.response.status < 300 else 1)
        return exchange.dialect, [chunk for chunk, _ in exchange.response.iter_chunks()]
    except CassetteError as exc:
        raise click.UsageError(exc.message) from None


def _inspect_cassette(directory: str, as_json: bool) -> None:
    """One summary line per exchange (``--json``: one object per line)."""
    from toolwire.testing.cassette import Cassette, CassetteError
    from toolwire.testing.summary import summarize

    try:
        cassette = Cassette.load(directory)
        for exchange in cassette:
            line = summarize(exchange)
            if not as_json:
                _say(line)
                continue
            click.echo(
                terminal_json(
                    json.dumps(
                        {
                            "exchange": exchange.number,
                            "sidecar": exchange.sidecar.name,
                            "dialect": exchange.dialect,
                            "status": exchange.response.status,
                            "summary": line,
                        },
                        ensure_ascii=False,
                    )
                )
            )
    except CassetteError as exc:
        raise click.UsageError(exc.message) from None


def _not_a_stream(body: bytes, frames: list[DecodedFrame], result: StreamResult) -> str | None:
    """Why the input is no recorded stream, or ``None`` when it is one (an
    empty input is one: a response body cut before its first byte)."""
    if not body.strip():
        return None
    sample = body[:4096]
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # An AWS event stream is binary by design (its first byte is NUL).
        if exc.start < len(sample) - 3 and body[:1] != b"\x00":
            return "is binary, not a recorded stream (SSE, NDJSON or a JSON array)"
    if _one_json_body(body) and (result.error is not None or not any(f.data for f in frames)):
        return (
            "is one JSON body (a non-streamed response?), not a stream, and not one that "
            "toolwire reads whole: inspect reads streamed responses"
        )
    if not any(frame.data for frame in frames):
        return "holds no stream payload: it is not SSE, NDJSON or a JSON array"
    return None


def _one_json_body(body: bytes) -> bool:
    """True when the input is a single JSON object (a non-streamed response)."""
    if not body.lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(json.loads(body), dict)
    except ValueError:
        return False


def _short(text: str, limit: int = 120) -> str:
    shown = json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[: limit - 4] + '..."'


def _describe(event: Event) -> list[tuple[str, str]]:
    """What one event says, each line tagged "model" or "protocol"."""
    choice: int = getattr(event, "choice", 0)
    c = f"choice {choice} " if choice else ""
    if isinstance(event, TextDelta):
        return [("model", f"{c}text {_short(event.text)}")]
    if isinstance(event, ReasoningDelta):
        return [("model", f"{c}reasoning {_short(event.text)}")]
    if isinstance(event, ToolCallStarted):
        lines = [("protocol", f"{c}tool call #{event.index} opened, id={event.id or '-'}")]
        if event.name:
            lines.insert(0, ("model", f"{c}tool call #{event.index} name {event.name}"))
        return lines
    if isinstance(event, ToolCallDelta):
        name = event.name or "?"
        if not event.delta:
            # Providers that stream values, not text (Vertex partialArgs).
            so_far = json.dumps(event.partial, ensure_ascii=False)
            return [("model", f"{c}tool call #{event.index} {name} arguments so far {so_far}")]
        return [("model", f"{c}tool call #{event.index} {name} arguments += {_short(event.delta)}")]
    if isinstance(event, ToolCallReady):
        return [("protocol", f"{c}tool call #{event.index} complete: {event.name} ({event.id})")]
    if isinstance(event, ToolCallInvalid):
        return [("protocol", f"{c}tool call #{event.call.index} INVALID: {event.call.error}")]
    if isinstance(event, ServerToolCallReady):
        call = event.call
        done = f"{c}server tool call {call.name} ({call.type}) complete, run by the provider"
        return [("protocol", done)]
    if isinstance(event, PartReceived):
        return [("model", f"{c}{event.part.kind} made by the model: {event.part.describe()}")]
    if isinstance(event, UsageReported):
        u = event.usage
        usage = f"usage in={u.input_tokens} out={u.output_tokens} total={u.total_tokens}"
        return [("protocol", usage)]
    if isinstance(event, ChoiceFinished):
        reason = f"{c}finish_reason={event.raw_reason or event.reason} ({event.reason})"
        return [("protocol", reason)]
    if isinstance(event, StreamEnded):
        return [("protocol", "end of stream marker")]
    if isinstance(event, StreamFailed):
        return [("protocol", f"ERROR {event.error.type_name}: {event.error.message}")]
    if isinstance(event, UnknownItem):
        return [("protocol", f"{c}unknown item {event.type}: {event.quirk}")]
    if isinstance(event, ProviderNotice):
        mark = "WARNING " if event.warning else ""
        return [("protocol", f"{c}{mark}{event.type}: {event.message}")]
    assert_never(event)


def _print_human(
    body: bytes, decoder: StreamDecoder, frames: list[DecodedFrame], result: StreamResult
) -> None:
    whole = _one_json_body(body)
    echo = _say
    echo(f"dialect: {result.dialect}")
    known = {d.name: d for d in registered()}.get(result.dialect)
    silent_output = known.silent_output if known is not None else None
    if whole:
        echo("input: one JSON body (a non-streamed response), not a stream")
    if not body.strip():
        echo(f"input: empty ({len(body)} bytes): a stream cut before its first byte")
    for number, frame in enumerate(frames, 1):
        label = f"[{number}]" if frame.data or frame.event else "[end of input]"
        name = f" event={frame.event}" if frame.event and frame.event != "message" else ""
        lines = [line for event in frame.events for line in _describe(event)]
        if not lines:
            silent = silent_output(frame.data) if silent_output and frame.data else None
            lines = [("model", silent)] if silent else [("protocol", "(nothing from the model)")]
        for who, what in lines:
            tag = click.style("model   ", fg="green") if who == "model" else "protocol"
            click.echo(f"{terminal_text(label + name)} {tag}  {terminal_text(what)}")
    echo("")
    for choice in result.choices:
        head = f"choice {choice.index}: " if len(result.choices) > 1 else ""
        if choice.reasoning:
            echo(f"{head}reasoning: {_short(choice.reasoning, 300)}")
        if choice.text:
            echo(f"{head}text: {_short(choice.text, 300)}")
        echo(f"{head}finish_reason: {choice.finish_reason}")
        for call in choice.tool_calls:
            flag = " (repaired)" if call.repaired else ""
            args = json.dumps(call.arguments, ensure_ascii=False)
            echo(f"{head}tool call #{call.index} {call.name}{flag} id={call.id}: {args}")
        for bad in choice.invalid_tool_calls:
            echo(f"{head}INVALID tool call #{bad.index} {bad.name} id={bad.id}: {bad.error}")
        for cut in choice.incomplete_tool_calls:
            echo(f"{head}INCOMPLETE tool call {cut.name} id={cut.id}: {_short(cut.raw_arguments)}")
        for server in choice.server_tool_calls:
            args = json.dumps(server.arguments, ensure_ascii=False)
            kind = f"{server.name} ({server.type})"
            shown = args if len(args) <= 120 else args[:119] + "…"
            echo(f"{head}server tool call {kind} id={server.id}: {shown}")
    if result.usage is not None:
        u = result.usage
        echo(f"usage: input={u.input_tokens} output={u.output_tokens} total={u.total_tokens}")
    if decoder.quirks:
        echo(f"quirks: {'; '.join(decoder.quirks)}")
    if result.error is not None:
        echo(f"error: {result.error.type_name}: {result.error.message}")


@click.command("inspect")
@click.argument("file", metavar="FILE|-")
@click.option(
    "--dialect",
    type=click.Choice(["auto", *(d.name for d in registered())]),
    default="auto",
    show_default=True,
    help="The wire dialect; auto tells it from the bytes.",
)
@click.option(
    "--api",
    type=click.Choice(["auto", *(d.name for d in registered())]),
    default=None,
    hidden=True,
    help="The former name of --dialect (deprecated).",
)
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    default=None,
    help="Feed the decoder N bytes at a time (default: all at once).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead.")
def inspect(
    file: str, dialect: str, api: str | None, chunk_size: int | None, as_json: bool
) -> None:
    """Decode a recorded provider stream and show what is in it.

    FILE may also be a cassette directory (one line per exchange) or one of
    its sidecars (NNNN.json: its body, in its recorded chunks and dialect).
    """
    if api is not None:
        click.echo(_compat.renamed_option("inspect", "--api"), err=True)
        if dialect not in ("auto", api):
            raise click.UsageError(f"--dialect {dialect} and --api {api} disagree: pass --dialect")
        dialect = api
    chunks: list[bytes] | None = None
    if file != "-" and os.path.isdir(file):
        _inspect_cassette(file, as_json)
        return
    if file != "-" and file.endswith(".json") and os.path.isfile(file):
        recorded = _recorded_body(file)
        if recorded is not None:
            recorded_dialect, chunks = recorded
            dialect = recorded_dialect if dialect == "auto" and recorded_dialect else dialect
    body = b"".join(chunks) if chunks is not None else _read(file)
    if chunks is not None and chunk_size is None:
        decoder, frames = _decode_chunks(chunks, dialect)
    else:
        decoder, frames = _decode(body, dialect, chunk_size)
    result = decoder.result()
    problem = _not_a_stream(body, frames, result)
    if problem is not None:
        raise click.UsageError(f"{'stdin' if file == '-' else file} {problem}")
    if as_json:
        click.echo(terminal_json(json.dumps(result.to_dict(), ensure_ascii=False)))
    else:
        _print_human(body, decoder, frames, result)
    if result.error is not None:
        sys.exit(1)
