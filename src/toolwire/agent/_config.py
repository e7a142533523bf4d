"""An agent's settings: checked when the agent is made (its toolbox, its
journal), and what a run needs of them, fixed when it starts (:class:`RunConfig`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from toolwire.agent._output import OutputSpec
from toolwire.agent.loop import RequestOptions, turn_options
from toolwire.content import CachePoint
from toolwire.cost import Budget, Prices, RunMeter, UsageLimits
from toolwire.errors import UsageError
from toolwire.journal import Journal, default_journal
from toolwire.messages import Message, Prompt, SystemMessage, prompt_messages
from toolwire.stream.codecs.request import merge_extra
from toolwire.tools import ApprovalCallback, Tool, Toolbox

if TYPE_CHECKING:
    from toolwire.http import HttpRequest, Transport
    from toolwire.providers import Provider

__all__ = [
    "RunConfig",
    "agent_toolbox",
    "initial_messages",
    "journal_setting",
    "start_messages",
    "system_message",
]


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
    toolbox_schemas: int = 0
    """How many of ``request.tools`` are the toolbox's (those that follow are
    a typed run's final-result tools); rebuilt when the toolbox's tools change."""
    prices: Prices | None = None
    """How the run's requests are priced (``None``: their cost is unknown)."""
    limits: UsageLimits | None = None
    """The most the run may use."""
    budget: Budget | None = None
    """Limits shared with other runs."""
    output: OutputSpec[Any] | None = None
    """The typed output asked for; ``None`` for a text answer."""
    output_mode: Literal["native", "tool"] = "tool"
    """How it is asked (a typed run only): the request's ``tools`` already
    hold the final-result tools, or :meth:`build_request` adds the dialect's
    native structured output."""
    output_retries: int = 1
    """How many refused answers go back to the model before the run fails."""
    partial_output: bool = False
    """Build the partial ``T`` of each output delta (``OutputDelta.output``)."""

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

    def with_toolbox_schemas(self) -> RunConfig:
        """This config, its request offering the toolbox's tools as they are now."""
        toolbox = self.toolbox
        schemas = toolbox.schemas(self.provider.dialect) if len(toolbox) else []
        tools = (*schemas, *self.request.tools[self.toolbox_schemas :])
        request = replace(self.request, tools=tools)
        return replace(self, request=request, toolbox_schemas=len(schemas))

    def build_request(self, messages: Sequence[Message], turn: int) -> HttpRequest:
        """The HTTP request of model turn number ``turn`` for this conversation."""
        options = turn_options(self.request, turn)
        extra = options.extra
        if self.output is not None and self.output_mode == "native":
            # The caller's fields go last, merged one level deep as always.
            extra = merge_extra(self.output.native_body(self.provider.dialect), extra)
        return self.provider.build_request(
            model=options.model,
            messages=messages,
            tools=options.tools,
            tool_choice=options.tool_choice,
            stream=True,
            max_tokens=options.max_tokens,
            temperature=options.temperature,
            extra=extra,
        )


def agent_toolbox(
    tools: Toolbox | Iterable[Tool | Callable[..., Any]], approve: ApprovalCallback | None
) -> Toolbox:
    """The toolbox of an agent given ``tools`` and ``approve``.

    Raises:
        UsageError: ``approve`` with a ready Toolbox (one of the two approval
            callbacks would be ignored).
    """
    if not isinstance(tools, Toolbox):
        return Toolbox(tools, approve=approve)
    if approve is not None:
        raise UsageError(
            "give approve= to the Toolbox, or a list of tools with approve= here: "
            "a Toolbox passed in keeps its own approval callback"
        )
    return tools


def journal_setting(
    journal: Journal | str | os.PathLike[str] | bool | None,
) -> tuple[Journal | None, str | os.PathLike[str] | None]:
    """An agent's ``journal`` argument as ``(journal, path)``: a journal given,
    or the path of one to open on first use (neither: no journal).

    Raises:
        UsageError: ``journal`` is of an unknown kind.
    """
    if journal is None or journal is True:
        return None, default_journal()
    if isinstance(journal, (str, os.PathLike)):
        return None, journal
    if journal is False:
        return None, None
    if not isinstance(journal, Journal):
        raise UsageError("journal must be a path, a Journal, True/None (the default file) or False")
    return journal, None


def system_message(system: str | Sequence[str | CachePoint] | None) -> SystemMessage | None:
    """The agent's ``system`` prompt as a message: text, or a list of text
    and a :class:`~toolwire.CachePoint` (the texts joined by blank lines).

    Raises:
        UsageError: a list holding anything else, or more than one cache point.
    """
    if system is None or isinstance(system, str):
        return SystemMessage(system) if system else None
    items = list(system)
    points = [item for item in items if isinstance(item, CachePoint)]
    texts = [item for item in items if isinstance(item, str)]
    if len(points) + len(texts) != len(items) or len(points) > 1:
        raise UsageError("system is text, or a list of text and at most one CachePoint")
    text = "\n\n".join(texts)
    return SystemMessage(text, cache=points[0] if points else None) if text else None


def initial_messages(
    system: str | Sequence[str | CachePoint] | None, prompt: Prompt
) -> list[Message]:
    """The conversation a run starts from: the agent's ``system`` prompt,
    unless the messages given have their own, then ``prompt``."""
    messages: list[Message] = []
    first = system_message(system)
    if first is not None:
        messages.append(first)
    given = prompt_messages(prompt)
    if system and any(isinstance(m, SystemMessage) for m in given):
        messages = []
    messages.extend(given)
    return messages


async def start_messages(
    system: str | Sequence[str | CachePoint] | None, prompt: Prompt
) -> list[Message]:
    """:func:`initial_messages`, with the parts made with ``fetch`` fetched
    (before the run journals them: a resume sends the same bytes).

    Raises:
        ContentFetchFailed: such a part could not be fetched.
    """
    from toolwire.http.fetch import fetch_messages  # httpx, loaded when a run starts

    return await fetch_messages(initial_messages(system, prompt))
