"""The API key never shows: not in reprs, errors, logs — even when a server echoes it."""

from __future__ import annotations

import json
import logging
import pickle
import traceback

import pytest

from toolwire import (
    Anthropic,
    Gemini,
    HttpxTransport,
    OpenAIChat,
    OpenAIResponses,
    ProviderError,
    UserMessage,
)
from toolwire.providers import Provider

from .conftest import LoopbackServer

SECRET = "sk-test-SECRET123"
NEEDLE = "SECRET123"


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAIResponses, Anthropic, Gemini])
def test_key_is_in_no_repr_or_str(cls: type[Provider]) -> None:
    provider = cls(api_key=SECRET)  # type: ignore[call-arg]
    request = provider.build_request(model="m", messages=[UserMessage("hi")])
    assert NEEDLE in json.dumps(dict(request.headers))  # it is really sent...
    shown = [repr(provider), str(provider), repr(request), str(request), repr(vars(provider))]
    shown += [repr(request.redacted_headers()), request.url, json.dumps(request.json)]
    for text in shown:
        assert NEEDLE not in text  # ...and shown nowhere
    assert "<redacted>" in repr(request)
    with pytest.raises(TypeError):
        pickle.dumps(provider)


@pytest.mark.anyio
async def test_key_is_in_no_error_or_log_record(
    server: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    token = server.path("x").rsplit("/", 1)[1]
    provider = OpenAIChat(api_key=SECRET, base_url=f"{server.url}/chat/{token}/echo-key")
    request = provider.build_request(model="m", messages=[UserMessage("hi")], stream=False)
    caplog.set_level(logging.DEBUG)  # every logger, httpx and httpcore included
    async with HttpxTransport() as transport:
        with pytest.raises(ProviderError) as caught:
            await provider.complete(request, transport=transport)
    seen = server.seen_headers[f"/chat/{token}/echo-key/chat/completions"]
    assert seen["authorization"] == f"Bearer {SECRET}"  # the server got it, and echoed it
    assert server.counts[f"/chat/{token}/echo-key/chat/completions"] == 2  # 429, then 401
    error = caught.value
    assert error.status_code == 401 and error.code == "bad_key"
    texts = [
        str(error),
        repr(error),
        repr(error.args),
        json.dumps(error.to_dict()),
        json.dumps(error.body),
        "".join(traceback.format_exception(type(error), error, error.__traceback__)),
    ]
    for text in texts:
        assert NEEDLE not in text
    assert any("retrying" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        assert NEEDLE not in record.getMessage()
        assert NEEDLE not in repr(record.args)
        assert NEEDLE not in (record.exc_text or "")
    assert NEEDLE not in caplog.text
