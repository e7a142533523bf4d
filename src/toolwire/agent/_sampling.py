"""Completions a running tool asks of the run's model (an MCP server's
sampling), served by the run's own provider.

A :class:`RunSampler` lives for one run. The tools of a batch find it in
:data:`toolwire.tools.sampling` (set by :class:`~toolwire.agent._tool_steps.ToolSteps`);
each request is sent with the run's provider, model and transport, one at a
time (its token budget the asker's, capped by the run's ``max_tokens``),
through the run's :class:`~toolwire.cost.RunMeter`: it counts as a
model request (not a turn), its usage and cost are the run's, and a limit
the run has reached refuses it (the tool is told why; the run stops at its
next model request, as the limit says). Each one, answered or refused, is
told to the observers (the journal records a ``model_sampled``).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import anyio

from toolwire.errors import ToolwireError
from toolwire.messages import Message, SystemMessage
from toolwire.observe import Observers
from toolwire.providers import HOLD
from toolwire.tools import Sample, SamplingRequest
from toolwire.types import Usage

if TYPE_CHECKING:
    from toolwire.agent._config import RunConfig
    from toolwire.cost import Cost, RunMeter
    from toolwire.http import HttpRequest
    from toolwire.types import StreamResult

__all__ = ["RunSampler"]


class RunSampler:
    """Serves one run's sampling requests (see the module doc).

    Args:
        config: the run's provider, model and transport.
        meter: the run's meter (limits, usage, cost).
        observers: told of each completion.
        run_id: the run's id.
        counted: adds a completion's usage to the run's.
    """

    def __init__(
        self,
        config: RunConfig,
        meter: RunMeter,
        observers: Observers,
        run_id: str,
        counted: Callable[[Usage], None],
    ) -> None:
        self.config = config
        self.meter = meter
        self.observe = observers
        self.run_id = run_id
        self.counted = counted
        self.turn = 0
        """The turn whose tools are running."""
        self._one_at_a_time = anyio.Lock()
        """The meter follows one request at a time."""

    async def sample(self, call_id: str, request: SamplingRequest) -> Sample:
        """The run's model's answer to ``request`` (see :class:`~toolwire.tools.Sampler`)."""
        async with self._one_at_a_time:
            started = time.monotonic()
            sample = await self._sample(request)
            sample = replace(sample, elapsed=time.monotonic() - started)
            for told in self.observe.model_sampled:
                await told(self.run_id, self.turn, call_id, sample)
            return sample

    async def _sample(self, request: SamplingRequest) -> Sample:
        config, meter = self.config, self.meter
        model = config.request.model
        messages: list[Message] = [SystemMessage(request.system)] if request.system else []
        messages += request.messages
        http = config.provider.build_request(
            model=model,
            messages=messages,
            tools=(),
            stream=True,
            max_tokens=_fewest(request.max_tokens, config.request.max_tokens),
            temperature=request.temperature,
        )
        refused = Sample(source=request.source, model=model)
        try:
            meter.request(lambda: len(http.content()))  # raises at a limit reached
        except ToolwireError as exc:
            return replace(refused, error=exc.message)
        try:
            result = await self._stream(http)
        except ToolwireError as exc:
            usage, cost = self._cut()
            return replace(refused, usage=usage, cost=cost, error=exc.message)
        except BaseException:  # cancelled (the tool's timeout): what it used counts
            self._cut()
            raise
        cost = meter.response(result.usage)
        if result.usage is not None:
            self.counted(result.usage)
        choice = result.choices[0]
        return Sample(
            source=request.source,
            model=result.model or model,
            text=choice.text,
            finish_reason=choice.finish_reason,
            usage=result.usage,
            cost=cost,
        )

    def _cut(self) -> tuple[Usage | None, Cost | None]:
        """Count what a request cut short used (reported, or estimated)."""
        usage = self.meter.in_flight()
        cost = self.meter.response(usage)
        if usage is not None:
            self.counted(usage)
        return usage, cost

    async def _stream(self, http: HttpRequest) -> StreamResult:
        """Send the request and read its stream to the end, within the run's
        wall time left.

        Raises:
            ToolwireError: the request or its stream failed, or a limit cut it.
        """
        config, meter = self.config, self.meter
        source = config.provider.reader(
            http,
            transport=config.transport,
            watch=meter.watch if meter.watching else None,
            hold=0 if meter.checking else HOLD,
        )
        left = meter.time_left()
        with anyio.move_on_after(math.inf if left is None else left) as scope:
            async with contextlib.aclosing(source.reads()) as reads:
                async for _ in reads:
                    pass
        if scope.cancelled_caught:
            raise meter.wall_time_exceeded()
        error = source.decoder.error
        if error is not None:
            raise error
        return source.decoder.result()


def _fewest(asked: int | None, run: int | None) -> int | None:
    """The asker's token budget, capped by the run's ``max_tokens``."""
    return min(asked, run) if asked is not None and run is not None else asked or run
