"""Steering a run while it streams: :meth:`toolwire.Agent.steer`.

Theory of operation: an agent knows the runs it is driving in this process
(:class:`LiveRuns`); each has an inbox of the steers given to it
(:class:`SteerInbox`). A steer takes effect at the first safe point:

* while a response streams, at the first read after which no call is half
  streamed and none is complete: toolwire cuts the response there (the
  stream is closed, what was said so far is kept) and it ends ``steered``;
  a response that ends first without calls ends ``steered`` too;
* a response with calls is not cut (its calls are owed an answer): the
  steers wait, and go with the next request, after the calls' results;
* over a WebSocket that can steer (Responses), the steers are sent to the
  provider as soon as they are given, while the response streams: the
  provider ends it (or lets it end) and starts the successor itself, with
  them (``provider``), or holds them for the request that answers its calls
  (``pending``); one it refuses waits for a safe point as above.

A ``steered`` response and its successor are one turn (the turn limit counts
it once, up to :data:`MAX_SUCCESSORS` successors): the successor is asked
with what was said so far and each steer's text as a user message after it.
A response the provider itself ends ``steered`` (a Responses
``incomplete_details.reason`` of ``steered``, when the provider took the
steer on its own connection) is continued the same way, with nothing added:
the provider holds the input. Each steer that takes effect is told to the
observers (``turn_steered``), the journal's ``steer`` record, before the
successor's request; a run resumed between the two finds the steers there.

A pending steer (Responses ``response.steer.pending``, kept as the answer's
provider state) names the answers the client owes (:func:`owed_answers`):
they are the turn's recorded results, sent with the next request as any
result is; one the turn's calls do not hold is taken from the run's
earlier records, never from running a tool again.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace

import anyio
import anyio.abc

from toolwire.errors import UsageError
from toolwire.messages import AssistantMessage, ToolResultMessage
from toolwire.providers import SocketTransport
from toolwire.run import Steer, ToolCallRecord
from toolwire.types import ChoiceResult, StreamResult

__all__ = [
    "MAX_SUCCESSORS",
    "LiveRuns",
    "SteerInbox",
    "owed_answers",
    "safe_point",
    "steered_choice",
    "steered_result",
]

MAX_SUCCESSORS = 16
"""Successors a turn may have before the next one counts as a new turn
(a provider that ends every response ``steered`` cannot run forever)."""

MAX_STEER_CHARS = 100_000
"""The longest steer's text."""


class SteerInbox:
    """The steers given to one live run, waiting for a safe point."""

    def __init__(self) -> None:
        self.waiting: list[Steer] = []
        self._arrived: anyio.Event | None = None
        self.on_put: Callable[[], None] | None = None
        """Called (in the run's event loop) when a steer is given."""
        self.senders: anyio.abc.TaskGroup | None = None
        """Where the steers are sent from while the run's socket steers
        (:func:`sending_beside`; ``None``: they are not sent)."""

    def put(self, steer: Steer) -> None:
        self.waiting.append(steer)
        if self._arrived is not None:
            self._arrived.set()
        if self.on_put is not None:
            self.on_put()

    async def arrival(self) -> None:
        """Return once a steer waits (at once when one does)."""
        while not self.waiting:
            if self._arrived is None or self._arrived.is_set():
                self._arrived = anyio.Event()
            await self._arrived.wait()

    def take(self) -> tuple[Steer, ...]:
        """The steers waiting, in the order given; the inbox is empty after."""
        taken, self.waiting = tuple(self.waiting), []
        return taken

    def __bool__(self) -> bool:
        return bool(self.waiting)


class LiveRuns:
    """The runs an agent drives in this process, by run id."""

    def __init__(self) -> None:
        self._runs: dict[str, SteerInbox] = {}

    @contextmanager
    def live(self, run_id: str) -> Iterator[SteerInbox]:
        """The inbox of ``run_id`` while its driver runs (one per run id: the
        run's lease keeps a second driver of it out)."""
        inbox = self._runs[run_id] = SteerInbox()
        try:
            yield inbox
        finally:
            if self._runs.get(run_id) is inbox:
                del self._runs[run_id]

    def steer(self, run_id: str, text: str) -> Steer:
        """Give ``text`` to the live run ``run_id``.

        Raises:
            UsageError: no run of that id is being driven by this agent in
                this process, or the text is empty or too long.
        """
        if not isinstance(text, str) or not text.strip():
            raise UsageError("a steer's text must be a non-empty string")
        if len(text) > MAX_STEER_CHARS:
            raise UsageError(f"a steer's text is at most {MAX_STEER_CHARS} characters")
        inbox = self._runs.get(run_id)
        if inbox is None:
            raise UsageError(
                f"run {run_id!r} is not running in this agent: only a run this agent is "
                "driving can be steered (a suspended or finished run is resumed instead)"
            )
        steer = Steer(steer_id="steer_" + secrets.token_hex(8), text=text)
        inbox.put(steer)
        return steer


@asynccontextmanager
async def sending_beside(inbox: SteerInbox, transport: object) -> AsyncIterator[None]:
    """For the run's life, the task group the inbox's steers are sent from
    when its transport is a socket that steers (one per run, not per
    response: a response that is not steered starts no task)."""
    if not isinstance(transport, SocketTransport) or not transport.steering:
        yield
        return
    failure: list[Exception] = []
    async with anyio.create_task_group() as senders:
        inbox.senders = senders
        try:
            yield
        except Exception as exc:  # raised below as it came, not in a task group's
            failure.append(exc)
        finally:
            inbox.senders = None
            senders.cancel_scope.cancel()  # a sender outlives no response (nor the run)
    if failure:
        raise failure[0]


def safe_point(result: StreamResult) -> bool:
    """Whether a response read so far may end here for a steer: no call of
    its answer is complete (each is owed a result) or half streamed."""
    choice = result.choices[0]
    return not (choice.tool_calls or choice.invalid_tool_calls or choice.incomplete_tool_calls)


def steered_result(result: StreamResult) -> StreamResult:
    """A response cut for a steer (or ended before the steer took effect):
    what its answer said so far, ended ``steered``."""
    first, *rest = result.choices
    return replace(result, choices=(steered_choice(first), *rest))


def steered_choice(choice: ChoiceResult) -> ChoiceResult:
    """A response cut for a steer (or ended before the steer took effect):
    what it said so far, ended ``steered``."""
    return replace(choice, finish_reason="steered", incomplete_tool_calls=())


def owed_answers(
    assistant: AssistantMessage,
    answered: Sequence[ToolCallRecord],
    earlier: Sequence[ToolCallRecord],
) -> list[ToolResultMessage]:
    """The answers a pending steer says the client owes that the turn's
    results (``answered``) do not hold: each from the run's earlier records,
    as it was recorded (a stub no record answers is left to the provider)."""
    owed: list[str] = []
    for item in assistant.provider_state:
        if item.get("type") == "steer_pending":
            owed += [str(i) for i in item.get("owed") or ()]
    have = {r.call.id for r in answered}
    recorded = {r.call.id: r for r in earlier}
    out = []
    for call_id in dict.fromkeys(owed):
        record = recorded.get(call_id)
        if call_id in have or record is None:
            continue
        result = record.result
        out.append(
            ToolResultMessage(
                call_id=call_id,
                name=record.call.name,
                content=result.content,
                is_error=not result.ok,
                parts=result.parts,
            )
        )
    return out
