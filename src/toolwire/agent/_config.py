"""What a run needs of its agent, fixed when it starts: :class:`RunConfig`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolwire.agent.loop import RequestOptions, turn_options
from toolwire.cost import Budget, Prices, RunMeter, UsageLimits
from toolwire.messages import Message
from toolwire.tools import Toolbox

if TYPE_CHECKING:
    from toolwire.http import HttpRequest, Transport
    from toolwire.providers import Provider

__all__ = ["RunConfig"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    """What a run needs of its :class:`~toolwire.Agent`, fixed when the run starts.

    The agent builds one per run from its settings; the driver reads nothing
    else of it, so changing an agent's attributes never changes a run under way.
    """

    provider: Provider
    transport: Transport | None
    """The agent's own transport; ``None`` for the provider's."""
    toolbox: Toolbox
    metadata: Mapping[str, Any]
    eager: bool
    max_turns: int
    stream_retries: int
    request: RequestOptions
    """What every model request says besides the conversation."""
    prices: Prices | None = None
    """How the run's requests are priced (``None``: their cost is unknown)."""
    limits: UsageLimits | None = None
    """The most the run may use."""
    budget: Budget | None = None
    """Limits shared with other runs."""

    def meter(self) -> RunMeter:
        """A new run's meter: it prices the requests and stops the run at its limits."""
        return RunMeter(
            model=self.request.model,
            prices=self.prices,
            provider=self.provider.name,
            base_url=self.provider.base_url,
            limits=self.limits,
            budget=self.budget,
        )

    def build_request(self, messages: Sequence[Message], turn: int) -> HttpRequest:
        """The HTTP request of model turn number ``turn`` for this conversation."""
        options = turn_options(self.request, turn)
        return self.provider.build_request(
            model=options.model,
            messages=messages,
            tools=options.tools,
            tool_choice=options.tool_choice,
            stream=True,
            max_tokens=options.max_tokens,
            temperature=options.temperature,
            extra=options.extra,
        )
