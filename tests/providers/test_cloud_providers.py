"""Claude and Gemini on Vertex AI, and Azure OpenAI: URLs, bodies and
credentials, and the agent's two-call conversation over real HTTP against the
emulation server, in each."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import Agent, RunResult
from toolwire.errors import UsageError
from toolwire.messages import UserMessage
from toolwire.providers import AnthropicVertex, AzureOpenAI, GeminiVertex, Provider
from toolwire.testing import EmulationServer
from toolwire.tools import tool

from ..agent.test_agent_http import QUESTION, weather

TOKEN = "ya29.vertex-token-0123456789abcdef"
AZURE_KEY = "azure-key-0123456789abcdef"
CLAUDE = "claude-sonnet-4-5@20250929"


@pytest.fixture(autouse=True)
def _no_cloud_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "ANTHROPIC_VERTEX_BASE_URL",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "CLOUD_ML_REGION",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
    ):
        monkeypatch.delenv(name, raising=False)


def test_claude_on_vertex_request() -> None:
    provider = AnthropicVertex(project="my-project", region="us-east5", access_token=TOKEN)
    request = provider.build_request(model=CLAUDE, messages=[UserMessage("hi")])
    assert request.url == (
        "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/"
        "publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    )
    assert request.json["anthropic_version"] == "vertex-2023-10-16"
    assert request.json["stream"] is True and "model" not in request.json
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-api-key" not in request.headers and "anthropic-version" not in request.headers
    assert TOKEN not in repr(request) + repr(provider)
    whole = provider.build_request(model=CLAUDE, messages=[UserMessage("hi")], stream=False)
    assert whole.url.endswith(":rawPredict") and "stream" not in whole.json


def test_vertex_regions_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-project")
    monkeypatch.setenv("CLOUD_ML_REGION", "global")
    provider = GeminiVertex(token_provider=lambda: TOKEN)
    request = provider.build_request(model="gemini-2.5-flash", messages=[UserMessage("hi")])
    assert request.url == (
        "https://aiplatform.googleapis.com/v1/projects/env-project/locations/global/"
        "publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    eu = AnthropicVertex(project="p", region="eu", access_token=TOKEN)
    assert eu.base_url == "https://aiplatform.eu.rep.googleapis.com/v1"
    monkeypatch.delenv("CLOUD_ML_REGION")
    with pytest.raises(UsageError, match="no Vertex AI region"):
        AnthropicVertex(project="p", access_token=TOKEN)
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    with pytest.raises(UsageError, match="no Google Cloud project"):
        AnthropicVertex(region="us-east5", access_token=TOKEN)


def test_vertex_application_default_credentials_are_refreshed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    google_auth = pytest.importorskip("google.auth")

    class Expiring:
        """Stands for google-auth credentials whose token has expired."""

        valid = False
        token: str | None = None

        def refresh(self, request: Any) -> None:
            self.valid, self.token = True, TOKEN

    scopes: list[Any] = []

    def default(**kwargs: Any) -> tuple[Expiring, str]:
        scopes.append(kwargs.get("scopes"))
        return Expiring(), "adc-project"

    monkeypatch.setattr(google_auth, "default", default)
    provider = AnthropicVertex(region="us-east5")
    request = provider.build_request(model=CLAUDE, messages=[UserMessage("hi")])
    assert "/projects/adc-project/" in request.url
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert scopes == [["https://www.googleapis.com/auth/cloud-platform"]]


def test_azure_v1_and_deployment_urls_and_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", AZURE_KEY)
    v1 = AzureOpenAI(endpoint="https://res.openai.azure.com/")
    request = v1.build_request(model="gpt-4o-prod", messages=[UserMessage("hi")])
    assert request.url == "https://res.openai.azure.com/openai/v1/chat/completions"
    assert request.json["model"] == "gpt-4o-prod"
    assert request.headers["api-key"] == AZURE_KEY and "authorization" not in request.headers
    assert AZURE_KEY not in repr(request)
    tokens = iter(["entra-1-0123456789", "entra-2-0123456789"])
    deployment = AzureOpenAI(
        endpoint="https://res.openai.azure.com",
        api_version="2024-10-21",
        token_provider=lambda: next(tokens),
    )
    request = deployment.build_request(model="gpt-4o-prod", messages=[UserMessage("hi")])
    assert request.url == (
        "https://res.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions"
        "?api-version=2024-10-21"
    )
    assert request.headers["authorization"] == "Bearer entra-1-0123456789"
    assert "api-key" not in request.headers
    echoed = deployment.parse_error(401, {}, {"error": {"message": "bad entra-1-0123456789"}})
    assert "entra-1-0123456789" not in echoed.message
    monkeypatch.delenv("AZURE_OPENAI_API_KEY")
    with pytest.raises(UsageError, match="no credentials"):
        AzureOpenAI(endpoint="https://res.openai.azure.com")
    with pytest.raises(UsageError, match="no Azure endpoint"):
        AzureOpenAI(api_key=AZURE_KEY)


@tool(read_only=True)
def get_weather(city: str) -> dict[str, Any]:
    """Current weather of a city.

    Args:
        city: the city name.
    """
    return {"city": city, "condition_zh": "小雨"}


@tool(read_only=True)
def get_current_time(timezone: str = "UTC") -> dict[str, Any]:
    """The current time in a time zone.

    Args:
        timezone: an IANA zone name.
    """
    return {"timezone": timezone, "time": "10:30"}


def _cloud_providers(root: str) -> list[tuple[str, Provider, str]]:
    return [
        (
            "claude-vertex",
            AnthropicVertex(
                project="p", region="us-east5", access_token=TOKEN, base_url=root + "/v1"
            ),
            CLAUDE,
        ),
        (
            "gemini-vertex",
            GeminiVertex(project="p", region="us-east5", access_token=TOKEN, base_url=root + "/v1"),
            "gemini-2.5-flash",
        ),
        ("azure-v1", AzureOpenAI(endpoint=root, api_key=AZURE_KEY), "gpt-4o-prod"),
        (
            "azure-deployment",
            AzureOpenAI(endpoint=root, api_key=AZURE_KEY, api_version="2024-10-21"),
            "gpt-4o-prod",
        ),
    ]


@pytest.mark.anyio
async def test_the_agent_runs_the_two_call_conversation_on_each_cloud() -> None:
    with EmulationServer(weather()) as server:
        for label, provider, model in _cloud_providers(server.base_url):
            agent = Agent(provider, model=model, tools=[get_weather, get_current_time])
            try:
                result: RunResult = await agent.run(QUESTION)
            finally:
                await agent.aclose()
            assert result.output == "杭州小雨,10:30。", label
            names = sorted(c.call.name for c in result.tool_calls)
            assert names == ["get_current_time", "get_weather"], label
