"""Shared pieces of the viewer's tests: a journal written by agents against
the emulation server (with every kind of record, and hostile content), and
the viewer served by uvicorn on loopback in a thread."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

from tests.journal._support import FAKE_KEY, CrashAt, crashing_agent, expect_crash, make_agent
from toolwire import Agent, Approval, ApprovalRequest, Toolbox, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.journal import (
    Decision,
    PostgresJournal,
    QuestionAnswered,
    SQLiteJournal,
    close_journals,
    payload_of,
    pending_calls,
    record_decision,
)
from toolwire.testing import EmulationServer, RecordingProxy, Scenario
from toolwire.view import COOKIE, ViewSettings
from toolwire.view._serve import server_for

HOSTILE = '<script>alert("pwned")</script>'
SECRET = "sk-live-VIEWERsecret0123456789abcdef"


@tool
def echo_html(text: str) -> str:
    """Say it back.

    Args:
        text: what to say.
    """
    return f"{text} {HOSTILE} and key {SECRET}"


@tool
def explode(reason: str) -> str:
    """Fail.

    Args:
        reason: why.
    """
    raise RuntimeError(f"boom {HOSTILE} token={SECRET}")


@tool(requires_approval=True)
def launch(target: str) -> str:
    """Launch something (asks first).

    Args:
        target: where.
    """
    return "launched"


@tool(external=True)
def lookup(key: str) -> str:
    """Look something up outside (its result comes from elsewhere).

    Args:
        key: what.
    """
    return "never called"


def _scenario(name: str, turns: list[dict[str, Any]]) -> Scenario:
    return Scenario.from_dict({"name": name, "turns": turns})


HOSTILE_TURNS = [
    {
        "tool_calls": [
            {"name": "echo_html", "arguments": {"text": "<img src=x onerror=alert(1)>"}},
            {"name": "explode", "arguments": {"reason": "</pre><script>x()</script>"}},
        ]
    },
    {"text": f"done {HOSTILE}"},
]
DENIED_TURNS = [
    {"tool_calls": [{"name": "launch", "arguments": {"target": "moon"}}]},
    {"text": "not launched"},
]
WAITING_TURNS = [
    {
        "tool_calls": [
            {"name": "launch", "arguments": {"target": f"moon {HOSTILE}"}},
            {"name": "lookup", "arguments": {"key": "</textarea><script>y()</script>"}},
        ]
    },
    {"text": "launched"},
]
FAILED_TURNS = [{"text": "never", "faults": [{"status": 400, "message": f"bad {HOSTILE}"}]}]


@dataclass
class Made:
    """The journal and the ids of its runs, by what each run shows."""

    path: Path | str
    """The journal file, or a ``postgresql://`` URL."""
    runs: dict[str, str]


async def _run(
    scenario: Scenario, tools: Any, path: Path | str, run_id: str, **options: Any
) -> None:
    with EmulationServer(scenario) as server:
        agent = make_agent(server, tools, journal=str(path), **options)
        try:
            await agent.run("do it", run_id=run_id)
        except Exception:  # the failing run fails: its record is what is wanted
            pass
        finally:
            await agent.aclose()


async def _resumed(path: Path | str, run_id: str) -> None:
    journal = PostgresJournal(path) if isinstance(path, str) else SQLiteJournal(path)
    scenario = _scenario("resumed", HOSTILE_TURNS)
    try:
        with EmulationServer(scenario) as server:
            first = crashing_agent(
                server,
                [echo_html, explode],
                journal,
                CrashAt("model_response", nth=2),
                before_journal=True,
            )
            await expect_crash(first.run("do it", run_id=run_id))
            await first.aclose()
            second = make_agent(server, [echo_html, explode], journal=journal)
            await second.resume(run_id)
            await second.aclose()
    finally:
        journal.close()


def make_waiting(
    path: Path | str, run_id: str = "waiting-1", *, answer: bool = True, question: bool = False
) -> None:
    """A run suspended on two calls: one waits for an approval (``launch``),
    one for an outside result (``lookup``, answered here unless not ``answer``);
    with ``question``, a person's answer to a question is recorded too."""

    async def main() -> None:
        await _run(_scenario("waiting", WAITING_TURNS), [launch, lookup], path, run_id)

    anyio.run(main)
    close_journals()
    if not answer:
        return
    journal = PostgresJournal(path) if isinstance(path, str) else SQLiteJournal(path)
    try:
        pending = {p.name: p for p in pending_calls(journal.load_run(run_id))}
        record_decision(
            journal, run_id, Decision.answer(pending["lookup"], f"found {HOSTILE}", principal="ops")
        )
        if not question:
            return
        # A person's answer to a question a tool asked (an MCP server's
        # elicitation; tests/mcp/test_elicit.py makes real ones), written as
        # toolwire.journal.record_answer writes it, so the page shows the kind.
        answered = QuestionAnswered(
            name="lookup", digest="sha256:" + "0" * 64, action="accept",
            content={"note": HOSTILE}, principal="ops", given_at=0.0,
        )  # fmt: skip
        journal.record_event(
            run_id,
            answered.kind,
            json.dumps(payload_of(answered)),
            turn=pending["lookup"].turn,
            call_id=pending["lookup"].call_id,
        )
    finally:
        journal.close()


