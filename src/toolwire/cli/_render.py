"""Live terminal rendering of an agent run (used by ``demo`` and ``chat``).

On a terminal: a rich ``Live`` view with the text as it streams, each tool
call's arguments growing, tools running in parallel with their times, then
the answer and a usage table. Without a terminal (a pipe, CI): plain lines
in the order things happen, nothing animated.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.markup import escape
from rich.panel import Panel
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from toolwire.events import (
    ReasoningDelta,
    StreamFailed,
    TextDelta,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
)
from toolwire.run import (
    AgentEvent,
    ModelRetrying,
    RunFinished,
    RunResult,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnFinished,
    TurnStarted,
)

__all__ = ["Renderer", "usage_line", "usage_table"]

_ARGS_SHOWN = 400


@dataclass
class _Call:
    index: int
    name: str
    args: list[str] = field(default_factory=list)
    status: str = "streaming"
    started: float | None = None
    elapsed: float | None = None
    result: str = ""
    eager: bool = False


class _Waiting:
    """A spinner and the seconds spent waiting for the model, computed each
    time the live view is drawn (so it moves while nothing arrives)."""

    def __init__(self) -> None:
        self.since = time.monotonic()
        self._spinner = Spinner("dots", style="cyan")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        elapsed = time.monotonic() - self.since
        self._spinner.text = Text(f"waiting for the model… {elapsed:.0f} s", style="dim")
        yield self._spinner


@dataclass
class _Turn:
    number: int
    waiting: _Waiting | None = field(default_factory=_Waiting)
    """Set until the model's first event of the turn arrives."""
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    by_id: dict[str, _Call] = field(default_factory=dict)
    note: str = ""


