"""Questions a running tool asks a person (an MCP server's elicitation), and
where their answers come from.

Theory of operation: an agent running a batch of tools sets a
:class:`Questions` for it in a context variable (:func:`asking`); a tool
that needs a person's answer in the middle of its call (an MCP tool whose
server elicits) calls :meth:`Questions.ask` with its call id and the
:class:`Question`. The answer comes from, in order: the run's journal (an
answer given to the suspended run, matched by call and by the question's
digest, so the same question is never asked twice), the in-process callback
the tool brought (its answer journaled too, so a resumed run does not ask
it again), or nobody: then the question is kept in
:attr:`Questions.waiting`, the tool gives up its call, and the agent
suspends the run on it (``toolwire runs pending`` lists it, ``toolwire
runs answer`` answers it). Outside an agent's batch there is no
:class:`Questions`, and :meth:`Questions.ask` is never reached: the tool
declines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Question", "QuestionAnswer", "QuestionCallback", "Questions", "asking"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """What a tool asks a person: a message and the JSON Schema of the answer."""

    message: str
    schema: dict[str, Any] = field(default_factory=dict[str, Any])
    """The answer's schema (an MCP ``requestedSchema``: flat, primitive properties)."""
    source: str = ""
    """Who asks (an MCP server's name)."""

    @property
    def digest(self) -> str:
        """``sha256:`` of the question's canonical JSON (message and schema):
        an answer is reused only for the very question it answered."""
        text = json.dumps(
            {"message": self.message, "schema": self.schema},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: message, schema, source and digest."""
        return {
            "message": self.message,
            "schema": self.schema,
            "source": self.source,
            "digest": self.digest,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionAnswer:
    """A person's answer: ``accept`` with the ``content`` asked for,
    ``decline``, or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


QuestionCallback = Callable[[Question], Awaitable[QuestionAnswer]]
"""Answers a question in process (``connect_stdio(..., elicit=...)``)."""


@dataclass
class Questions:
    """The questions of one batch of tool calls (see the module doc)."""

    answers: Mapping[str, Mapping[str, QuestionAnswer]] = field(
        default_factory=dict[str, Mapping[str, QuestionAnswer]]
    )
    """Answers given to the suspended run: by call id, then question digest."""
    waiting: dict[str, Question] = field(default_factory=dict[str, Question])
    """The questions nobody could answer, by call id: the run suspends on them."""
    answered: Callable[[str, Question, QuestionAnswer], Awaitable[None]] | None = None
    """Told of each answer the callback gives (the agent journals it, so the
    call made again on resume gets it without asking again)."""

    async def ask(
        self, call_id: str, question: Question, callback: QuestionCallback | None = None
    ) -> QuestionAnswer | None:
        """The answer to ``question`` asked by call ``call_id``: recorded,
        or from ``callback``; ``None`` when the run must wait for one."""
        recorded = self.answers.get(call_id, {}).get(question.digest)
        if recorded is not None:
            return recorded
        if callback is not None:
            answer = await callback(question)
            if self.answered is not None:
                await self.answered(call_id, question, answer)
            return answer
        self.waiting.setdefault(call_id, question)
        return None


asking: ContextVar[Questions | None] = ContextVar("toolwire_questions", default=None)
"""The :class:`Questions` of the batch running in this context (set by the agent)."""
