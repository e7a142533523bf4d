"""A conformance check of a live server's streamed tool calls (``toolwire conform``).

Theory of operation: :func:`check` sends a fixed set of tool-calling prompts
(:data:`PROBES`), each streamed, to a server through a toolwire provider, and
keeps each answer's bytes. The same bytes are read twice: by the stream
decoder, which repairs what can be repaired (its result is what an agent
gets), and by the dialect's wire reader
(:func:`~toolwire.stream.codecs.wire_calls.read_wire`), which keeps each call
as it was sent. Each known quirk (:data:`QUIRKS`) is judged from both, probe
by probe, and reported once: seen (in which probes, with the evidence), not
seen, or not checked (no probe had a call to judge). A probe that gets no answer
(an HTTP error, a deadline) is reported with its error; the others still
count. A stream the decoder fails on (a cut, calls it cannot tell apart)
is judged on its wire alone.

Every probe has a deadline, and a body is read up to
:data:`MAX_BODY_BYTES`. Nothing is printed: the report is data
(:meth:`ConformReport.to_dict`), which the command renders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from toolwire.errors import ToolwireError, UsageError
from toolwire.http import Transport
from toolwire.messages import UserMessage
from toolwire.providers import Provider, ToolChoice
from toolwire.stream.codecs.wire_calls import READERS, WireReading, read_wire
from toolwire.stream.decoder import StreamDecoder
from toolwire.testing._conform_quirks import QUIRKS, Evidence, Quirk
from toolwire.tools import Toolbox, tool
from toolwire.types import StreamResult

__all__ = [
    "MAX_BODY_BYTES",
    "PROBES",
    "QUIRKS",
    "ConformReport",
    "Probe",
    "ProbeResult",
    "Quirk",
    "QuirkVerdict",
    "check",
]

MAX_BODY_BYTES = 4 * 1024 * 1024
"""The most of one answer read; a longer one fails its probe."""

City = Literal["Paris", "Tokyo", "杭州"]


@tool(read_only=True)
def get_weather(city: City, unit: Literal["celsius", "fahrenheit"]) -> str:
    """Current weather of a city.

    Args:
        city: the city.
        unit: the temperature unit.
    """
    return "never run: the check only reads the calls"


@tool(read_only=True)
def get_time(city: City) -> str:
    """Current local time in a city.

    Args:
        city: the city.
    """
    return "never run: the check only reads the calls"


@dataclass(frozen=True)
class Probe:
    """One prompt of the check, and how many calls it asks for."""

    name: str
    prompt: str
    calls: int


PROBES: tuple[Probe, ...] = (
    Probe("one call", "What is the weather in Paris, in celsius? Call get_weather.", 1),
    Probe(
        "two calls",
        "Call get_weather for Paris (celsius) and get_time for Tokyo, "
        "both at once, as two parallel tool calls.",
        2,
    ),
)
"""The prompts sent, in order; each offers both tools (enums keep the
arguments short)."""


@dataclass
class ProbeResult:
    """What one probe got."""

    probe: str
    asked: int
    calls: list[dict[str, Any]] = field(default_factory=list)
    """The decoded complete calls: name, arguments, whether the id was minted
    or the arguments repaired."""
    invalid: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    finish: str | None = None
    """The finish reason, in toolwire's words."""
    wire_finish: str | None = None
    """The finish word as the server sent it."""
    payloads: int = 0
    notes: list[str] = field(default_factory=list)
    """Departures the decoder noticed on the way (its ``quirks``)."""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class QuirkVerdict:
    """One quirk, over every probe."""

    id: str
    title: str
    seen: bool | None
    """``None``: no probe could tell."""
    probes: list[str]
    """The probes that saw it."""
    detail: str
    """The evidence (of the first probe that saw it, else of the first that checked)."""
    handling: str
    """What toolwire does about it."""

    @property
    def status(self) -> str:
        return {True: "seen", False: "not seen", None: "not checked"}[self.seen]

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "status": self.status}


@dataclass
class ConformReport:
    """The whole check: the server's quirks and each probe's reading."""

    base_url: str
    dialect: str
    model: str
    quirks: list[QuirkVerdict]
    probes: list[ProbeResult]

    @property
    def seen(self) -> list[str]:
        """The ids of the quirks seen."""
        return [verdict.id for verdict in self.quirks if verdict.seen]

    def to_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "dialect": self.dialect,
            "model": self.model,
            "quirks": [verdict.to_dict() for verdict in self.quirks],
            "probes": [probe.to_dict() for probe in self.probes],
        }