def _short(text: str, limit: int = _ARGS_SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def usage_table(result: RunResult) -> Table:
    """Turns, tool calls and tokens of a run."""
    table = Table(title="usage", show_header=True, header_style="bold")
    for column in ("turns", "tool calls", "input tokens", "output tokens", "total tokens"):
        table.add_column(column, justify="right")
    u = result.usage
    table.add_row(
        str(result.turns),
        str(len(result.tool_calls)),
        str(u.input_tokens if u.input_tokens is not None else "-"),
        str(u.output_tokens if u.output_tokens is not None else "-"),
        str(u.total_tokens if u.total_tokens is not None else "-"),
    )
    return table


def usage_line(result: RunResult) -> str:
    """:func:`usage_table` as one line, for output that is not a terminal."""
    u = result.usage

    def shown(value: int | None) -> str:
        return "-" if value is None else str(value)

    return (
        f"usage: {result.turns} turns, {len(result.tool_calls)} tool calls, tokens "
        f"{shown(u.input_tokens)} in / {shown(u.output_tokens)} out"
    )


class Renderer:
    """Feeds on agent events; draws live on a terminal, prints lines elsewhere."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live_mode = console.is_terminal
        self.turns: list[_Turn] = []
        self._live: Live | None = None
        self._line_open = False

    # -- lifecycle -----------------------------------------------------------------

    def __enter__(self) -> Renderer:
        if self.live_mode:
            self._live = Live(
                self._view(), console=self.console, refresh_per_second=12, transient=False
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._live is not None:
            self._live.update(self._view())
            self._live.__exit__(*exc_info)
            self._live = None
        self._end_line()

    # -- events ----------------------------------------------------------------------

    def handle(self, event: AgentEvent) -> None:
        """Take one event of the run."""
        if isinstance(event, TurnStarted):
            self.turns.append(_Turn(event.turn))
            self._say(f"[bold]turn {event.turn}[/bold]: asking the model")
        elif not self.turns:
            return
        turn = self.turns[-1]
        if isinstance(event, ModelRetrying):
            turn.waiting = _Waiting()
        elif not isinstance(event, TurnStarted):
            turn.waiting = None
        if isinstance(event, TextDelta):
            turn.text.append(event.text)
            self._stream_text(event.text)
        elif isinstance(event, ReasoningDelta):
            turn.reasoning.append(event.text)
        elif isinstance(event, (ToolCallStarted, ToolCallDelta, ToolCallReady, ToolCallInvalid)):
            self._tool_call(turn, event)
        elif isinstance(event, (ToolExecutionStarted, ToolExecutionFinished)):
            self._tool_execution(turn, event)
        elif isinstance(event, ModelRetrying):
            turn.note = f"stream failed ({event.error.message}); sending the turn again"
            self._say(f"  [yellow]{escape(turn.note)}[/yellow]")
        elif isinstance(event, StreamFailed):
            turn.note = f"stream failed: {event.error.message}"
        elif isinstance(event, (TurnFinished, RunFinished)):
            self._end_line()
        if self._live is not None:
            self._live.update(self._view())

    def _tool_call(
        self, turn: _Turn, event: ToolCallStarted | ToolCallDelta | ToolCallReady | ToolCallInvalid
    ) -> None:
        """A tool call opening, growing, complete, or invalid."""
        if isinstance(event, ToolCallStarted):
            turn.calls[event.index] = _Call(event.index, event.name or "?")
        elif isinstance(event, ToolCallDelta):
            call = turn.calls.setdefault(event.index, _Call(event.index, event.name))
            call.name = event.name or call.name
            call.args.append(event.delta)
        elif isinstance(event, ToolCallReady):
            call = turn.calls.setdefault(event.index, _Call(event.index, event.name))
            call.name = event.name
            call.args = [json.dumps(event.call.arguments, ensure_ascii=False)]
            call.status = "ready"
            turn.by_id[event.id] = call
            self._say(f"  tool call [cyan]{event.name}[/cyan]({escape(_short(call.args[0]))})")
        else:
            call = turn.calls.setdefault(event.call.index, _Call(event.call.index, event.call.name))
            call.status = "invalid"
            turn.by_id[event.call.id] = call
            self._say(
                f"  [red]invalid tool call[/red] {event.call.name}: {escape(event.call.error)}"
            )

    def _tool_execution(
        self, turn: _Turn, event: ToolExecutionStarted | ToolExecutionFinished
    ) -> None:
        """A tool starting or finishing."""
        if isinstance(event, ToolExecutionStarted):
            running = turn.by_id.get(event.call.id)
            if running is not None:
                running.status = "running"
                running.started = time.monotonic()
                running.eager = event.eager
        else:
            done = turn.by_id.get(event.call.id)
            result = event.result
            if done is not None:
                done.status = "ok" if result.ok else f"error: {result.error}"
                done.elapsed = result.elapsed
                done.result = result.content
            mark = "[green]✓[/green]" if result.ok else "[red]✗[/red]"
            self._say(
                f"  {mark} {event.call.name} ({result.elapsed * 1000:.0f} ms, "
                f"{result.attempts} attempt(s)): {escape(_short(result.content, 160))}"
            )

    # -- plain output ------------------------------------------------------------------

    def _say(self, markup: str) -> None:
        if self.live_mode:
            return
        self._end_line()
        self.console.print(markup, highlight=False)

    def _stream_text(self, text: str) -> None:
        if self.live_mode:
            return
        if not self._line_open:
            self.console.print("  ", end="")
            self._line_open = True
        self.console.print(escape(text), end="", highlight=False)

    def _end_line(self) -> None:
        if self._line_open:
            self.console.print()
            self._line_open = False

    # -- live view ---------------------------------------------------------------------

    def _view(self) -> RenderableType:
        parts: list[RenderableType] = []
        for turn in self.turns:
            body: list[RenderableType] = []
            if turn.reasoning:
                body.append(Text(_short("".join(turn.reasoning), 300), style="dim italic"))
            if turn.calls:
                table = Table(show_header=True, header_style="bold", expand=True)
                table.add_column("#", width=3)
                table.add_column("tool")
                table.add_column("arguments", ratio=3)
                table.add_column("status")
                table.add_column("time", justify="right")
                for call in sorted(turn.calls.values(), key=lambda c: c.index):
                    elapsed = call.elapsed
                    if elapsed is None and call.started is not None:
                        elapsed = time.monotonic() - call.started
                    status = call.status + (" (eager)" if call.eager else "")
                    table.add_row(
                        str(call.index),
                        call.name,
                        _short("".join(call.args)),
                        status,
                        f"{elapsed * 1000:.0f} ms" if elapsed is not None else "",
                    )
                body.append(table)
            if turn.text:
                body.append(Text("".join(turn.text)))
            if turn.note:
                body.append(Text(turn.note, style="yellow"))
            if turn.waiting is not None:
                body.append(turn.waiting)
            parts.append(Panel(Group(*body), title=f"turn {turn.number}", title_align="left"))
        return Group(*parts)
