"""Writing an upstream's decoded stream in the served dialect: what every
dialect's writer shares.

Theory of operation: the upstream's bytes are decoded by toolwire's stream
decoder into events (text, reasoning, a call started, its argument
deltas, the call complete, usage, the finish, the end or the failure); an
:class:`Answer` turns them into the served dialect's frames as they come,
framed by that dialect's emulation encoder (``Encoder.frame``), so that
the bytes are those the dialect's own server would send. What holds for
every dialect is decided here, once:

- a call is closed (its ``content_block_stop``, its ``output_item.done``,
  Gemini's whole ``functionCall``) only when the decoder says it is
  complete (:class:`~toolwire.events.ToolCallReady`); its argument deltas
  stream as they come, as the dialect's own delta events;
- the finish is ``tool_calls`` (``tool_use``...) whenever a call was
  answered, whatever word the upstream used, and a stream that ends with a
  call unfinished, or fails, ends with the dialect's error event, never
  with a finish;
- usage is the upstream's, translated into the dialect's fields.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import StreamTruncated, ToolwireError
from toolwire.events import (
    ChoiceFinished,
    Event,
    ReasoningDelta,
    StreamEnded,
    StreamFailed,
    TextDelta,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from toolwire.stream import jsonio
from toolwire.stream.codecs.bridge._asked import Asked
from toolwire.stream.codecs.emulation import Encoder, Frame, token
from toolwire.types import FinishReason, InvalidToolCall, ToolCall, Usage

__all__ = ["Answer", "Started"]


class Started:
    """A call the upstream started: its id, name and the argument text streamed."""

    __slots__ = ("id", "index", "name", "streamed")

    def __init__(self, index: int, call_id: str, name: str) -> None:
        self.index = index
        self.id = call_id
        self.name = name
        self.streamed: list[str] = []


class Answer:
    """The served dialect's frames of one upstream stream (subclassed per dialect)."""

    def __init__(self, asked: Asked, encoder: Encoder, seed: str) -> None:
        self.asked = asked
        self.encoder = encoder
        self.seed = seed
        self.usage: Usage | None = None
        self.finish: FinishReason | None = None
        self.calls: dict[int, Started] = {}
        self.ready: list[ToolCall] = []
        self.pending: set[int] = set()
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.done = False
        self._frames: list[Frame] = []
        self._sent = 0

    # -- what subclasses write ------------------------------------------------

    def opened(self) -> None:
        """The answer's opening frames."""

    def on_text(self, text: str) -> None: ...

    def on_reasoning(self, text: str) -> None: ...

    def on_started(self, call: Started) -> None: ...

    def on_delta(self, call: Started, delta: str) -> None: ...

    def on_ready(self, call: Started, whole: ToolCall) -> None: ...

    def closed(self, finish: FinishReason) -> None:
        """The answer's closing frames, ``finish`` its reason."""

    def error_payload(self, error: ToolwireError) -> Frame:
        """The dialect's error event (its emulation encoder's)."""
        return self.encoder.error_frame({"message": error.message}, self._sent + len(self._frames))

    # -- the shared part --------------------------------------------------------

    def emit(self, payload: Any, event: str | None = None, raw: str | None = None) -> None:
        self._frames.append(Frame(payload, event=event, raw=raw))

    def take(self) -> bytes:
        """The bytes of the frames written since the last call."""
        out = b"".join(self.encoder.frame(f, self._sent + n) for n, f in enumerate(self._frames))
        self._sent += len(self._frames)
        self._frames = []
        return out

    def call_id(self, index: int) -> str:
        return "call_" + token(f"{self.seed}:call:{index}", 24)

    def start(self) -> bytes:
        self.opened()
        return self.take()

    def feed(self, events: list[Event]) -> bytes:
        """The bytes of these events (choice 0: the one the bridge serves)."""
        for event in events:
            if self.done:
                break
            self._one(event)
        return self.take()

    def _one(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if event.choice == 0:
                self.text.append(event.text)
                self.on_text(event.text)
        elif isinstance(event, ToolCallDelta):
            if event.choice == 0 and event.index in self.calls and event.delta:
                call = self.calls[event.index]
                call.streamed.append(event.delta)
                self.on_delta(call, event.delta)
        elif isinstance(event, ReasoningDelta):
            if event.choice == 0:
                self.reasoning.append(event.text)
                self.on_reasoning(event.text)
        elif isinstance(event, ToolCallStarted):
            if event.choice == 0:
                started = Started(event.index, event.id or self.call_id(event.index), event.name)
                self.calls[event.index] = started
                self.pending.add(event.index)
                self.on_started(started)
        elif isinstance(event, ToolCallReady):
            if event.choice == 0:
                self._ready(event.call)
        elif isinstance(event, ToolCallInvalid):
            if event.choice == 0:
                self._invalid(event.call)
        elif isinstance(event, UsageReported):
            self.usage = event.usage
        elif isinstance(event, ChoiceFinished):
            if event.choice == 0:
                self.finish = event.reason
        elif isinstance(event, StreamEnded):
            self.end()
        elif isinstance(event, StreamFailed):
            self.fail(event.error)

    def _ready(self, call: ToolCall) -> None:
        started = self.calls.get(call.index)
        if started is None:  # complete at once (a Gemini call): started and ready
            started = Started(call.index, call.id, call.name)
            self.calls[call.index] = started
            self.on_started(started)
        rest = _unsent(started, call)
        if rest is None:
            self.fail(
                StreamTruncated(f"tool call {call.name!r}: its fragments do not make its arguments")
            )
            return
        if rest:  # what the fragments did not say (none came, or values without text)
            started.streamed.append(rest)
            self.on_delta(started, rest)
        self.pending.discard(call.index)
        self.ready.append(call)
        self.on_ready(started, call)

    def _invalid(self, call: InvalidToolCall) -> None:
        # Finished by the model, but not JSON: the client is told, no call is closed.
        self.fail(StreamTruncated(f"tool call {call.name!r} has arguments that are not JSON"))

    def end(self) -> None:
        """The upstream's stream ended: the finish, or an error for an unfinished call."""
        if self.done:
            return
        if self.pending:
            names = ", ".join(self.calls[i].name for i in sorted(self.pending))
            self.fail(StreamTruncated(f"the upstream's stream ended inside tool calls: {names}"))
            return
        finish: FinishReason = self.finish or "stop"
        if self.ready:
            finish = "tool_calls"
        elif finish == "tool_calls":
            finish = "stop"
        self.closed(finish)
        self.done = True

    def fail(self, error: ToolwireError) -> None:
        """The upstream failed: the dialect's error event ends the answer."""
        if self.done:
            return
        self._frames.append(self.error_payload(error))
        self.done = True


def _unsent(started: Started, call: ToolCall) -> str | None:
    """The text still to send for the client's fragments to make ``call``'s
    arguments (``""``: none; ``None``: what was sent cannot make them)."""
    sent = "".join(started.streamed)
    whole = call.raw_arguments if call.raw_arguments.strip() and not call.repaired else ""
    whole = whole or jsonio.dumps(call.arguments)
    if whole.startswith(sent):
        return whole[len(sent) :]
    try:
        return "" if jsonio.loads(sent) == call.arguments else None
    except ValueError:
        return None