def _recorded_run(
    scenario: Scenario, tools: Any, path: Path, cassette: Path, run_id: str, prompt: str
) -> None:
    """One run against the emulation server through the recording proxy."""

    async def main(base_url: str) -> None:
        _, _, model = PROVIDERS["openai-chat"]
        provider = make_provider("openai-chat", base_url=base_url, api_key=FAKE_KEY)
        agent = Agent(provider, model=model, tools=tools, journal=str(path))
        try:
            await agent.run(prompt, run_id=run_id)
        finally:
            await agent.aclose()

    with (
        EmulationServer(scenario) as server,
        RecordingProxy(server.url_for("openai-chat"), record=cassette) as proxy,
    ):
        anyio.run(main, proxy.base_url)
    close_journals()


RECORDED_ARGUMENTS = {"text": f"</pre><script>alert(1)</script> with {SECRET} in the middle"}


def make_recorded(path: Path, cassette: Path, run_id: str = "recorded-1") -> None:
    """A run whose streams were recorded through the recording proxy into
    ``cassette`` (arguments cut into four-byte deltas, hostile and with a key)."""
    scenario = Scenario.from_dict(
        {
            "name": "recorded",
            "turns": [
                {
                    "chunk_size": 4,
                    "tool_calls": [{"name": "echo_html", "arguments": RECORDED_ARGUMENTS}],
                },
                {"text": "recorded"},
            ],
        }
    )
    _recorded_run(scenario, [echo_html], path, cassette, run_id, "do it")


@tool(read_only=True)
def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city.

    Args:
        city: the city.
        unit: celsius or fahrenheit.
    """
    return f"{city}: 18 degrees {unit}, light rain until 16:00"


@tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email (asks first).

    Args:
        to: the address.
        subject: the subject line.
        body: the text.
    """
    return "sent"


EMAIL = {
    "to": "ana@example.com",
    "subject": "Lisbon on Friday",
    "body": "Rain until 16:00 on Friday; shall we meet at 14:00 indoors?",
}


def make_showcase(path: Path, cassette: Path, run_id: str = "trip-planner") -> None:
    """A run as a user would show it: a streamed weather call (recorded into
    ``cassette``), then an email that waits for approval."""
    scenario = Scenario.from_dict(
        {
            "name": "showcase",
            "turns": [
                {
                    "chunk_size": 5,
                    "delay": 0.002,
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "Lisbon", "unit": "celsius"}}
                    ],
                },
                {
                    "chunk_size": 8,
                    "text": "Rain until four: I will tell Ana to bring the meeting forward.",
                    "tool_calls": [
                        {
                            "name": "send_email",
                            "arguments": EMAIL,
                        }
                    ],
                },
                {"text": "Done."},
            ],
        }
    )
    prompt = "Check Friday's weather in Lisbon and tell Ana."
    _recorded_run(scenario, [get_weather, send_email], path, cassette, run_id, prompt)


def make_journal(path: Path | str) -> Made:
    """A journal with runs that answered (hostile tool results, a tool that
    raised), were denied approval, failed, were resumed after a crash, and
    wait for an approval."""

    def deny(request: ApprovalRequest) -> Approval:
        return Approval.deny(f"no {HOSTILE}")

    async def main() -> None:
        await _run(_scenario("hostile", HOSTILE_TURNS), [echo_html, explode], path, "hostile-1")
        await _run(
            _scenario("denied", DENIED_TURNS), Toolbox([launch], approve=deny), path, "denied-1"
        )
        await _run(_scenario("failed", FAILED_TURNS), [], path, "failed-1")
        await _resumed(path, "resumed-1")

    anyio.run(main)
    close_journals()
    make_waiting(path, question=True)
    kinds = ("hostile", "denied", "failed", "resumed", "waiting")
    return Made(path, {k: f"{k}-1" for k in kinds})


@dataclass
class Viewer:
    """A viewer serving on loopback, and a client that holds its cookie."""

    base: str
    """Its address, with its secret root (``http://127.0.0.1:PORT/ROOT``)."""
    token: str
    settings: ViewSettings

    @property
    def origin(self) -> str:
        """Its origin (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self.settings.port}"

    @property
    def root(self) -> str:
        """Its secret root (``/`` and a random word)."""
        return self.settings.root

    def client(self, *, authorized: bool = True) -> httpx.Client:
        cookies = {COOKIE: self.token} if authorized else {}
        return httpx.Client(base_url=self.base, cookies=cookies, timeout=10.0)


@contextmanager
def serving(
    journal: Path | str, *, poll: float = 0.05, deadline: float = 5.0, **options: Any
) -> Iterator[Viewer]:
    """The viewer of ``journal`` on a free loopback port, stopped on exit."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    settings = ViewSettings(
        journal=journal,
        token=ViewSettings.new_token(),
        port=port,
        poll=poll,
        stream_deadline=deadline,
        **options,
    )
    server = server_for(settings)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    limit = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < limit, "the viewer did not start"
        time.sleep(0.01)
    try:
        yield Viewer(settings.url("").rstrip("/"), settings.token, settings)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
