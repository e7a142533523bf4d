"""docs/content.md's table of what each dialect carries is the dialects'
own declarations (each request module's ``CONTENT``), rendered."""

from __future__ import annotations

from pathlib import Path

from toolwire.stream.codecs import (
    anthropic_request,
    bedrock_request,
    cohere_request,
    gemini_interactions_request,
    gemini_request,
    ollama_request,
    openai_chat_request,
    openai_responses_request,
)
from toolwire.stream.codecs.content import support_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "content.md"
MODULES = (
    openai_chat_request,
    openai_responses_request,
    anthropic_request,
    gemini_request,
    gemini_interactions_request,
    bedrock_request,
    ollama_request,
    cohere_request,
)


def test_the_page_shows_the_table_the_code_declares() -> None:
    table = support_table(module.CONTENT for module in MODULES)
    assert table in PAGE.read_text(encoding="utf-8")
    assert "| anthropic-messages | prompt | gif, jpeg, png, webp; https/http URL |" in table
