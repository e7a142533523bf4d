"""A running tool asking the run's model for a completion (an MCP server's
sampling), and who serves it.

Theory of operation: an agent running a batch of tools sets a
:class:`Sampler` for it in a context variable (:data:`sampling`); a tool
that needs the model in the middle of its call (an MCP tool whose server
sends ``sampling/createMessage``, on a connection that permits it) calls
:meth:`Sampler.sample` with its call id and the :class:`SamplingRequest`.
The agent serves it with its own provider and model, under the run's limits,
counts it in the run's usage and journals it. Outside an agent's batch (or
in an eager call, which runs while the model streams) there is no
:class:`Sampler`, and the tool refuses the request.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from toolwire.messages import AssistantMessage, UserMessage

if TYPE_CHECKING:
    from toolwire.cost import Cost
    from toolwire.types import FinishReason, Usage

__all__ = ["Sample", "Sampler", "SamplingRequest", "sampling"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingRequest:
    """What a tool asks the run's model: a short conversation of its own
    (not the run's), with its own system prompt and token budget."""

    messages: tuple[UserMessage | AssistantMessage, ...]
    system: str | None = None
    max_tokens: int | None = None
    """The most tokens the answer may take (the asker's; ``None``: the run's)."""
    temperature: float | None = None
    source: str = ""
    """Who asks (an MCP server's name)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """A completion served for a tool: what the model answered, what it used
    and cost, or why it was refused (``error``: nothing was answered)."""

    source: str
    model: str
    text: str = ""
    finish_reason: FinishReason | None = None
    usage: Usage | None = None
    cost: Cost | None = None
    elapsed: float = 0.0
    error: str | None = None
    """Why the request failed or was refused (a usage limit, the provider's
    error); ``None`` when it was answered."""


class Sampler(Protocol):
    """Serves the completions the tools of one batch ask for."""

    async def sample(self, call_id: str, request: SamplingRequest) -> Sample:
        """The model's answer to ``request``, asked by call ``call_id``: a
        :class:`Sample` whose ``error`` says why there is none."""
        ...


sampling: ContextVar[Sampler | None] = ContextVar("toolwire_sampling", default=None)
"""The :class:`Sampler` of the batch running in this context (set by the agent)."""
