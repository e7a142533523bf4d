"""A decode-only dialect needs only its module and its registration.

The toy dialect (``tests/stream/_toy_dialect.py``, one file) is registered
for these tests only, and taken out after them. Nothing else is written for
it: sniffing picks it, ``toolwire inspect`` decodes it (in a subprocess that
imports the module, as a plugin is imported), the emulation server says
which pieces it lacks to serve it, and the docs check names it wherever a
page lists every dialect.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.docs._dialect_lists import DOCUMENTS, drift, names, rewrite
from toolwire import StreamDecoder
from toolwire.errors import RegistrationError, UsageError
from toolwire.stream.codecs import (
    ProviderInfo,
    dialect_for_path,
    register,
    registered,
    unregister,
    wire_dialect,
)
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import DIALECTS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def toy() -> Iterator[ModuleType]:
    """The toy dialect's module, registered for the test and taken out after."""
    import tests.stream._toy_dialect as module

    if module.NAME not in {d.name for d in registered()}:
        register(module.DIALECT)
    try:
        yield module
    finally:
        unregister(module.NAME)
    assert module.NAME not in {d.name for d in registered()}


def test_it_is_registered_after_the_built_in_dialects(toy: ModuleType) -> None:
    assert [d.name for d in registered()] == [*DIALECTS, toy.NAME]
    assert wire_dialect(toy.NAME) is toy.DIALECT
    assert dialect_for_path(toy.PATH) is toy.DIALECT


@pytest.mark.parametrize("dialect", ["auto", "toy-ndjson"])
@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_sniffing_picks_it_and_the_decoder_reads_it(
    toy: ModuleType, dialect: str, chunk: int
) -> None:
    decoder = StreamDecoder(dialect)
    body = toy.BODY
    for start in range(0, len(body), chunk):
        decoder.feed(body[start : start + chunk])
    decoder.close()
    result = decoder.result()
    assert result.dialect == toy.NAME
    (choice,) = result.choices
    assert choice.text == "Hello from the toy."
    (call,) = choice.tool_calls
    assert (call.id, call.name, call.arguments) == ("t1", "get_weather", {"city": "Paris"})
    assert choice.finish_reason == "tool_calls"
    assert result.usage is not None and result.usage.total_tokens == 12


def test_a_built_in_stream_is_still_told_as_its_own(toy: ModuleType) -> None:
    ollama = b'{"model":"m","message":{"role":"assistant","content":"hi"},"done":true}\n'
    decoder = StreamDecoder("auto")
    decoder.feed(ollama)
    decoder.close()
    assert decoder.result().dialect == "ollama-ndjson"


def _inspect(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``toolwire inspect`` in a process that imports the toy module first."""
    wrapper = (
        "import sys, tests.stream._toy_dialect\n"
        "from toolwire.cli import main\n"
        "sys.argv[0] = 'toolwire'\n"
        "main(prog_name='toolwire')\n"
    )
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", wrapper, "inspect", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
    )


def test_toolwire_inspect_decodes_it(toy: ModuleType, tmp_path: Path) -> None:
    recorded = tmp_path / "toy.ndjson"
    recorded.write_bytes(toy.BODY)
    shown = _inspect(str(recorded))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "dialect: toy-ndjson"
    assert 'text: "Hello from the toy."' in lines
    assert 'tool call #0 get_weather id=t1: {"city": "Paris"}' in lines
    assert "finish_reason: tool_calls" in lines
    as_json = _inspect("--dialect", toy.NAME, "--json", "-", stdin=toy.BODY)
    assert as_json.returncode == 0, as_json.stderr
    record = json.loads(as_json.stdout)
    assert record["dialect"] == toy.NAME
    assert record["choices"][0]["tool_calls"][0]["arguments"] == {"city": "Paris"}


def test_the_emulation_server_says_what_it_lacks_to_serve_it(toy: ModuleType) -> None:
    with EmulationServer(Scenario.builtin("weather")) as server:
        with pytest.raises(UsageError) as refused:
            server.url_for(toy.NAME)
        assert refused.value.message == (
            "the emulation server does not serve 'toy-ndjson': a dialect toolwire only reads "
            "(its registration has no routes, decode_request, encoder)"
        )
        # Its request path is no route of the server: answered as not found.
        answer = httpx.post(server.base_url + toy.PATH, json={"model": "toy-1"}, timeout=10)
        assert answer.status_code == 404
        # The dialects it serves are served as before.
        assert server.url_for("openai").endswith("/v1")


def test_a_provider_for_it_needs_what_a_provider_writes_and_the_server_serves(
    toy: ModuleType,
) -> None:
    unregister(toy.NAME)
    provided = dataclasses.replace(
        toy.DIALECT,
        provider=ProviderInfo(
            names=("toy", "openai"),
            class_name="Toy",
            demo_model="toy-1",
            price_provider="toyco",
        ),
    )
    with pytest.raises(RegistrationError) as refused:
        register(provided)
    message = refused.value.message
    assert message.startswith("dialect 'toy-ndjson' cannot be registered: ")
    assert "it has a provider but no encode_request" in message
    assert "the emulation server cannot serve it (no routes, decode_request and encoder)" in message
    assert "its provider name 'openai' is one of 'openai-chat''s provider's" in message
    register(toy.DIALECT)  # the fixture takes it out


def test_the_docs_check_lists_it_wherever_a_page_lists_every_dialect(toy: ModuleType) -> None:
    with_toy = registered()
    built_in = [d for d in with_toy if d.name != toy.NAME]
    assert names(with_toy, "providers") == names(built_in, "providers")
    assert names(with_toy, "served") == names(built_in, "served")
    assert names(with_toy, "paths") == [*names(built_in, "paths"), toy.NAME]
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        assert drift(path, text, built_in) == []
        found = drift(path, text, with_toy)
        # Each list of every dialect, of those told by path and the table
        # lack it; the lists of providers and served dialects do not.
        assert all(d.selection in ("every", "paths", "table") for d in found), path.name
        assert all("toy-ndjson" in d.expected for d in found), path.name
        assert drift(path, rewrite(text, with_toy), with_toy) == []
    page = next(p for p in DOCUMENTS if p.name == "dialects.md").read_text(encoding="utf-8")
    assert {d.selection for d in drift(Path("dialects.md"), page, with_toy)} == {"every", "table"}
    assert "| `toy-ndjson` | none (read only) | `/toy/v1/talk` | no |" in rewrite(page, with_toy)
