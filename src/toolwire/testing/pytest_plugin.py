"""The pytest plugin of toolwire: the ``toolwire_server`` fixture.

Installed as a ``pytest11`` entry point, so any project that installs toolwire
gets the fixture::

    def test_agent(toolwire_server):
        server = toolwire_server(Scenario.builtin("weather"))
        client = openai.OpenAI(base_url=server.url_for("openai-chat"), api_key="test")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire.testing.scenario import Scenario
from toolwire.testing.server import EmulationServer

__all__ = ["ServerFactory", "toolwire_server"]

ServerFactory = Callable[..., EmulationServer]
"""``factory(scenario, **options) -> EmulationServer``, started on a free port."""


@pytest.fixture
def toolwire_server() -> Iterator[ServerFactory]:
    """A factory of started emulation servers, all stopped at teardown.

    Call it with a :class:`~toolwire.testing.Scenario` (or a built-in name, a
    file path, or the scenario's JSON shape) and any keyword option of
    :class:`~toolwire.testing.EmulationServer`.
    """
    servers: list[EmulationServer] = []

    def factory(
        scenario: Scenario | str | Path | dict[str, Any], **options: Any
    ) -> EmulationServer:
        options.setdefault("port", 0)
        server = EmulationServer(scenario, **options)
        server.start()
        servers.append(server)
        return server

    try:
        yield factory
    finally:
        for server in reversed(servers):
            server.stop()
