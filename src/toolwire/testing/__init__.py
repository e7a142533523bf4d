"""Testing tools: a local emulation server that speaks the providers' wire formats,
and record-and-replay of real traffic at the wire.

Everything here runs offline, on loopback: integration tests, the offline demo
and users' own agent tests talk real HTTP to :class:`EmulationServer`, which
plays a :class:`Scenario` in the OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages or Gemini format, faults included. The pytest fixture
``toolwire_server`` (a factory) comes with the package's pytest plugin.

:class:`RecordingProxy` (``toolwire proxy``) sits between a client and a real
provider and records each exchange byte for byte into a :class:`Cassette`;
:class:`CassetteServer` (``toolwire serve --cassette``) plays it back, the
same bytes in the same chunks. The ``toolwire_cassette`` fixture does either.
"""

from __future__ import annotations

from toolwire.testing._match import VOLATILE_FIELDS
from toolwire.testing.cassette import Cassette, CassetteError, Exchange
from toolwire.testing.proxy import RecordingProxy
from toolwire.testing.replay import CassetteServer
from toolwire.testing.scenario import (
    Fault,
    Scenario,
    ScenarioError,
    ScriptedToolCall,
    Turn,
    builtin_names,
)
from toolwire.testing.server import FAULT_HEADER, EmulationServer

__all__ = [
    "FAULT_HEADER",
    "VOLATILE_FIELDS",
    "Cassette",
    "CassetteError",
    "CassetteServer",
    "EmulationServer",
    "Exchange",
    "Fault",
    "RecordingProxy",
    "Scenario",
    "ScenarioError",
    "ScriptedToolCall",
    "Turn",
    "builtin_names",
]
