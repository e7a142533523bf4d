"""Each bridge request journaled: a run of one turn, told to a
:class:`~toolwire.journal.JournalObserver` as the agent tells it its turns
(the request, each provider a fallback chain tried, the usage and its cost,
the answer or the failure), so ``toolwire runs`` and ``toolwire view`` show
it. The cost is the upstream's: its model at its provider's prices."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime, timezone

from toolwire.bridge._routes import Route
from toolwire.cost import Cost, Prices
from toolwire.errors import ToolwireError
from toolwire.journal import Journal, JournalObserver
from toolwire.messages import AssistantMessage
from toolwire.providers import ProviderStream
from toolwire.run import RunInfo, RunResult
from toolwire.stream.codecs.bridge import Asked
from toolwire.types import Usage

__all__ = ["BridgeJournal"]


class BridgeJournal:
    """Writes each bridge request as a run of one turn."""

    def __init__(
        self, journal: Journal, secrets: Iterable[str] = (), prices: Prices | None = None
    ) -> None:
        self.observer = JournalObserver(journal, secrets=secrets, offload=True)
        self.prices = prices
        self._asked: dict[str, tuple[Asked, Route]] = {}

    async def requested(self, run_id: str, asked: Asked, route: Route) -> None:
        """The request, before it is sent upstream."""
        self._asked[run_id] = (asked, route)
        info = RunInfo(
            run_id=run_id,
            model=route.model or asked.model,
            provider=route.provider.name,
            dialect=route.provider.dialect,
            tools=tuple(t.name for t in asked.tools),
            settings={"bridge": asked.dialect, "asked_model": asked.model},
            messages=asked.messages,
        )
        await self.observer.run_started(info)
        await self.observer.model_request(run_id, 1, 1, asked.messages)

    async def _tried(self, run_id: str, source: ProviderStream) -> None:
        for tried in source.tried:
            await self.observer.model_attempt(run_id, 1, 1, tried)

    async def answered(self, run_id: str, source: ProviderStream, started: float) -> None:
        """The upstream's whole answer."""
        asked, route = self._asked.pop(run_id)
        await self._tried(run_id, source)
        result = source.decoder.result()
        cost = self._cost(route, asked, result.usage)
        await self.observer.model_usage(run_id, 1, 1, result.usage, cost)
        await self.observer.model_response(run_id, 1, 1, result, time.monotonic() - started)
        said = AssistantMessage.from_choice(result.choices[0]) if result.choices else None
        outcome = RunResult(
            output=said.text if said is not None else "",
            outcome="answered",
            messages=(*asked.messages, *([said] if said is not None else [])),
            usage=result.usage or Usage(),
            tool_calls=(),
            turns=1,
            run_id=run_id,
        )
        await self.observer.run_finished(run_id, outcome)

    def _cost(self, route: Route, asked: Asked, usage: Usage | None) -> Cost | None:
        if self.prices is None:
            return None
        provider = route.provider
        return self.prices.cost(
            route.model or asked.model,
            usage,
            provider=provider.name,
            base_url=provider.base_url,
            at=datetime.now(timezone.utc),
        )

    async def failed(
        self, run_id: str, source: ProviderStream, error: ToolwireError, started: float
    ) -> None:
        """The request refused upstream, or its stream broken."""
        self._asked.pop(run_id, None)
        await self._tried(run_id, source)
        await self.observer.model_failed(run_id, 1, 1, error, time.monotonic() - started)
        await self.observer.run_failed(run_id, error)
