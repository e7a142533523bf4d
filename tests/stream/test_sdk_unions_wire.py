"""The August 2026 wire items, derived from the installed SDKs' own unions and
literals, as the "nothing dropped" tests do: an item, event, status or finish
word a later SDK adds fails here until toolwire decides what it means."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import openai.types.responses as responses_types
from anthropic.types import MessageParam, StopReason
from google.genai._gaos.types.interactions.interaction import InteractionStatus
from openai.types.responses import ResponseItem
from pydantic import BaseModel

from toolwire.stream.codecs import anthropic, gemini_interactions, openai_responses
from toolwire.stream.codecs.openai_responses_notices import STEER_EVENTS

# Statuses of an interaction still running: never a finish.
_RUNNING = {"in_progress", "queued", "idle"}


def _literals(annotation: Any) -> list[str]:
    if typing.get_origin(annotation) is typing.Literal:
        return [v for v in typing.get_args(annotation) if isinstance(v, str)]
    out: list[str] = []
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Literal:
            out.extend(typing.get_args(arg))
        elif typing.get_args(arg):
            out.extend(_literals(arg))
    return [v for v in out if isinstance(v, str)]


def _union_types(union: Any) -> set[str]:
    args = typing.get_args(union)
    if typing.get_origin(union) is typing.Annotated:
        args = typing.get_args(args[0])
    found: set[str] = set()
    for member in args:
        if (
            inspect.isclass(member)
            and issubclass(member, BaseModel)
            and "type" in member.model_fields
        ):
            found.update(_literals(member.model_fields["type"].annotation))
    return found


def test_every_anthropic_message_role_is_read() -> None:
    roles = {
        _literals(typing.get_type_hints(member)["role"])[0]
        for member in typing.get_args(MessageParam)
    }
    assert roles == {"user", "assistant", "system"}  # see test_anthropic_system_in_messages


def test_every_anthropic_stop_reason_has_its_own_word() -> None:
    assert set(typing.get_args(StopReason)) <= set(anthropic.RAW_FINISH_REASONS)


def test_every_final_interaction_status_has_a_word() -> None:
    statuses = set(_literals(InteractionStatus)) - _RUNNING
    assert statuses == set(gemini_interactions.STATUSES)
    assert gemini_interactions.STATUSES["requires_continuation"] == "paused"


def test_every_responses_item_the_sdk_names_lands_somewhere() -> None:
    known = (
        set(openai_responses.STATE_ITEMS)
        | set(openai_responses.ASKED_CALLS)
        | set(openai_responses.SERVER_ITEMS)
        | {"message", "function_call", "custom_tool_call", "item_reference"}
    )
    missing = sorted(_union_types(ResponseItem) - known)
    assert not missing, f"ResponseItem names items toolwire does not place: {missing}"
    assert "configuration_update" in openai_responses.STATE_ITEMS


def test_every_steer_event_the_sdk_names_is_read() -> None:
    steer: set[str] = set()
    for _, cls in inspect.getmembers(responses_types, inspect.isclass):
        if issubclass(cls, BaseModel) and "type" in cls.model_fields:
            steer.update(t for t in _literals(cls.model_fields["type"].annotation)
                         if t.startswith("response.steer."))  # fmt: skip
    assert steer == set(STEER_EVENTS)
