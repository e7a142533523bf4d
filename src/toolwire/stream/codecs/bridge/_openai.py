"""The bridge's OpenAI answers: Chat Completions chunks, and Responses events.

Chat: a role chunk, ``content`` / ``reasoning_content`` deltas, each call's
opener (``id``, ``type``, ``function.name``) then its ``arguments``
fragments, the finish chunk, the usage chunk when asked, ``[DONE]``.

Responses: ``response.created``, one output item at a time for text and
reasoning, each function call its own item (``function_call_arguments.delta``
as they come, ``.done`` and ``output_item.done`` once complete), a custom
(freeform) tool's call whole once complete, ``response.completed`` with
every item and the usage.
"""

from __future__ import annotations

import time
from typing import Any

from toolwire.stream.codecs.bridge._answer import Answer, Started
from toolwire.stream.codecs.emulation import token
from toolwire.types import FinishReason, ToolCall, Usage

__all__ = ["ChatAnswer", "ResponsesAnswer"]

_CHAT_FINISH = {"tool_calls": "tool_calls", "length": "length", "content_filter": "content_filter"}


def _shown(item: dict[str, Any]) -> dict[str, Any]:
    """An output item as it stands now: frames are written after the events
    that follow may have changed it, and its working fields are not sent."""
    return {key: value for key, value in item.items() if not key.startswith("_")}


def chat_usage(usage: Usage | None) -> dict[str, Any]:
    usage = usage or Usage()
    prompt, completion = usage.input_tokens or 0, usage.output_tokens or 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens or 0},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
    }


