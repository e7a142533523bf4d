"""Shared pieces of the journal tests: tools that count their executions, and
an observer that stops a run at a chosen step, before or after the journal
records it."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.examples import PaymentLedger, payment_tool
from toolwire.journal import Journal, JournalObserver
from toolwire.messages import Message
from toolwire.observe import RunObserver
from toolwire.testing import EmulationServer, Scenario
from toolwire.tools import Tool, ToolResult
from toolwire.types import InvalidToolCall, StreamResult, ToolCall

FAKE_KEY = "sk-test-FAKEKEY-0123456789abcdef"


class Crash(Exception):
    """Stands for the process dying at a step."""


class Die(BaseException):
    """Stands for the process dying inside a tool (no tool layer catches it)."""


async def expect_crash(run: Awaitable[Any]) -> None:
    """Await a run that must die of :class:`Crash` or :class:`Die` (possibly
    inside an exception group, when it happened in a tool task)."""

    def found(exc: BaseException) -> bool:
        if isinstance(exc, (Crash, Die)):
            return True
        return any(found(inner) for inner in getattr(exc, "exceptions", ()))

    try:
        await run
    except BaseException as exc:
        assert found(exc), f"the run failed otherwise: {exc!r}"
    else:
        raise AssertionError("the run did not crash")


class CrashAt(RunObserver):
    """Raises :class:`Crash` the ``nth`` time ``hook`` is called (for ``name``)."""

    def __init__(self, hook: str, *, name: str | None = None, nth: int = 1) -> None:
        self.hook = hook
        self.name = name
        self.left = nth

    def _hit(self, hook: str, name: str | None = None) -> None:
        if hook == self.hook and (self.name is None or name == self.name):
            self.left -= 1
            if self.left == 0:
                raise Crash(f"{hook} {name or ''}")

    async def model_request(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message]
    ) -> None:
        self._hit("model_request")

    async def model_response(
        self, run_id: str, turn: int, attempt: int, result: StreamResult, elapsed: float
    ) -> None:
        self._hit("model_response")

    async def tool_started(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        idempotency_key: str,
        *,
        eager: bool = False,
    ) -> None:
        self._hit("tool_started", call.name)

    async def tool_finished(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        result: ToolResult,
        *,
        eager: bool = False,
    ) -> None:
        self._hit("tool_finished", call.name)


class Counter:
    """Side-effecting and read-only tools that count how often they ran."""

    def __init__(self, ledger_path: Path) -> None:
        self.ledger = PaymentLedger(ledger_path)
        self.notes: list[str] = []
        self.weather = 0
        self.die_in_notify = False

        def notify(text: str) -> str:
            """Send a notification (not idempotent: no key).

            Args:
                text: what to say.
            """
            if self.die_in_notify:
                raise Die("the process dies before the notification is sent")
            self.notes.append(text)
            return "sent"

        @tool(read_only=True)
        def get_weather(city: str) -> dict[str, Any]:
            """Weather of a city.

            Args:
                city: the city.
            """
            self.weather += 1
            return {"city": city, "condition_zh": "小雨"}

        self.notify = tool(notify)
        self.guarded_notify = tool(requires_approval=True)(notify)
        self.get_weather = get_weather
        self.send_payment = payment_tool(self.ledger)

    @property
    def tools(self) -> list[Tool]:
        return [self.send_payment, self.notify, self.get_weather]


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "pay",
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "send_payment",
                            "arguments": {"to": "alice", "amount_cents": 1250},
                        },
                        {"name": "notify", "arguments": {"text": "paying alice"}},
                        {"name": "get_weather", "arguments": {"city": "杭州"}},
                    ],
                    "chunk_size": 7,
                },
                {
                    "text": "paid {result:send_payment.to} {result:send_payment.amount_cents} "
                    "as {result:send_payment.payment_id}; {result:get_weather.condition_zh}",
                },
            ],
        }
    )


def expected_answer(counter: Counter) -> str:
    (payment,) = counter.ledger.payments()
    return f"paid alice 1250 as {payment['payment_id']}; 小雨"


def make_agent(
    server: EmulationServer,
    tools: Sequence[Any],
    *,
    journal: Journal | bool | str | None = None,
    observers: Sequence[RunObserver] = (),
    provider: str = "openai-chat",
    api_key: str = FAKE_KEY,
    **options: Any,
) -> Agent:
    _, api, model = PROVIDERS[provider]
    return Agent(
        make_provider(provider, base_url=server.url_for(api), api_key=api_key),
        model=model,
        tools=tools,
        journal=journal,
        observers=observers,
        **options,
    )


def crashing_agent(
    server: EmulationServer,
    tools: Sequence[Any],
    journal: Journal,
    crash: CrashAt,
    *,
    before_journal: bool,
    **options: Any,
) -> Agent:
    """An agent whose run stops at a step, either before the journal records
    the step or just after."""
    observer = JournalObserver(journal)
    chain = [crash, observer] if before_journal else [observer, crash]
    return make_agent(server, tools, journal=False, observers=chain, **options)
