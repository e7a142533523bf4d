"""OpenAI Responses API streams (also Azure, Bedrock "mantle", LM Studio,
DeepSeek's and others' Responses-compatible endpoints).

Every event's payload has a ``type`` (Bedrock puts the ``data:`` line before
the ``event:`` line, so the payload, not the SSE event name, is what counts).
A function call is an output item: ``response.output_item.added`` opens it
(with ``call_id`` and ``name``), ``response.function_call_arguments.delta``
streams its arguments keyed by ``output_index``, ``...arguments.done`` carries
the complete text (some servers send only that), ``response.output_item.done``
ends it. Reasoning items come first, so a call's ``output_index`` is often not
0; encrypted reasoning items are kept as provider state to be sent back.
Reference: https://platform.openai.com/docs/api-reference/responses-streaming
"""

from __future__ import annotations

from typing import Any

from toolwire._json import loads_fast as _loads
from toolwire.codecs._common import error_event, is_done_trailer, load_payload
from toolwire.codecs._parts import (
    CallPart,
    ErrorPart,
    FinishPart,
    Part,
    ReasoningPart,
    StatePart,
    StreamEndPart,
    TextPart,
    TrailerPart,
    UsagePart,
    as_int,
    as_obj,
    as_str,
    int_or_none,
    meta_part,
)
from toolwire.errors import RemoteProtocolError
from toolwire.types import Usage

__all__ = ["OpenAIResponsesCodec", "usage_from_responses"]

API = "openai-responses"

_TEXT_DELTAS = {"response.output_text.delta", "response.refusal.delta"}
_TEXT_DONE = {"response.output_text.done", "response.refusal.done"}
_REASONING_DELTAS = {"response.reasoning_text.delta", "response.reasoning_summary_text.delta"}
_REASONING_DONE = {"response.reasoning_text.done", "response.reasoning_summary_text.done"}


def usage_from_responses(raw: dict[str, Any]) -> Usage:
    """Responses usage (``input_tokens``...) as a :class:`Usage`."""
    out_details = raw.get("output_tokens_details")
    in_details = raw.get("input_tokens_details")
    return Usage(
        input_tokens=int_or_none(raw.get("input_tokens")),
        output_tokens=int_or_none(raw.get("output_tokens")),
        total_tokens=int_or_none(raw.get("total_tokens")),
        reasoning_tokens=int_or_none(out_details.get("reasoning_tokens"))
        if isinstance(out_details, dict)
        else None,
        cached_tokens=int_or_none(in_details.get("cached_tokens"))
        if isinstance(in_details, dict)
        else None,
        raw=raw,
    )


class OpenAIResponsesCodec:
    """Decodes Responses stream events into parts."""

    api = API

    def __init__(self) -> None:
        # (item_id, content_index) of text/reasoning that arrived as deltas,
        # so a later ``.done`` with the whole text is not counted twice.
        self._streamed: set[tuple[Any, Any]] = set()
        self._calls = 0
        self.quirks: set[str] = set()

    def decode(self, event: str, data: str) -> list[Part]:
        if '"response.function_call_arguments.delta"' in data[:64]:
            # The hot path: numbers travel inside the delta string, so the
            # fast parser loses nothing (see toolwire._json).
            try:
                obj = _loads(data)
            except ValueError:
                obj = load_payload(data, API)  # raises the descriptive error
        elif is_done_trailer(data):
            self.quirks.add("[DONE] line after the dialect's own end event")
            return [TrailerPart()]
        else:
            obj = load_payload(data, API)
        kind = obj.get("type") or event
        parts: list[Part] = []
        if kind == "response.function_call_arguments.delta":
            delta = as_str(obj.get("delta"), f"{API}: delta") or ""
            parts.append(CallPart(index=self._index(obj), args=delta))
        elif kind in _TEXT_DELTAS or kind in _REASONING_DELTAS:
            self._streamed.add(
                (obj.get("item_id"), obj.get("content_index", obj.get("summary_index")))
            )
            text = as_str(obj.get("delta"), f"{API}: delta") or ""
            if text:
                parts.append(TextPart(text) if kind in _TEXT_DELTAS else ReasoningPart(text))
        elif kind in _TEXT_DONE or kind in _REASONING_DONE:
            key = (obj.get("item_id"), obj.get("content_index", obj.get("summary_index")))
            if key not in self._streamed:
                field = "refusal" if kind == "response.refusal.done" else "text"
                text = as_str(obj.get(field), f"{API}: {field}") or ""
                if text:
                    parts.append(TextPart(text) if kind in _TEXT_DONE else ReasoningPart(text))
        elif kind == "response.function_call_arguments.done":
            final = as_str(obj.get("arguments"), f"{API}: arguments")
            if final is not None:
                parts.append(CallPart(index=self._index(obj), args_final=final))
        elif kind == "response.output_item.added":
            item = as_obj(obj.get("item"), f"{API}: item")
            if item.get("type") == "function_call":
                self._calls += 1
                args = as_str(item.get("arguments"), f"{API}: arguments")
                parts.append(
                    CallPart(
                        index=self._index(obj),
                        id=as_str(item.get("call_id"), f"{API}: call_id"),
                        name=as_str(item.get("name"), f"{API}: name"),
                        args=args or None,
                        new=True,
                    )
                )
        elif kind == "response.output_item.done":
            item = as_obj(obj.get("item"), f"{API}: item")
            item_type = item.get("type")
            if item_type == "function_call":
                parts.append(
                    CallPart(
                        index=self._index(obj),
                        id=as_str(item.get("call_id"), f"{API}: call_id"),
                        name=as_str(item.get("name"), f"{API}: name"),
                        args_final=as_str(item.get("arguments"), f"{API}: arguments"),
                        done=True,
                    )
                )
            elif item_type == "reasoning":
                parts.append(StatePart(item))
        elif kind in ("response.created", "response.in_progress"):
            response = obj.get("response")
            if isinstance(response, dict):
                parts.append(meta_part(response.get("model"), response.get("id")))
        elif kind in ("response.completed", "response.incomplete"):
            response = as_obj(obj.get("response"), f"{API}: response")
            usage = response.get("usage")
            if usage:
                parts.append(UsagePart(usage_from_responses(as_obj(usage, f"{API}: usage"))))
            if kind == "response.completed":
                reason = "tool_calls" if self._calls else "stop"
                parts.append(FinishPart(reason, str(response.get("status") or "completed")))
            else:
                details = response.get("incomplete_details")
                raw = details.get("reason") if isinstance(details, dict) else None
                reason = "content_filter" if raw == "content_filter" else "length"
                parts.append(FinishPart(reason, raw if isinstance(raw, str) else "incomplete"))
            parts.append(StreamEndPart())
        elif kind == "response.failed":
            response = obj.get("response")
            err = response.get("error") if isinstance(response, dict) else None
            parts.append(ErrorPart(error_event(err or obj, API)))
        elif kind == "error":
            parts.append(ErrorPart(error_event(obj, API)))
        return parts

    @staticmethod
    def _index(obj: dict[str, Any]) -> int:
        index = as_int(obj.get("output_index"), f"{API}: output_index")
        if index is None:
            raise RemoteProtocolError(f"{API}: {obj.get('type')} has no output_index")
        return index
