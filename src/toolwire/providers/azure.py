"""Azure OpenAI: Chat Completions on an Azure resource (:class:`AzureOpenAI`).

Two URL shapes, the same ``openai-chat`` dialect:

* the v1 API (the default): ``{endpoint}/openai/v1/chat/completions``, the
  model (a deployment name) in the body, no ``api-version``;
* deployment URLs, when ``api_version`` is given:
  ``{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...``.

Credentials: an ``api-key`` header (``api_key=`` or ``AZURE_OPENAI_API_KEY``),
or a Microsoft Entra ID bearer token from ``token_provider``, a callable
returning a fresh token (``azure.identity.get_bearer_token_provider(
DefaultAzureCredential(), "https://cognitiveservices.azure.com/.default")``,
with ``azure-identity`` installed by you). Neither is ever shown.

Azure's streams differ from OpenAI's in ways the ``openai-chat`` codec
already reads: a first chunk with empty ``choices`` that carries
``prompt_filter_results``, ``content_filter_results`` on chunks (both handed
on as ``UnknownItem`` events, each when its value changes), and
``finish_reason: "content_filter"`` when a filter stopped the answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from toolwire.errors import UsageError
from toolwire.http import HttpRequest
from toolwire.providers.openai_chat import OpenAIChat

__all__ = ["AzureOpenAI"]


class AzureOpenAI(OpenAIChat):
    """Azure OpenAI's Chat Completions (``dialect == "openai-chat"``).

    Example::

        azure = AzureOpenAI(endpoint="https://my-resource.openai.azure.com")
        request = azure.build_request(model="my-gpt-4o-deployment", messages=[...])
    """

    default_name = "azure-openai"
    env_vars = ("AZURE_OPENAI_API_KEY",)
    base_url_env_vars = ()  # type: ignore[assignment]  # the endpoint has its own

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        api_key: str | None = None,
        token_provider: Callable[[], str] | None = None,
        api_version: str | None = None,
        deployment: str | None = None,
        base_url: str | None = None,
        **options: Any,
    ) -> None:
        """Configure the provider.

        Args:
            endpoint: the resource's endpoint, ``https://{resource}.openai.azure.com``
                (else ``AZURE_OPENAI_ENDPOINT``).
            api_key: the resource's key (else ``AZURE_OPENAI_API_KEY``).
            token_provider: a callable returning an Entra ID token, used
                instead of a key.
            api_version: use deployment URLs with this ``api-version``
                (``"2024-10-21"``...); ``None``: the v1 API.
            deployment: the deployment of deployment URLs; ``None``: the
                request's ``model``.
            base_url: the API root itself (``.../openai/v1`` or ``.../openai``),
                instead of ``endpoint``.
            **options: as for :class:`~toolwire.providers.OpenAIChat`.

        Raises:
            UsageError: no endpoint, or neither a key nor a token provider.
        """
        endpoint = (endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT") or "").rstrip("/")
        if base_url is None:
            if not endpoint:
                raise UsageError("no Azure endpoint: pass endpoint= or set AZURE_OPENAI_ENDPOINT")
            base_url = f"{endpoint}/openai" + ("" if api_version else "/v1")
        options.setdefault("openai_max_tokens_field", "max_completion_tokens")
        super().__init__(api_key=api_key, base_url=base_url, **options)
        if self._api_key is None and token_provider is None:
            raise UsageError(
                f"{self.name}: no credentials: pass api_key=, set AZURE_OPENAI_API_KEY "
                "or pass token_provider= (Entra ID)"
            )
        self._token_provider = token_provider
        self.api_version = api_version
        self.deployment = deployment
        self._last_token: str | None = None

    def _auth_headers(self) -> dict[str, str]:
        headers = super()._auth_headers()
        headers.pop("authorization", None)
        if self._token_provider is not None:
            self._last_token = self._token_provider()
            headers["authorization"] = f"Bearer {self._last_token}"
        elif self._api_key is not None:
            headers["api-key"] = self._api_key.reveal()
        return headers

    def _secrets(self) -> list[str]:
        found = super()._secrets()
        return [*found, self._last_token] if self._last_token else found

    def _post_model(self, model: str, body: dict[str, Any], *, stream: bool) -> HttpRequest:
        """The v1 API's URL, or the deployment's with ``api-version``."""
        if self.api_version is None:
            return super()._post_model(model, body, stream=stream)
        deployment = quote(self.deployment or model, safe="")
        path = self.wire.request_path
        assert path is not None  # the dialect's requests are written
        url = (
            f"{self.base_url}/deployments/{deployment}{path(model, stream)}"
            f"?api-version={quote(self.api_version, safe='')}"
        )
        return self._post(url, body, stream=stream)
