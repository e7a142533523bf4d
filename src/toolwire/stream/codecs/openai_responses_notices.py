"""What a Responses stream reports about the response rather than answers:
settings for later responses (``configuration_update`` items), the
round-tripped reasoning the server withheld (``input_transformations``), and
what became of a steer (``response.steer.accepted``, ``.failed``, ``.pending``).

Each is a ``ProviderNotice`` event. A ``configuration_update`` item is also
provider state, sent back in its place (it is an input item: the settings
hold until a later update replaces them). The server's account of dropped
reasoning and a pending steer are kept as provider state too, never sent
back (they are no input items): ``{"type": "input_transformations",
"items"}`` and ``{"type": "steer_pending", "steer", "reason",
"required_input", "owed"}``: the stubs of the answers the client owes (the
tool results and approvals of the response; ``owed``, their call ids), to
be filled from recorded outcomes without running anything again.
References: openai-python's ``ResponseConfigurationUpdateItem``,
``Response.input_transformations``, ``ResponseSteer{Accepted,Failed,Pending}Event``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from toolwire.stream.codecs._common import as_list, as_obj
from toolwire.stream.parts import NoticePart, Part, StatePart

__all__ = [
    "INPUT_TRANSFORMATIONS",
    "STEER_EVENTS",
    "STEER_PENDING",
    "configuration_notice",
    "input_transformations",
    "steer_event",
    "steer_request",
]

DIALECT_NAME = "openai-responses"

INPUT_TRANSFORMATIONS: Final = "input_transformations"
STEER_PENDING: Final = "steer_pending"
STEER_EVENTS: Final = frozenset(
    {"response.steer.accepted", "response.steer.failed", "response.steer.pending"}
)


def configuration_notice(item: dict[str, Any]) -> NoticePart:
    """A ``configuration_update`` item's notice (the item itself is state)."""
    settings = []
    reasoning = item.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort") is not None:
        settings.append(f"reasoning effort {reasoning['effort']!r}")
    text = item.get("text")
    if isinstance(text, dict) and isinstance(text.get("format"), dict):
        settings.append(f"text format {text['format'].get('type')!r}")
    said = ", ".join(settings) or "no setting toolwire reads"
    message = f"the provider applies new settings to the responses that follow: {said}"
    return NoticePart(DIALECT_NAME, "configuration_update", item, message)


def input_transformations(response: dict[str, Any]) -> list[Part]:
    """The reasoning items of the input the server withheld from the model:
    a warning, and the account kept as state."""
    found = response.get(INPUT_TRANSFORMATIONS)
    if not found:
        return []
    items = [as_obj(i, f"{DIALECT_NAME}: input transformation") for i in
             as_list(found, f"{DIALECT_NAME}: {INPUT_TRANSFORMATIONS}")]  # fmt: skip
    dropped = ", ".join(f"{i.get('id')} ({i.get('reason')})" for i in items)
    message = f"the server withheld round-tripped reasoning from the model: {dropped}"
    payload = {INPUT_TRANSFORMATIONS: items}
    return [
        NoticePart(DIALECT_NAME, INPUT_TRANSFORMATIONS, payload, message, warning=True),
        StatePart({"type": INPUT_TRANSFORMATIONS, "items": items}),
    ]


def steer_event(kind: str, obj: dict[str, Any]) -> list[Part]:
    """A steer's acknowledgement: a notice; a pending steer's stubs, state too."""
    steer: dict[str, Any] = obj["steer"] if isinstance(obj.get("steer"), dict) else {}
    target = steer.get("previous_response_id")
    if kind == "response.steer.accepted":
        message = f"steer {steer.get('id')} for response {target} was accepted and queued"
        return [NoticePart(DIALECT_NAME, kind, obj, message)]
    if kind == "response.steer.failed":
        error: dict[str, Any] = obj["error"] if isinstance(obj.get("error"), dict) else {}
        message = (
            f"steer {steer.get('id') or '(no id)'} for response {target} failed "
            f"({error.get('code')}): {error.get('message')}; its input was returned"
        )
        return [NoticePart(DIALECT_NAME, kind, obj, message, warning=True)]
    stubs = [as_obj(s, f"{DIALECT_NAME}: required_input") for s in
             as_list(obj.get("required_input"), f"{DIALECT_NAME}: required_input")]  # fmt: skip
    reason = obj.get("reason")
    message = (
        f"steer {steer.get('id')} for response {target} waits ({reason}) for "
        f"{len(stubs)} answer(s) the client owes: "
        + ", ".join(
            f"{s.get('type')} {s.get('call_id') or s.get('approval_request_id')}" for s in stubs
        )
    )
    owed = [s.get("call_id") or s.get("approval_request_id") for s in stubs]
    state = {
        "type": STEER_PENDING,
        "steer": steer,
        "reason": reason,
        "required_input": stubs,
        "owed": [str(i) for i in owed if i],
    }
    return [NoticePart(DIALECT_NAME, kind, obj, message), StatePart(state)]


def steer_request(response_id: str, texts: Sequence[str]) -> dict[str, Any]:
    """The client event that steers the live response ``response_id`` on a
    Responses WebSocket connection with ``texts``, each a user message
    (openai-python's ``ResponseSteerEvent``: only ``type``,
    ``previous_response_id`` and ``input``; HTTP has none)."""
    messages = [{"type": "message", "role": "user", "content": text} for text in texts]
    return {"type": "response.steer", "previous_response_id": response_id, "input": messages}
