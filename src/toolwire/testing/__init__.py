"""Testing tools: a local emulation server that speaks the providers' wire formats,
and record-and-replay of real traffic at the wire.

Everything here runs offline, on loopback: integration tests, the offline demo
and users' own agent tests talk real HTTP to :class:`EmulationServer`, which
plays a :class:`Scenario` in the OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages or Gemini format, faults included. The pytest fixtures
``toolwire_server`` (a factory) and ``toolwire_journal`` come with the
package's pytest plugin.

:class:`RecordingProxy` (``toolwire proxy``) sits between a client and a real
provider and records each exchange byte for byte into a :class:`Cassette`;
:class:`CassetteServer` (``toolwire serve --cassette``) plays it back, the
same bytes in the same chunks. The ``toolwire_cassette`` fixture does either.

Every one of these servers survives its clients (:class:`ServerLimits`):
request bodies over 32 MiB get ``413``, a connection has 10 s to send a
request head, idle ones close after 5 s, and a crowd of slow connections
cannot keep a legitimate request out.

The names are imported on first use, so that loading the pytest plugin (a
submodule) loads neither the server's web stack nor pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from toolwire.testing._guard import ServerLimits as ServerLimits
    from toolwire.testing._match import VOLATILE_FIELDS as VOLATILE_FIELDS
    from toolwire.testing._ratelimit import ServerRateLimit as ServerRateLimit
    from toolwire.testing.cassette import Cassette as Cassette
    from toolwire.testing.cassette import CassetteError as CassetteError
    from toolwire.testing.cassette import Exchange as Exchange
    from toolwire.testing.proxy import RecordingProxy as RecordingProxy
    from toolwire.testing.replay import CassetteServer as CassetteServer
    from toolwire.testing.scenario import Expect as Expect
    from toolwire.testing.scenario import Fault as Fault
    from toolwire.testing.scenario import ProviderItem as ProviderItem
    from toolwire.testing.scenario import Scenario as Scenario
    from toolwire.testing.scenario import ScenarioError as ScenarioError
    from toolwire.testing.scenario import ScriptedToolCall as ScriptedToolCall
    from toolwire.testing.scenario import Turn as Turn
    from toolwire.testing.scenario import builtin_names as builtin_names
    from toolwire.testing.server import FAULT_HEADER as FAULT_HEADER
    from toolwire.testing.server import EmulationServer as EmulationServer

# name -> module, imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    "VOLATILE_FIELDS": "toolwire.testing._match",
    "ServerLimits": "toolwire.testing._guard",
    "ServerRateLimit": "toolwire.testing._ratelimit",
    "Cassette": "toolwire.testing.cassette",
    "CassetteError": "toolwire.testing.cassette",
    "CassetteServer": "toolwire.testing.replay",
    "Exchange": "toolwire.testing.cassette",
    "RecordingProxy": "toolwire.testing.proxy",
    "FAULT_HEADER": "toolwire.testing.server",
    "EmulationServer": "toolwire.testing.server",
    "Expect": "toolwire.testing.scenario",
    "Fault": "toolwire.testing.scenario",
    "ProviderItem": "toolwire.testing.scenario",
    "Scenario": "toolwire.testing.scenario",
    "ScenarioError": "toolwire.testing.scenario",
    "ScriptedToolCall": "toolwire.testing.scenario",
    "Turn": "toolwire.testing.scenario",
    "builtin_names": "toolwire.testing.scenario",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
