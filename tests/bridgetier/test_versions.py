"""The agents the tier installed are the native binaries of the pinned
versions (Claude Code's postinstall swaps its placeholder for the binary of
the platform; the Codex package ships its own), and run here."""

from __future__ import annotations

import json
import re
import subprocess

from tests.bridgetier._tier import HERE, agent


def version_of(name: str) -> tuple[int, ...]:
    done = subprocess.run(
        [agent(name), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    assert found, done.stdout
    return tuple(int(part) for part in found.groups())


def pinned(package: str) -> tuple[int, ...]:
    manifest = json.loads((HERE / "package.json").read_text(encoding="utf-8"))
    return tuple(int(part) for part in manifest["dependencies"][package].split("."))


def test_claude_code_is_the_pinned_release_that_sends_system_messages_in_messages() -> None:
    assert version_of("claude") == pinned("@anthropic-ai/claude-code") >= (2, 1, 328)


def test_codex_is_the_pinned_release() -> None:
    assert version_of("codex") == pinned("@openai/codex")