async def check(
    provider: Provider,
    *,
    model: str,
    tool_choice: ToolChoice | None = "required",
    max_tokens: int | None = 256,
    extra: Mapping[str, Any] | None = None,
    transport: Transport | None = None,
    deadline: float = 120.0,
    probes: Sequence[Probe] = PROBES,
) -> ConformReport:
    """Send each probe to ``provider``'s server, streamed, and judge its quirks.

    Args:
        provider: the server, as a provider of one of :data:`DIALECTS`.
        model: the model to ask.
        tool_choice: sent with every probe (a named tool for servers that
            call tools only when told which).
        max_tokens: the output limit of every probe.
        extra: body fields added to every request (``logit_bias``...).
        transport: the transport to send with (the provider's by default).
        deadline: seconds each probe may take.
        probes: the prompts (:data:`PROBES` by default).

    Raises:
        UsageError: the provider's dialect has no wire reader.
    """
    if provider.dialect not in READERS:
        known = ", ".join(READERS)
        raise UsageError(f"conform reads {known}; {provider.name} speaks {provider.dialect}")
    tools = Toolbox([get_weather, get_time]).schemas(provider.dialect)
    results: list[ProbeResult] = []
    evidence: list[tuple[str, Evidence]] = []
    for probe in probes:
        request = provider.build_request(
            model=model,
            messages=[UserMessage(probe.prompt)],
            tools=tools,
            tool_choice=tool_choice,
            stream=True,
            max_tokens=max_tokens,
            temperature=0,
            extra=extra,
        )
        outcome = ProbeResult(probe.name, probe.calls)
        try:
            with anyio.fail_after(deadline):
                wire, result = await _read(provider, request, transport, outcome)
        except TimeoutError:
            outcome.error = f"no answer within {deadline:g} s"
        except ToolwireError as exc:
            outcome.error = exc.message
        else:
            _describe(outcome, wire, result)
            evidence.append((probe.name, Evidence(wire, result, probe.calls)))
        results.append(outcome)
    verdicts = [_verdict(quirk, evidence) for quirk in QUIRKS]
    return ConformReport(provider.base_url, provider.dialect, model, verdicts, results)


async def _read(
    provider: Provider, request: Any, transport: Transport | None, outcome: ProbeResult
) -> tuple[WireReading, StreamResult]:
    decoder = StreamDecoder(provider.dialect)
    frames = []
    size = 0
    sender = transport if transport is not None else provider.transport
    async with sender.stream(request, parse_error=provider.parse_error) as response:
        async for data in response.aiter_bytes():
            size += len(data)
            if size > MAX_BODY_BYTES:
                raise UsageError(f"the answer is longer than {MAX_BODY_BYTES} bytes")
            frames += decoder.feed_frames(data)
    frames += decoder.close_frames()
    outcome.notes = list(decoder.quirks)
    wire = read_wire(provider.dialect, [(f.event, f.data) for f in frames if f.data])
    return wire, decoder.result()


def _describe(outcome: ProbeResult, wire: WireReading, result: StreamResult) -> None:
    outcome.payloads = wire.payloads
    outcome.wire_finish = wire.finish
    if result.error is not None:
        outcome.error = result.error.message
    if not result.choices:
        return
    choice = result.choices[0]
    outcome.finish = choice.finish_reason
    outcome.calls = [
        {
            "name": call.name,
            "arguments": call.arguments,
            "minted_id": call.minted_id,
            "repaired": call.repaired,
        }
        for call in choice.tool_calls
    ]
    outcome.invalid = [call.name for call in choice.invalid_tool_calls]
    outcome.incomplete = [call.name or "" for call in choice.incomplete_tool_calls]


def _verdict(quirk: Quirk, evidence: list[tuple[str, Evidence]]) -> QuirkVerdict:
    seen: list[tuple[str, str]] = []
    clear: list[str] = []
    for name, probe in evidence:
        judgment = quirk.judge(probe)
        if judgment is None:
            continue
        if judgment[0]:
            seen.append((name, judgment[1]))
        else:
            clear.append(judgment[1])
    if seen:
        return QuirkVerdict(
            quirk.id, quirk.title, True, [n for n, _ in seen], seen[0][1], quirk.handling
        )
    if clear:
        return QuirkVerdict(quirk.id, quirk.title, False, [], clear[0], quirk.handling)
    return QuirkVerdict(quirk.id, quirk.title, None, [], "no probe had a call", quirk.handling)
