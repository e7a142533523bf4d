"""No table of dialects outside the registry: a dialect's name is written in
the code only by its own modules (its codecs, its provider, its SDK
adapter), the :data:`toolwire.types.Dialect` type and two defaults.

What the layers above keep per dialect (the demo's provider and model, the
emulation server's names, the price data's and OpenTelemetry's names, the
rate-limit headers) is the dialect's registration; a module that lists
dialects again by name fails this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import toolwire
from toolwire.types import DIALECTS

SRC = Path(toolwire.__file__).resolve().parent

ALLOWED: dict[str, set[str]] = {
    "types.py": set(DIALECTS),  # the Dialect and ProviderDialect types, for type checkers
    "adapters/__init__.py": {"openai-chat", "openai-responses", "anthropic-messages"},
    "cli/demo.py": {"openai-chat"},  # the demo's default
    "testing/scenario.py": {"openai-responses"},  # a scenario's Responses items
    "providers/anthropic.py": {"anthropic-messages"},
    "providers/bedrock.py": {"bedrock-converse", "bedrock-invoke"},
    "providers/gemini.py": {"gemini"},
    "providers/gemini_interactions.py": {"gemini-interactions"},
    "providers/openai_chat.py": {"openai-chat"},
    "providers/openai_responses.py": {"openai-responses"},
}
"""Each module outside ``stream/codecs`` that names a dialect, and the
dialects it names (its own)."""


def named_dialects(source: str) -> set[str]:
    """The dialect names among the string constants of ``source`` that are
    not docstrings (a module's, a class's, a function's or an attribute's)."""
    tree = ast.parse(source)
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in DIALECTS
        and id(node) not in prose
    }


def test_no_module_outside_the_registry_keeps_a_table_of_dialects() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        if where.startswith("stream/codecs/"):
            continue
        names = named_dialects(path.read_text(encoding="utf-8"))
        if names:
            found[where] = names
    assert found == ALLOWED


def test_the_check_finds_a_table_and_skips_prose() -> None:
    table = (
        '"""Names `gemini` in prose."""\n'
        'X = 1\n"""And `bedrock-invoke` too."""\n'
        'HEADERS = {"anthropic-messages": "anthropic-ratelimit", "gemini": None}\n'
    )
    assert named_dialects(table) == {"anthropic-messages", "gemini"}
