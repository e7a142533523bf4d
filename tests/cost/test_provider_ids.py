"""The price data's name of a provider is its dialect's registration's."""

from __future__ import annotations

import pytest

from toolwire.cost._genai import provider_id
from toolwire.stream.codecs import registered


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai", "openai"),
        ("openai-chat", "openai"),
        ("openai-responses", "openai"),
        ("anthropic", "anthropic"),
        ("gemini", "google"),
        # Left out of the hand-kept table before: priced as "gemini-interactions".
        ("gemini-interactions", "google"),
        ("bedrock", "aws"),
        ("bedrock-invoke", "aws"),
        ("vertex", "google"),
        ("xai", "x-ai"),
        ("groq", "groq"),
    ],
)
def test_a_providers_price_data_name(name: str, expected: str) -> None:
    assert provider_id(name) == expected


def test_each_dialects_provider_is_priced_by_its_registration() -> None:
    for dialect in registered():
        if dialect.provider is not None:
            for name in dialect.provider.names:
                assert provider_id(name) == dialect.provider.price_provider
