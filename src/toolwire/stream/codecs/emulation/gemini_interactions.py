"""The emulation server's Gemini Interactions encoder and request reader.

A streamed answer is ``interaction.created``, then one step after another
(``step.start``, its ``step.delta`` events, ``step.stop``): a ``thought``
step (summary text, then its signature), a ``model_output`` step (text
deltas), one ``function_call`` step per call (``arguments_delta``
fragments), then ``interaction.status_update`` and ``interaction.completed``
with the usage. Every event carries an ``event_id``; the server keeps the
frames of a streamed answer, and ``GET .../interactions/{id}?stream=true&
last_event_id=...`` sends those after that event (:meth:`Encoder.stream_key`).

The server keeps no conversation: an interaction's id names its
conversation and turn, so a request that sends ``previous_interaction_id``
and only the new input is answered with the next turn.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

from toolwire.stream import jsonio
from toolwire.stream.codecs._reading import as_object, model_of, text_of
from toolwire.stream.codecs.emulation._base import (
    Encoder,
    Frame,
    Reply,
    fragments,
    lower_token,
    merge_error,
    token,
)
from toolwire.stream.codecs.emulation._request import (
    BadRequest,
    History,
    ParsedRequest,
    looks_like_error,
)
from toolwire.stream.codecs.emulation.gemini import google_error

__all__ = ["GeminiInteractionsEncoder", "decode_request", "interaction_id"]

_DIALECT_NAME = "gemini-interactions"
_MAX_TURNS = 100_000
"""More turns than a scenario holds: a larger one in an interaction id is refused."""
_ASSISTANT_STEPS = frozenset({"model_output", "function_call", "thought"})


def interaction_id(conversation: str, turn: int) -> str:
    """The id of a conversation's interaction ``turn`` (0-based): it names both."""
    raw = f"{conversation}:{turn}".encode()
    return "v1_" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_interaction_id(value: str) -> tuple[str, int]:
    """``(conversation, turn)`` of an id minted by :func:`interaction_id`."""
    try:
        raw = value.removeprefix("v1_")
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
        conversation, _, turn = text.rpartition(":")
        number = int(turn)
    except ValueError:
        number = -1
    if not 0 <= number < _MAX_TURNS:  # the history counts up to it, one by one
        raise BadRequest(f"no interaction {value[:80]!r} on this server")
    return conversation, number


