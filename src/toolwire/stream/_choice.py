"""One choice of a stream while it is decoded: its text, its calls and how
a fragment finds the call it belongs to (see ``accumulate.py`` for the rules),
and what the choice reads as in the end."""

from __future__ import annotations

from typing import Any

from toolwire.stream._calls import INCOMPLETE, OPEN, OpenCall
from toolwire.stream.parts import MISSING, CallPart
from toolwire.types import (
    ChoiceResult,
    FinishReason,
    IncompleteToolCall,
    InvalidToolCall,
    RefusalDetails,
    ServerToolCall,
    ToolCall,
)

__all__ = ["Choice", "clean_id", "has_content", "late_problems"]


class Choice:
    __slots__ = (
        "by_id",
        "by_index",
        "calls",
        "finish_reason",
        "invalid",
        "raw_finish_reason",
        "ready",
        "reasoning",
        "reasoning_size",
        "refusal",
        "server_calls",
        "state",
        "text",
        "text_size",
    )

    def __init__(self) -> None:
        self.text: list[str] = []
        self.text_size = 0
        self.reasoning: list[str] = []
        self.reasoning_size = 0
        self.calls: list[OpenCall] = []
        self.by_id: dict[str, OpenCall] = {}
        self.by_index: dict[int, OpenCall] = {}
        self.ready: list[ToolCall] = []
        self.invalid: list[InvalidToolCall] = []
        self.server_calls: list[ServerToolCall] = []
        self.state: list[dict[str, Any]] = []
        self.finish_reason: FinishReason | None = None
        self.raw_finish_reason: str | None = None
        self.refusal: RefusalDetails | None = None

    def find(self, call_id: str | None, index: int | None) -> OpenCall | None:
        """The call a piece with this id and raw index belongs to, if any."""
        if call_id is not None:
            call = self.by_id.get(call_id)
            if call is not None:
                return call
            # A new id: its own call, unless the call it would otherwise
            # attach to has no id yet.
            candidate = self.by_position(index)
            return candidate if candidate is not None and candidate.id is None else None
        return self.by_position(index)

    def by_position(self, index: int | None) -> OpenCall | None:
        if index is not None:
            return self.by_index.get(index)
        return self.calls[-1] if self.calls else None

    def incomplete(self) -> tuple[IncompleteToolCall, ...]:
        return tuple(
            IncompleteToolCall(
                id=call.id,
                name=call.name or None,
                raw_arguments=call.raw_text(),
                index=call.position,
            )
            for call in self.calls
            if call.state in (OPEN, INCOMPLETE)
        )

    def result(self, index: int) -> ChoiceResult:
        return ChoiceResult(
            index=index,
            text="".join(self.text),
            reasoning="".join(self.reasoning),
            finish_reason=self.finish_reason,
            raw_finish_reason=self.raw_finish_reason,
            tool_calls=tuple(sorted(self.ready, key=lambda t: t.index)),
            invalid_tool_calls=tuple(self.invalid),
            incomplete_tool_calls=self.incomplete(),
            server_tool_calls=tuple(self.server_calls),
            provider_state=tuple(self.state),
            refusal=self.refusal,
        )


def clean_id(value: str | None) -> str | None:
    """An id or a name as sent, or ``None`` for the placeholders some
    providers send on continuations (``""``, the string ``"null"``)."""
    if not value or value == "null":
        return None
    return value


def has_content(part: CallPart) -> bool:
    """Whether a part says anything about a call beyond empty identity."""
    return bool(
        (part.args and part.args.strip())
        or part.args_value is not MISSING
        or part.args_final
        or part.partial is not None
        or part.done
    )


def late_problems(call: OpenCall, part: CallPart, name: str) -> list[str]:
    """What a part for an already complete call would change: nothing for the
    harmless repeats (trailing empty deltas, the same name again), nothing
    for a call already invalid (too long, not UTF-8)."""
    if call.problem is not None:
        return []
    problems = []
    if part.args and part.args.strip() and part.args.strip() != call.raw_text().strip():
        # The whole arguments once more is a repeat (vLLM's and SGLang's tool
        # parsers append them to the last delta under speculative decoding).
        problems.append("more argument text")
    if name and name != call.name:
        problems.append(f"a different name {name!r}")
    if part.args_final is not None and part.args_final.strip() != call.raw_text().strip():
        problems.append("different final arguments")
    if part.args_value is not MISSING and call.args_value is MISSING:
        problems.append("an arguments object")
    if part.changed is not None:
        problems.append(f"an end that changes it ({part.changed})")
    return problems
