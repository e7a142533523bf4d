"""Amazon Bedrock: the Converse API (:class:`Bedrock`) and InvokeModel for
Claude (:class:`BedrockInvoke`), at ``https://bedrock-runtime.{region}.amazonaws.com``.

The wire formats are :mod:`toolwire.stream.codecs.bedrock` and
:mod:`toolwire.stream.codecs.bedrock_invoke`; the providers add what is
HTTP: the URLs (the model is in the path: ``/model/{id}/converse-stream``,
``/converse``, ``/invoke-with-response-stream``, ``/invoke``), the
credentials and the error bodies.

Credentials: a Bedrock API key (``api_key=`` or ``AWS_BEARER_TOKEN_BEDROCK``)
is sent as a bearer token; without one, each request is signed with AWS
Signature Version 4 by botocore from the standard credential chain (see
:mod:`toolwire.providers._aws`; ``pip install 'toolwire[bedrock]'``). A
request is signed when it is built, and AWS accepts a signature for five
minutes: build a new request rather than keep one longer.

Errors are ``{"message": ...}`` bodies with the exception's name in the
``x-amzn-ErrorType`` header (``ThrottlingException``: 429,
``ServiceUnavailableException``: 503, ``ModelNotReadyException``...).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolwire.errors import ProviderError, UsageError
from toolwire.http import HttpRequest, Transport
from toolwire.providers._aws import AwsSigner
from toolwire.providers._base import Provider
from toolwire.stream.codecs.request import dict_or_empty
from toolwire.stream.framing.eventstream import MEDIA_TYPE

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["Bedrock", "BedrockInvoke"]

_OVERLOADED = frozenset({"ServiceUnavailableException", "ModelNotReadyException"})


class _BedrockBase(Provider):
    """What both Bedrock APIs share: region, credentials, URLs and errors."""

    default_name = "bedrock"
    env_vars = ("AWS_BEARER_TOKEN_BEDROCK",)
    base_url_env_vars = ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME",)
    requires_key_for_default_url = False
    in_url = ("model", "stream")

    def __init__(
        self,
        *,
        region: str | None = None,
        profile: str | None = None,
        credentials: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        timeout: Timeouts | float | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            region: the AWS region (else ``AWS_REGION``, ``AWS_DEFAULT_REGION``
                or the profile's).
            profile: a profile of the shared AWS config files.
            credentials: ``(access key id, secret access key[, session
                token])`` or a botocore credentials object; else the standard chain.
            api_key: a Bedrock API key (else ``AWS_BEARER_TOKEN_BEDROCK``),
                sent as a bearer token instead of a signature.
            base_url: the endpoint (else ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``,
                else the region's).
            name: the provider's name in errors.
            headers: extra request headers (signed with the others).
            transport: default transport for ``stream``/``complete``.
            timeout: timeouts of the transport created when none is given.

        Raises:
            UsageError: no region, or neither an API key nor AWS credentials.
        """
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            name=name,
            headers=headers,
            transport=transport,
            timeout=timeout,
        )
        self._signer: AwsSigner | None = None
        if self._api_key is None:
            self._signer = AwsSigner(
                service="bedrock", region=region, profile=profile, credentials=credentials
            )
            region = self._signer.region
        region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if not self.base_url:
            if not region:
                raise UsageError(f"{self.name}: no AWS region: pass region= or set AWS_REGION")
            self.base_url = f"https://bedrock-runtime.{region}.amazonaws.com"
        self.region = region
        """The AWS region (``None`` for an API key and an explicit ``base_url``)."""

    def _headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": MEDIA_TYPE if stream else "application/json",
        }
        if self._api_key is not None:
            headers["authorization"] = f"Bearer {self._api_key.reveal()}"
        headers.update(self._extra_headers)
        return headers

    def _post(self, url: str, body: dict[str, Any], *, stream: bool) -> HttpRequest:
        request = super()._post(url, body, stream=stream)
        if self._signer is None:
            return request
        signed = self._signer.sign("POST", url, request.headers, request.content())
        return dataclasses.replace(request, headers={**request.headers, **signed})

    def _secrets(self) -> list[str]:
        found = super()._secrets()
        if self._signer is not None:
            found += self._signer.secrets()
        return found

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        data = dict_or_empty(body)
        message = data.get("message", data.get("Message"))
        lowered = {k.lower(): v for k, v in headers.items()}
        kind = str(lowered.get("x-amzn-errortype", "")).split(":")[0] or None
        return self._build_error(
            status_code,
            headers,
            body,
            message=message if isinstance(message, str) else None,
            error_type=kind,
            overloaded=kind in _OVERLOADED,
        )


class Bedrock(_BedrockBase):
    """Bedrock's Converse API (``dialect == "bedrock-converse"``): every model
    Bedrock serves (Claude, Nova, Llama, Mistral...), one request format.

    A request's ``extra`` may hold ``additionalModelRequestFields``,
    ``guardrailConfig``...; ``tool_choice="none"`` with tools is a
    :class:`~toolwire.errors.UsageError` (Converse cannot forbid the tools it
    is sent: send none).
    """

    dialect = "bedrock-converse"


class BedrockInvoke(_BedrockBase):
    """Bedrock's InvokeModel API for Claude (``dialect == "bedrock-invoke"``):
    Anthropic's Messages format, with every Anthropic feature Bedrock passes on."""

    dialect = "bedrock-invoke"

    def __init__(
        self,
        *,
        anthropic_thinking: Mapping[str, Any] | None = None,
        anthropic_max_tokens: int = 4096,
        **options: Any,
    ) -> None:
        """Configure the provider: the options of :class:`Bedrock`, and

        Args:
            anthropic_thinking: the ``thinking`` object, if enabled.
            anthropic_max_tokens: ``max_tokens`` when a request gives none.
            **options: as for :class:`Bedrock`.
        """
        super().__init__(**options)
        self.anthropic_thinking = dict(anthropic_thinking) if anthropic_thinking else None
        self.anthropic_max_tokens = anthropic_max_tokens

    def _encoder_options(self) -> dict[str, Any]:
        return dict(
            default_max_tokens=self.anthropic_max_tokens,
            thinking=self.anthropic_thinking,
        )