class ChatAnswer(Answer):
    """A ``/chat/completions`` stream."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._id = "chatcmpl-" + token(self.seed, 29)
        self._created = int(time.time())
        self._positions: dict[int, int] = {}

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        self.emit(
            {
                "id": self._id,
                "object": "chat.completion.chunk",
                "created": self._created,
                "model": self.asked.model,
                "choices": [choice],
            }
        )

    def opened(self) -> None:
        self._chunk({"role": "assistant", "content": ""})

    def on_text(self, text: str) -> None:
        self._chunk({"content": text})

    def on_reasoning(self, text: str) -> None:
        self._chunk({"reasoning_content": text})

    def on_started(self, call: Started) -> None:
        position = self._positions.setdefault(call.index, len(self._positions))
        opener = {
            "index": position,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        self._chunk({"tool_calls": [opener]})

    def on_delta(self, call: Started, delta: str) -> None:
        position = self._positions[call.index]
        self._chunk({"tool_calls": [{"index": position, "function": {"arguments": delta}}]})

    def closed(self, finish: FinishReason) -> None:
        self._chunk({}, _CHAT_FINISH.get(finish, "stop"))
        if self.asked.include_usage:
            self.emit(
                {
                    "id": self._id,
                    "object": "chat.completion.chunk",
                    "created": self._created,
                    "model": self.asked.model,
                    "choices": [],
                    "usage": chat_usage(self.usage),
                }
            )
        self.emit(None, raw="[DONE]")


def responses_usage(usage: Usage | None) -> dict[str, Any]:
    usage = usage or Usage()
    given, made = usage.input_tokens or 0, usage.output_tokens or 0
    return {
        "input_tokens": given,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens or 0},
        "output_tokens": made,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": given + made,
    }


class ResponsesAnswer(Answer):
    """A ``/v1/responses`` stream."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._id = "resp_" + token(self.seed, 48)
        self._created = int(time.time())
        self._items: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None
        """The text or reasoning item being written."""
        self._calls: dict[int, dict[str, Any]] = {}

    def _event(self, kind: str, **fields: Any) -> None:
        number = self._sent + len(self._frames)
        self.emit({"type": kind, "sequence_number": number, **fields}, event=kind)

    def _response(self, status: str) -> dict[str, Any]:
        response: dict[str, Any] = {
            "id": self._id,
            "object": "response",
            "created_at": self._created,
            "status": status,
            "model": self.asked.model,
            "output": [item for item in self._items if item.get("status") != "in_progress"],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
        if status != "in_progress":
            response["usage"] = responses_usage(self.usage)
        return response

    def opened(self) -> None:
        self._event("response.created", response=self._response("in_progress"))
        self._event("response.in_progress", response=self._response("in_progress"))

    def _add(self, item: dict[str, Any]) -> int:
        self._items.append(item)
        position = len(self._items) - 1
        self._event("response.output_item.added", output_index=position, item=_shown(item))
        return position

    def _done(self, position: int) -> None:
        item = self._items[position]
        item["status"] = "completed"
        self._event("response.output_item.done", output_index=position, item=_shown(item))

    def _writing(self, kind: str) -> tuple[dict[str, Any], int]:
        if self._open is None or self._open["type"] != kind:
            self._close_open()
            if kind == "message":
                item: dict[str, Any] = {
                    "id": "msg_" + token(f"{self.seed}:m{len(self._items)}", 48),
                    "type": kind,
                }
                item.update(status="in_progress", content=[], role="assistant")
            else:
                item = {"id": "rs_" + token(f"{self.seed}:r{len(self._items)}", 48), "type": kind}
                item.update(status="in_progress", summary=[])
            self._open = item
            position = self._add(item)
            if kind == "message":
                part = {"type": "output_text", "annotations": [], "text": ""}
                self._event(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=position,
                    content_index=0,
                    part=part,
                )
            else:
                self._event(
                    "response.reasoning_summary_part.added",
                    item_id=item["id"],
                    output_index=position,
                    summary_index=0,
                    part={"type": "summary_text", "text": ""},
                )
            item["_text"] = []
        return self._open, self._items.index(self._open)

    def _close_open(self) -> None:
        item, self._open = self._open, None
        if item is None:
            return
        position = self._items.index(item)
        text = "".join(item.pop("_text"))
        if item["type"] == "message":
            part = {"type": "output_text", "annotations": [], "text": text}
            common = {"item_id": item["id"], "output_index": position, "content_index": 0}
            self._event("response.output_text.done", **common, text=text)
            self._event("response.content_part.done", **common, part=part)
            item["content"] = [part]
        else:
            part = {"type": "summary_text", "text": text}
            common = {"item_id": item["id"], "output_index": position, "summary_index": 0}
            self._event("response.reasoning_summary_text.done", **common, text=text)
            self._event("response.reasoning_summary_part.done", **common, part=part)
            item["summary"] = [part]
        self._done(position)

    def on_text(self, text: str) -> None:
        item, position = self._writing("message")
        item["_text"].append(text)
        self._event(
            "response.output_text.delta",
            item_id=item["id"],
            output_index=position,
            content_index=0,
            delta=text,
        )

    def on_reasoning(self, text: str) -> None:
        item, position = self._writing("reasoning")
        item["_text"].append(text)
        self._event(
            "response.reasoning_summary_text.delta",
            item_id=item["id"],
            output_index=position,
            summary_index=0,
            delta=text,
        )

    def on_started(self, call: Started) -> None:
        self._close_open()
        if call.name in self.asked.freeform:
            return  # a custom tool's input is written whole, once complete
        item = {
            "id": "fc_" + token(f"{self.seed}:fc{call.index}", 48),
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call.id,
            "name": call.name,
        }
        self._calls[call.index] = item
        self._add(item)

    def on_delta(self, call: Started, delta: str) -> None:
        item = self._calls.get(call.index)
        if item is not None:
            position = self._items.index(item)
            self._event(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=position,
                delta=delta,
            )

    def on_ready(self, call: Started, whole: ToolCall) -> None:
        item = self._calls.get(call.index)
        if item is None:  # a custom tool's call, whole
            value = whole.arguments.get("input")
            text = value if isinstance(value, str) else ""
            item = {
                "id": "ctc_" + token(f"{self.seed}:ctc{call.index}", 48),
                "type": "custom_tool_call",
                "status": "in_progress",
                "call_id": call.id,
                "input": "",
                "name": call.name,
            }
            position = self._add(item)
            common = {"item_id": item["id"], "output_index": position}
            self._event("response.custom_tool_call_input.delta", **common, delta=text)
            self._event("response.custom_tool_call_input.done", **common, input=text)
            item["input"] = text
            self._done(position)
            return
        position = self._items.index(item)
        arguments = "".join(call.streamed)
        item["arguments"] = arguments
        self._event(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=position,
            arguments=arguments,
        )
        self._done(position)

    def closed(self, finish: FinishReason) -> None:
        self._close_open()
        status = "incomplete" if finish == "length" else "completed"
        response = self._response(status)
        if status == "incomplete":
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        kind = "response.incomplete" if status == "incomplete" else "response.completed"
        self._event(kind, response=response)
