"""One name per concept: the words of docs/architecture.md's glossary, one
import path for the HTTP layer's types, no public keyword that calls a
stream's continuation a resume, and no ``API`` constant; the older names
answer through ``toolwire._compat`` only, with a warning."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import toolwire
from toolwire import _compat, http, providers

SRC = Path(toolwire.__file__).resolve().parent
DOCS = Path(__file__).resolve().parents[1] / "docs"
HTTP_TYPES = (
    "ErrorParser",
    "HttpRequest",
    "HttpResponse",
    "StreamResponse",
    "Transport",
    "retry_after_seconds",
)


def _literal_all(path: Path) -> set[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List)
        ):
            return {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return set()


def test_the_glossary_defines_each_word_once() -> None:
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    section = page.split("\n## Words\n", 1)[1].split("\n## ", 1)[0]
    words = re.findall(r"^\| (\w+) \|", section, flags=re.MULTILINE)
    assert len(words) == len(set(words))
    expected = {"resume", "continuation", "cursor", "replay", "approval", "decision", "dialect"}
    assert expected <= set(words)


@pytest.mark.parametrize("name", HTTP_TYPES)
def test_the_http_types_have_one_import_path(name: str) -> None:
    exporting = sorted(
        str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if name in _literal_all(p)
    )
    assert exporting == ["http/_messages.py"]
    assert name in http.__all__ and name not in providers.__all__
    with pytest.warns(DeprecationWarning, match=rf"toolwire.providers.{name} is now toolwire.http"):
        assert getattr(providers, name) is getattr(http, name)


def _provider_classes() -> list[type]:
    return [
        value
        for value in vars(providers).values()
        if inspect.isclass(value) and issubclass(value, providers.Provider)
    ]


def test_no_provider_keyword_calls_a_continuation_a_resume() -> None:
    old = {name for _, name in _compat.RENAMED_ARGUMENTS}
    found = [
        f"{cls.__name__}({param})"
        for cls in _provider_classes()
        for param in inspect.signature(cls.__init__).parameters
        if "resume" in param and param not in old
    ]
    assert found == []
    assert "continuation_attempts" in inspect.signature(providers.OpenAIResponses).parameters


@pytest.mark.parametrize("cls", [providers.OpenAIResponses, providers.GeminiInteractions])
def test_the_old_continuation_keywords_still_work_with_a_warning(cls: type) -> None:
    with pytest.warns(DeprecationWarning, match=r"resume_attempts is now continuation_attempts"):
        provider = cls(api_key="k", resume_attempts=1)
    with pytest.warns(DeprecationWarning, match=r"resume_timeout is now continuation_timeout"):
        provider = cls(api_key="k", resume_timeout=5.0)
    assert (provider.continuation_attempts, provider.continuation_timeout) == (3, 5.0)
    with pytest.warns(DeprecationWarning, match=r"resume_attempts is now continuation_attempts"):
        assert provider.resume_attempts == 3
    with pytest.raises(toolwire.UsageError, match="continuation_attempts must be 0 or more"):
        cls(api_key="k", continuation_attempts=-1)


def test_no_module_names_a_dialect_api() -> None:
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            found += [
                f"{path.relative_to(SRC)}: {t.id}"
                for t in targets
                if isinstance(t, ast.Name) and t.id in ("API", "_API")
            ]
    assert found == []


def test_each_codec_names_its_dialect_as_its_registration_does() -> None:
    from toolwire.stream.codecs import (
        anthropic_request,
        bedrock_request,
        gemini_interactions_request,
        gemini_request,
        openai_chat_request,
        openai_responses_request,
    )

    expected = {
        anthropic_request: "anthropic-messages",
        bedrock_request: "bedrock-converse",
        gemini_interactions_request: "gemini-interactions",
        gemini_request: "gemini",
        openai_chat_request: "openai-chat",
        openai_responses_request: "openai-responses",
    }
    for module, name in expected.items():
        assert module.DIALECT_NAME == name
        with pytest.warns(DeprecationWarning, match=r"\.API is now .*\.DIALECT_NAME"):
            assert module.API == name  # type: ignore[attr-defined]


def test_the_emulation_servers_continuations_keep_their_older_name() -> None:
    from toolwire.testing import EmulationServer, Scenario

    server = EmulationServer(Scenario.from_dict({"turns": [{"text": "hi"}]}))
    assert server.continuations == []
    with pytest.warns(DeprecationWarning, match=r"resumes is now continuations"):
        assert server.resumes is server.continuations