class GeminiInteractionsEncoder(Encoder):
    """``POST /v1beta/interactions``, streamed or whole; continuations by event id."""

    dialect = _DIALECT_NAME
    json_media_type = "application/json; charset=UTF-8"
    stream_media_type = "text/event-stream"

    @staticmethod
    def call_id(reply: Reply, index: int) -> str:
        return lower_token(f"{reply.seed}:call:{index}", 8)

    def stream_key(self, reply: Reply) -> str | None:
        return interaction_id(reply.request.conversation, reply.turn)

    def event_id(self, frame: Frame) -> str | None:
        found = frame.payload.get("event_id") if isinstance(frame.payload, dict) else None
        return found if isinstance(found, str) else None

    def _usage(self, reply: Reply) -> dict[str, Any]:
        usage = {
            "total_input_tokens": reply.input_tokens,
            "total_output_tokens": reply.output_tokens - reply.reasoning_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }
        if reply.reasoning:
            usage["total_thought_tokens"] = reply.reasoning_tokens
        return usage

    def _interaction(self, reply: Reply, status: str, **more: Any) -> dict[str, Any]:
        return {
            "id": self.stream_key(reply),
            "status": status,
            "model": reply.request.model,
            "object": "interaction",
            **more,
        }

    def _steps(self, reply: Reply) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """Each step as it starts, and its deltas."""
        size = reply.chunk_size
        steps: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if reply.reasoning:
            signature = token(reply.seed + ":signature", 24)
            deltas: list[dict[str, Any]] = [
                {"type": "thought_summary", "content": {"type": "text", "text": p}}
                for p in fragments(reply.reasoning, size)
            ]
            steps.append(
                (
                    {"type": "thought"},
                    [*deltas, {"type": "thought_signature", "signature": signature}],
                )
            )
        steps.extend((item, []) for item in reply.items_after("reasoning"))
        if reply.text:
            text = [{"type": "text", "text": p} for p in fragments(reply.text, size)]
            steps.append(({"type": "model_output", "content": []}, text))
        steps.extend((item, []) for item in reply.items_after("text"))
        for call in reply.calls:
            start = {
                "type": "function_call",
                "id": self.call_id(reply, call.index),
                "name": call.name,
                "arguments": {},
                **call.provider_fields,
            }
            args = [
                {"type": "arguments_delta", "arguments": p}
                for p in fragments(call.raw_arguments, size)
            ]
            steps.append((start, args))
        steps.extend((item, []) for item in reply.items_after("calls"))
        return steps

    def _status(self, reply: Reply) -> str:
        return reply.finish or ("requires_action" if reply.calls else "completed")

    def stream(self, reply: Reply) -> list[Frame]:
        seed = reply.seed + ":event"
        payloads: list[dict[str, Any]] = [
            {
                "event_type": "interaction.created",
                "interaction": self._interaction(reply, "in_progress"),
            }
        ]
        for index, (start, deltas) in enumerate(self._steps(reply)):
            payloads.append({"event_type": "step.start", "index": index, "step": start})
            payloads.extend(
                {"event_type": "step.delta", "index": index, "delta": d} for d in deltas
            )
            payloads.append({"event_type": "step.stop", "index": index})
        status = self._status(reply)
        payloads.append(
            {
                "event_type": "interaction.status_update",
                "interaction_id": self.stream_key(reply),
                "status": status,
            }
        )
        done = self._interaction(reply, status, usage=self._usage(reply))
        payloads.append({"event_type": "interaction.completed", "interaction": done})
        return [
            Frame({**p, "event_id": token(f"{seed}:{n}", 16)}, event=p["event_type"])
            for n, p in enumerate(payloads)
        ]

    def body(self, reply: Reply) -> dict[str, Any]:
        steps: list[dict[str, Any]] = []
        for start, deltas in self._steps(reply):
            step = dict(start)
            if step["type"] == "function_call":
                step["arguments"] = _whole_arguments(deltas)
            elif step["type"] == "model_output":
                step["content"] = [{"type": "text", "text": "".join(d["text"] for d in deltas)}]
            elif step["type"] == "thought":
                summary = "".join(d["content"]["text"] for d in deltas if "content" in d)
                step["summary"] = [{"type": "text", "text": summary}]
                step["signature"] = deltas[-1]["signature"]
            steps.append(step)
        status = self._status(reply)
        return self._interaction(reply, status, steps=steps, usage=self._usage(reply))

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"error": {"code", "message", "status"}}``, as the Gemini API's."""
        return {"error": google_error(status, message)}

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        defaults = {"code": "internal", "message": "An internal error has occurred."}
        payload = {"event_type": "error", "error": merge_error(defaults, error)}
        return Frame(payload, event="error")


def _whole_arguments(deltas: list[dict[str, Any]]) -> Any:
    text = "".join(d["arguments"] for d in deltas)
    try:
        return jsonio.loads(text) if text else {}
    except ValueError:
        raise ValueError(f"the scenario's arguments are not JSON: {text[:80]}") from None


# -- requests ---------------------------------------------------------------------


def _result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return text_of(result)
    return jsonio.dumps(result)


def decode_request(
    data: dict[str, Any], model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """What the emulation server reads of a ``POST /interactions`` request."""
    raw = data.get("input")
    steps: list[Any] = (
        [{"type": "user_input", "content": raw}] if isinstance(raw, str) else raw or []
    )
    if not isinstance(steps, list):
        raise BadRequest("'input' must be a string or an array of steps")
    previous = data.get("previous_interaction_id")
    history = History(data.get("system_instruction"))
    conversation: str | None = None
    if previous is not None:
        if not isinstance(previous, str):
            raise BadRequest("'previous_interaction_id' must be a string")
        conversation, turn = _read_interaction_id(previous)
        for _ in range(turn + 1):
            history.assistant()
    in_model = False
    for i, item in enumerate(steps):
        step = as_object(item, f"input[{i}]")
        kind = step.get("type")
        if kind in _ASSISTANT_STEPS:
            if not in_model:
                history.assistant()
            in_model = True
            continue
        in_model = False
        if kind == "function_result":
            text = _result_text(step.get("result"))
            call_id, name = step.get("call_id"), step.get("name")
            history.result(
                call_id if isinstance(call_id, str) else None,
                text,
                step.get("is_error") is True or looks_like_error(text),
                name=name if isinstance(name, str) else None,
            )
        history.passed(step)
    tools, system = data.get("tools"), data.get("system_instruction")
    stream_flag = data.get("stream", False)
    if not isinstance(stream_flag, bool):
        raise BadRequest("'stream' must be a boolean")
    parsed = history.parsed(
        dialect=_DIALECT_NAME,
        model=model_of(data),
        stream=stream_flag,
        tools=tools if isinstance(tools, list) else [],
        instructions=system if isinstance(system, str) else None,
    )
    return replace(parsed, conversation=conversation) if conversation else parsed
