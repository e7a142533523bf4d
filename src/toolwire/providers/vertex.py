"""Google Vertex AI: Claude (:class:`AnthropicVertex`) and Gemini
(:class:`GeminiVertex`), one provider shape: a project, a region, and
Google credentials.

URLs name the project, the region, the publisher and the model::

    {base}/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict
    {base}/projects/{project}/locations/{region}/publishers/google/models/{model}:streamGenerateContent?alt=sse

with ``base`` ``https://{region}-aiplatform.googleapis.com/v1`` (or
``aiplatform.googleapis.com`` for ``global``, the ``us``/``eu``
multi-region endpoints). Claude's body is Anthropic's Messages body without
``model`` and with ``anthropic_version: "vertex-2023-10-16"``; its stream is
Anthropic's SSE, read by the ``anthropic-messages`` dialect. Gemini's is
``generateContent``, read by the ``gemini`` dialect.

Credentials, in order: ``access_token=`` (a fixed OAuth token),
``token_provider=`` (a callable returning a fresh one), else Application
Default Credentials through ``google-auth`` (``pip install 'toolwire[vertex]'``:
``gcloud auth application-default login``, a service account key in
``GOOGLE_APPLICATION_CREDENTIALS``, or the metadata server), refreshed when
they expire (a blocking call, about once an hour). The token travels as
``Authorization: Bearer`` and is never shown.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from toolwire.errors import UsageError
from toolwire.http import HttpRequest
from toolwire.providers._base import Provider
from toolwire.providers.anthropic import Anthropic
from toolwire.providers.gemini import Gemini
from toolwire.stream.codecs import anthropic

__all__ = ["VERTEX_ANTHROPIC_VERSION", "AnthropicVertex", "GeminiVertex"]

VERTEX_ANTHROPIC_VERSION = anthropic.VERTEX_VERSION
"""The ``anthropic_version`` Vertex AI wants in the body of Claude requests."""
_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


def vertex_base_url(region: str) -> str:
    """The Vertex AI endpoint of a region (``global``, ``us``, ``eu`` included)."""
    if region == "global":
        return "https://aiplatform.googleapis.com/v1"
    if region in ("us", "eu"):
        return f"https://aiplatform.{region}.rep.googleapis.com/v1"
    return f"https://{region}-aiplatform.googleapis.com/v1"


class _GoogleToken:
    """Where the bearer token comes from: fixed, a callable, or ADC."""

    def __init__(self, access_token: str | None, token_provider: Callable[[], str] | None) -> None:
        self._fixed = access_token
        self._provider = token_provider
        self._credentials: Any = None
        self._last: str | None = access_token
        self.project: str | None = None
        if access_token is None and token_provider is None:
            try:
                import google.auth
            except ImportError:  # pragma: no cover - google-auth is a dev dependency
                raise UsageError(
                    "Vertex AI credentials need google-auth: pip install 'toolwire[vertex]' "
                    "(or pass access_token= or token_provider=)"
                ) from None
            try:
                self._credentials, self.project = google.auth.default(scopes=[_SCOPE])
            except google.auth.exceptions.DefaultCredentialsError as exc:
                raise UsageError(f"no Google credentials: {exc}") from None

    def __repr__(self) -> str:
        return "_GoogleToken(<redacted>)"

    def token(self) -> str:
        """A valid access token (refreshed first when ADC's has expired)."""
        if self._fixed is not None:
            return self._fixed
        if self._provider is not None:
            self._last = self._provider()
            return self._last
        credentials = self._credentials
        if not credentials.valid:
            import google.auth.transport.requests

            credentials.refresh(google.auth.transport.requests.Request())
        self._last = str(credentials.token)
        return self._last

    def secrets(self) -> list[str]:
        """The latest token, to scrub from errors."""
        return [self._last] if self._last else []


class _Vertex(Provider):
    """The Vertex AI half of a provider: project, region, token, URL."""

    _publisher = ""
    requires_key_for_default_url = False  # no API key: a Google token

    def __init__(
        self,
        *,
        project: str | None = None,
        region: str | None = None,
        access_token: str | None = None,
        token_provider: Callable[[], str] | None = None,
        base_url: str | None = None,
        **options: Any,
    ) -> None:
        """Configure the provider.

        Args:
            project: the Google Cloud project (else ``ANTHROPIC_VERTEX_PROJECT_ID``,
                ``GOOGLE_CLOUD_PROJECT`` or the credentials').
            region: the region (else ``CLOUD_ML_REGION``, ``GOOGLE_CLOUD_LOCATION``).
            access_token: a fixed OAuth access token.
            token_provider: a callable returning a fresh access token.
            base_url: the endpoint root, up to ``/v1`` (else the provider's
                ``base_url_env_vars``, else the region's).
            **options: as for the publisher's provider
                (:class:`~toolwire.providers.Anthropic`,
                :class:`~toolwire.providers.Gemini`), ``api_key`` excepted.
        """
        self._token = _GoogleToken(access_token, token_provider)
        project = (
            project
            or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID")
            or os.environ.get("GOOGLE_CLOUD_PROJECT")
            or self._token.project
        )
        region = (
            region or os.environ.get("CLOUD_ML_REGION") or os.environ.get("GOOGLE_CLOUD_LOCATION")
        )
        if not project:
            raise UsageError("no Google Cloud project: pass project= or set GOOGLE_CLOUD_PROJECT")
        if not region:
            raise UsageError("no Vertex AI region: pass region= or set CLOUD_ML_REGION")
        self.project, self.region = project, region
        self.default_base_url = vertex_base_url(region)
        super().__init__(base_url=base_url, **options)

    def _publisher_url(self) -> str:
        """Where the publisher's models are: the model's path follows."""
        return (
            f"{self.base_url}/projects/{quote(self.project, safe='')}/locations/"
            f"{quote(self.region, safe='')}/publishers/{self._publisher}"
        )

    def _bearer(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self._token.token()}"}

    def _secrets(self) -> list[str]:
        return super()._secrets() + self._token.secrets()


class AnthropicVertex(_Vertex, Anthropic):
    """Claude on Vertex AI (``dialect == "anthropic-messages"``)."""

    _publisher = "anthropic"
    default_name = "anthropic-vertex"
    env_vars = ()  # type: ignore[assignment]  # no API key: a Google token
    base_url_env_vars = ("ANTHROPIC_VERTEX_BASE_URL",)
    in_url = ("model",)

    def _auth_headers(self) -> dict[str, str]:
        headers = self._bearer()
        if self.anthropic_beta:
            headers["anthropic-beta"] = ",".join(self.anthropic_beta)
        return headers

    def _encode(self, **options: Any) -> dict[str, Any]:
        """Anthropic's body without ``model`` (it is in the URL), with
        ``anthropic_version``."""
        return anthropic.encode_platform_request(
            anthropic_version=VERTEX_ANTHROPIC_VERSION, **options
        )

    def _post_model(self, model: str, body: dict[str, Any], *, stream: bool) -> HttpRequest:
        path = anthropic.vertex_request_path(model, stream)
        return self._post(self._publisher_url() + path, body, stream=stream)


class GeminiVertex(_Vertex, Gemini):
    """Gemini on Vertex AI (``dialect == "gemini"``)."""

    _publisher = "google"
    default_name = "gemini-vertex"
    env_vars = ()  # type: ignore[assignment]  # no API key: a Google token
    base_url_env_vars = ()  # type: ignore[assignment]

    def _auth_headers(self) -> dict[str, str]:
        return self._bearer()

    def _post_model(self, model: str, body: dict[str, Any], *, stream: bool) -> HttpRequest:
        request_path = self.wire.request_path
        assert request_path is not None  # Gemini's requests are written
        return self._post(self._publisher_url() + request_path(model, stream), body, stream=stream)
