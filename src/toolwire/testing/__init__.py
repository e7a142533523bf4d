"""Testing tools: a local emulation server that speaks the providers' wire formats.

Everything here runs offline, on loopback: integration tests, the offline demo
and users' own agent tests talk real HTTP to :class:`EmulationServer`, which
plays a :class:`Scenario` in the OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages or Gemini format, faults included. The pytest fixture
``toolwire_server`` (a factory) comes with the package's pytest plugin.
"""

from __future__ import annotations

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
    "EmulationServer",
    "Fault",
    "Scenario",
    "ScenarioError",
    "ScriptedToolCall",
    "Turn",
    "builtin_names",
]
