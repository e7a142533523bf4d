"""The emulation server's OpenAI Responses encoder.

Key orders follow ``openai/responses_single_call_numbers.sse`` (``type`` first,
the other keys sorted; ``sequence_number`` on every event); reasoning text as
in ``deepseek/responses_api_reasoning_then_call.sse``.
"""

from __future__ import annotations

from typing import Any

from toolwire.stream import jsonio
from toolwire.stream.codecs._reading import as_object, model_of, text_of
from toolwire.stream.codecs.emulation._base import (
    Encoder,
    Frame,
    Reply,
    ReplyCall,
    fragments,
    hex_token,
    merge_error,
    openai_error,
    token,
)
from toolwire.stream.codecs.emulation._request import (
    BadRequest,
    History,
    ParsedRequest,
    get_bool,
    looks_like_error,
)
from toolwire.stream.codecs.emulation.openai_responses_steer import (
    STEERED,
    steer_after_created,
    steer_after_end,
)
from toolwire.stream.codecs.openai_responses_items import ANSWER_ITEMS

__all__ = ["ASSISTANT_ITEMS", "OpenAIResponsesEncoder"]


class OpenAIResponsesEncoder(Encoder):
    """``POST /v1/responses``."""

    dialect = "openai-responses"

    @staticmethod
    def ids(reply: Reply) -> dict[str, str]:
        """The response, reasoning and message item ids of ``reply``."""
        seed = reply.seed
        return {
            "response": "resp_" + hex_token(seed + ":resp", 50),
            "reasoning": "rs_" + hex_token(seed + ":rs", 50),
            "message": "msg_" + hex_token(seed + ":msg", 50),
        }

    def stream_key(self, reply: Reply) -> str | None:
        """A background response is kept under its id (any other is not)."""
        return self.ids(reply)["response"] if reply.request.background else None

    def event_id(self, frame: Frame) -> str | None:
        """An event's ``sequence_number`` (``starting_after`` names one)."""
        found = frame.payload.get("sequence_number") if isinstance(frame.payload, dict) else None
        return str(found) if type(found) is int else None

    @staticmethod
    def call_ids(reply: Reply, index: int) -> tuple[str, str]:
        """``(item id, call_id)`` of tool call ``index``: ``fc_...`` and ``call_...``."""
        seed = f"{reply.seed}:call:{index}"
        return "fc_" + hex_token(seed, 50), "call_" + token(seed, 24)

    def _response(
        self, reply: Reply, status: str, output: list[Any], *, done: bool
    ) -> dict[str, Any]:
        request = reply.request
        return {
            "id": self.ids(reply)["response"],
            "object": "response",
            "created_at": reply.created,
            "status": status,
            "background": request.background,
            "completed_at": reply.created if done else None,
            "error": None,
            "frequency_penalty": 0.0,
            "incomplete_details": None,
            "instructions": request.instructions,
            "max_output_tokens": None,
            "max_tool_calls": None,
            "model": request.model,
            "output": output,
            "parallel_tool_calls": True,
            "presence_penalty": 0.0,
            "previous_response_id": None,
            "prompt_cache_key": None,
            "prompt_cache_retention": None,
            "reasoning": {"effort": None, "summary": None},
            "safety_identifier": None,
            "service_tier": "default" if done else "auto",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": request.tools,
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": self._usage(reply) if done else None,
            "user": None,
            "metadata": {},
        }

    @staticmethod
    def _usage(reply: Reply) -> dict[str, Any]:
        return {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }

    def _items(self, reply: Reply) -> list[dict[str, Any]]:
        """The completed output items, in output order."""
        ids = self.ids(reply)
        items: list[dict[str, Any]] = []
        if reply.reasoning:
            items.append(
                {
                    "id": ids["reasoning"],
                    "type": "reasoning",
                    "status": "completed",
                    "content": [{"type": "reasoning_text", "text": reply.reasoning}],
                    "summary": [],
                }
            )
        items.extend(reply.items_after("reasoning"))
        # Asynchronous calls come first: the model keeps streaming after them.
        ahead = [c for c in reply.calls if c.fields.get("async") is True]
        items.extend(self._call_item(reply, call) for call in ahead)
        if reply.text:
            items.append(
                {
                    "id": ids["message"],
                    "type": "message",
                    "status": "completed",
                    "content": [self._text_part(reply.text)],
                    "role": "assistant",
                }
            )
        items.extend(reply.items_after("text"))
        items.extend(self._call_item(reply, call) for call in reply.calls if call not in ahead)
        items.extend(reply.items_after("calls"))
        return items

    def _call_item(self, reply: Reply, call: ReplyCall) -> dict[str, Any]:
        item_id, call_id = self.call_ids(reply, call.index)
        if call.custom:
            item = {"id": "ctc_" + item_id[3:], "type": "custom_tool_call"}
            item.update(status="completed", call_id=call_id, input=call.raw_arguments)
        else:
            item = {"id": item_id, "type": "function_call", "status": "completed"}
            item.update(arguments=call.raw_arguments, call_id=call_id)
            if "repeated_object" in reply.quirks:  # as the compatible servers known for it
                item["arguments"] += call.raw_arguments
            if "missing_ids" in reply.quirks:
                del item["call_id"]
        return {**item, "name": call.name, **call.fields}

    @staticmethod
    def _text_part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}

    def stream(self, reply: Reply) -> list[Frame]:
        """``response.created`` ... ``response.completed``, one item after another
        (a background response is ``queued`` before it is ``in_progress``)."""
        out = _Events(reply)
        if reply.request.background:  # queued first, as OpenAI runs background responses
            queued = self._response(reply, "queued", [], done=False)
            out.emit("response.created", response=queued)
            out.emit("response.queued", response=queued)
        else:
            out.emit(
                "response.created", response=self._response(reply, "in_progress", [], done=False)
            )
        response_id = self.ids(reply)["response"]
        if (said := steer_after_created(reply, response_id)) is not None:
            out.emit(said[0], **said[1])
        out.emit(
            "response.in_progress", response=self._response(reply, "in_progress", [], done=False)
        )
        done_items = self._items(reply)
        for output_index, item in enumerate(done_items):
            kind = item["type"]
            if kind == "function_call":
                opened = dict(item, status="in_progress", arguments="")
            elif kind == "custom_tool_call":
                opened = dict(item, status="in_progress", input="")
            elif kind not in ("reasoning", "message"):
                opened = item
            else:
                opened = dict(item, status="in_progress", content=[])
            out.emit("response.output_item.added", item=opened, output_index=output_index)
            where = {"item_id": item["id"], "output_index": output_index}
            if kind == "reasoning":
                out.reasoning(item, where)
            elif kind == "message":
                out.message(item, where, self._text_part(""))
            elif kind == "custom_tool_call":
                out.custom_input(item, where)
            elif kind == "function_call":
                out.arguments(item, where)
            out.emit("response.output_item.done", item=item, output_index=output_index)
        response = self.body(reply, done_items)
        out.emit(f"response.{response['status']}", response=response)
        if (said := steer_after_end(reply, response_id, done_items)) is not None:
            out.emit(said[0], **said[1])
        return out.frames

    def body(self, reply: Reply, items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """A ``response`` object with status ``completed``; ``incomplete``,
        for the reason a scenario's ``provider_finish`` names (``steered``...)."""
        output = self._items(reply) if items is None else items
        finish = reply.finish or (STEERED if reply.steer == "accepted" else None)
        if finish is None:
            return self._response(reply, "completed", output, done=True)
        response = self._response(reply, "incomplete", output, done=True)
        response["incomplete_details"] = {"reason": finish}
        return response

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        return openai_error(status, message)

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``event: error`` with ``{"type": "error", "code", "message", "param", ...}``."""
        payload = merge_error(
            {
                "type": "error",
                "code": "server_error",
                "message": "The server had an error while processing your request.",
                "param": None,
            },
            {k: v for k, v in error.items() if k != "type"},
        )
        # The event's own "type" is "error"; an error kind given by the fault
        # has no field of its own here, so it stands in for a missing code.
        if error.get("type") and "code" not in error:
            payload["code"] = error["type"]
        payload["sequence_number"] = sequence_number
        return Frame(payload, event="error")


class _Events:
    """The events of one streamed response, numbered as they are emitted."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.frames: list[Frame] = []

    def emit(self, kind: str, **fields: Any) -> None:
        # OpenAI sends "type" first and the other keys sorted.
        payload: dict[str, Any] = {"type": kind}
        fields["sequence_number"] = len(self.frames)
        for key in sorted(fields):
            payload[key] = fields[key]
        self.frames.append(Frame(payload, event=kind))

    def pad(self) -> str:
        """An ``obfuscation`` value, as OpenAI pads its deltas."""
        seed = f"{self.reply.seed}:pad:{len(self.frames)}"
        return token(seed, 6 + int(hex_token(seed, 1), 16) % 10)

    def reasoning(self, item: dict[str, Any], where: dict[str, Any]) -> None:
        part = {"type": "reasoning_text", "text": ""}
        self.emit("response.content_part.added", content_index=0, part=part, **where)
        for piece in fragments(self.reply.reasoning, self.reply.chunk_size):
            self.emit("response.reasoning_text.delta", content_index=0, delta=piece, **where)
        text = self.reply.reasoning
        self.emit("response.reasoning_text.done", content_index=0, text=text, **where)
        done = item["content"][0]
        self.emit("response.content_part.done", content_index=0, part=done, **where)

    def message(self, item: dict[str, Any], where: dict[str, Any], empty: dict[str, Any]) -> None:
        self.emit("response.content_part.added", content_index=0, part=empty, **where)
        for piece in fragments(self.reply.text, self.reply.chunk_size):
            self.emit(
                "response.output_text.delta",
                content_index=0,
                delta=piece,
                logprobs=[],
                obfuscation=self.pad(),
                **where,
            )
        text = self.reply.text
        self.emit("response.output_text.done", content_index=0, logprobs=[], text=text, **where)
        done = item["content"][0]
        self.emit("response.content_part.done", content_index=0, part=done, **where)

    def custom_input(self, item: dict[str, Any], where: dict[str, Any]) -> None:
        for piece in fragments(item["input"], self.reply.chunk_size):
            self.emit("response.custom_tool_call_input.delta", delta=piece, **where)
        self.emit("response.custom_tool_call_input.done", input=item["input"], **where)

    def arguments(self, item: dict[str, Any], where: dict[str, Any]) -> None:
        for piece in fragments(item["arguments"], self.reply.chunk_size):
            self.emit(
                "response.function_call_arguments.delta",
                delta=piece,
                obfuscation=self.pad(),
                **where,
            )
        arguments = item["arguments"]
        self.emit("response.function_call_arguments.done", arguments=arguments, **where)


# -- requests ---------------------------------------------------------------------


ASSISTANT_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "reasoning",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "mcp_approval_request",
        "mcp_list_tools",
        "tool_search_call",
        "tool_search_output",
        "compaction",
        "program",
        "program_output",
    }
)
"""The input items that are the model's own output, sent back (besides an
assistant ``message``)."""
_RESPONSES_OUTPUTS = ANSWER_ITEMS


def _is_input(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("type") in (
        "input_text",
        "input_image",
        "input_file",
    )


def _responses_result(item: dict[str, Any], where: str, history: History) -> None:
    """A tool result of a Responses input item: its call's id and its text
    (``approved`` or ``denied: <reason>`` for an MCP approval response)."""
    kind = item.get("type")
    if kind == "mcp_approval_response":
        call_id = item.get("approval_request_id")
        approved = item.get("approve") is True
        content = "approved" if approved else f"denied: {item.get('reason') or ''}".strip()
    else:
        call_id = item.get("id") if kind == "local_shell_call_output" else item.get("call_id")
        output = item.get("output")
        content = text_of(output) if not isinstance(output, list | dict) else jsonio.dumps(output)
        if isinstance(output, list) and all(_is_input(entry) for entry in output):
            content = text_of(output)  # input_text, input_image, input_file: its text
        approved = item.get("status") != "failed"
    if not isinstance(call_id, str):
        raise BadRequest(f"{where}: the id of the call it answers must be a string")
    history.result(call_id, content, not approved or looks_like_error(content))


def decode_request(
    data: dict[str, Any], model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """What the emulation server reads of a ``/responses`` request."""
    if data.get("previous_response_id") is not None:
        raise BadRequest(
            "previous_response_id is not supported: the emulation server keeps no "
            "state, send the whole conversation in 'input'"
        )
    raw_input = data.get("input")
    items: list[Any] = (
        [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else []
    )
    if isinstance(raw_input, list):
        items = raw_input
    elif not isinstance(raw_input, str):
        raise BadRequest("'input' must be a string or an array")
    history = History(data.get("instructions"))
    in_assistant_run = False
    for i, raw in enumerate(items):
        item = as_object(raw, f"input[{i}]")
        kind = item.get("type", "message")
        is_assistant = kind in ASSISTANT_ITEMS or (
            kind == "message" and item.get("role") == "assistant"
        )
        if kind in ASSISTANT_ITEMS:
            call_id = item.get("id") if kind == "mcp_approval_request" else item.get("call_id")
            name = item.get("name", str(kind).removesuffix("_call"))
            if isinstance(call_id, str) and isinstance(name, str):
                history.names[call_id] = name
        if is_assistant:
            # One assistant turn may span several items (reasoning, message,
            # function calls): count a run of them once.
            if not in_assistant_run:
                history.assistant()
            in_assistant_run = True
            continue
        in_assistant_run = False
        if kind in _RESPONSES_OUTPUTS:
            _responses_result(item, f"input[{i}]", history)
        history.passed(item)
    tools = data.get("tools")
    instructions = data.get("instructions")
    background = _background(data)
    return history.parsed(
        dialect="openai-responses",
        model=model_of(data),
        stream=get_bool(data, "stream"),
        tools=tools if isinstance(tools, list) else [],
        instructions=instructions if isinstance(instructions, str) else None,
        background=background,
    )


def _background(data: dict[str, Any]) -> bool:
    """Whether the request asks for background mode, as OpenAI accepts it:
    stored, and (here) streamed."""
    if not get_bool(data, "background"):
        return False
    if data.get("store") is False:
        raise BadRequest("background mode requires store=true")
    if not get_bool(data, "stream"):
        raise BadRequest(
            "the emulation server answers background requests streamed only: send stream=true"
        )
    return True
