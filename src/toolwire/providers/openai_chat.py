"""OpenAI Chat Completions, and every server that speaks it.

The wire format itself (request bodies, streams, whole responses, tool schemas)
is :mod:`toolwire.stream.codecs.openai_chat`; the provider adds what is HTTP: the URL, the
credential headers, the options it passes on, and the error bodies.

Theory of operation (of the format the codec writes):
requests are ``POST {base_url}/chat/completions`` with a
``messages`` array. An assistant turn's calls go in ``tool_calls`` with
``function.arguments`` as a JSON *string*; each result is its own
``{"role": "tool", "tool_call_id": ...}`` message. The same code serves
OpenAI, Azure-style gateways, DashScope/Qwen, DeepSeek, vLLM, Ollama's
``/v1``, Groq, Mistral and OpenRouter: only ``base_url`` changes.

Reasoning servers put the model's thinking in ``reasoning_content`` (DeepSeek,
Qwen, vLLM) or ``reasoning`` (OpenRouter, Groq). DeepSeek requires the
``reasoning_content`` of a turn that called tools to be sent back in every
later request. A non-streaming response's reasoning fields are kept as a
provider_state item ``{"type": "message_fields", "fields": {...}}`` whose
fields are merged into the assistant message when it is sent again; for a
streamed turn (whose reasoning arrives as text), ``openai_reasoning_field``
names the field the reasoning is sent back in (``reasoning_content``, chosen
automatically for DeepSeek).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolwire.errors import ProviderError, UsageError
from toolwire.http import Transport
from toolwire.providers._base import Provider
from toolwire.providers._secret import _Secret
from toolwire.stream import jsonio
from toolwire.stream.codecs.request import dict_or_empty

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = ["OpenAIChat"]

_DIALECT_NAME = "openai-chat"
_OFFICIAL = "https://api.openai.com/v1"


class OpenAIChat(Provider):
    """The OpenAI Chat Completions dialect (``dialect == "openai-chat"``).

    Example::

        qwen = OpenAIChat(api_key=key, base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
                          name="qwen")
    """

    dialect = _DIALECT_NAME
    default_name = "openai"
    default_base_url = _OFFICIAL
    env_vars = ("OPENAI_API_KEY",)
    base_url_env_vars = ("OPENAI_BASE_URL",)

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        timeout: Timeouts | float | None = None,
        openai_organization: str | None = None,
        openai_project: str | None = None,
        openai_stream_usage: bool = True,
        openai_max_tokens_field: str | None = None,
        openai_parallel_tool_calls: bool | None = None,
        openai_reasoning_field: str | None = "auto",
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key (else ``OPENAI_API_KEY``). Optional for a custom
                ``base_url``: local servers (vLLM, Ollama) need none.
            base_url: e.g. ``https://api.deepseek.com/v1`` or
                ``http://127.0.0.1:11434/v1``; else ``OPENAI_BASE_URL``, else
                OpenAI's.
            name: the provider's name in errors (``"deepseek"``...).
            headers: extra request headers.
            transport: default transport for ``stream``/``complete``.
            timeout: timeouts of the transport created when none is given.
            openai_organization: sent as ``OpenAI-Organization``.
            openai_project: sent as ``OpenAI-Project``.
            openai_stream_usage: ask for usage in streams
                (``stream_options.include_usage``); turn off for servers
                that reject ``stream_options``.
            openai_max_tokens_field: ``"max_completion_tokens"`` (the default
                at OpenAI, required by reasoning models) or ``"max_tokens"``
                (the default elsewhere).
            openai_parallel_tool_calls: sent as ``parallel_tool_calls`` when set.
            openai_reasoning_field: the assistant-message field that carries
                a tool-calling turn's reasoning back to the server
                (``"reasoning_content"``); ``"auto"`` picks it for DeepSeek
                URLs and sends nothing elsewhere, ``None`` never sends it.
        """
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            name=name,
            headers=headers,
            transport=transport,
            timeout=timeout,
        )
        self.openai_organization = openai_organization
        self.openai_project = openai_project
        self.openai_stream_usage = openai_stream_usage
        if openai_max_tokens_field is None:
            official = self.base_url == _OFFICIAL
            openai_max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        if openai_max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise UsageError(
                "openai_max_tokens_field must be 'max_tokens' or 'max_completion_tokens'"
            )
        self.openai_max_tokens_field = openai_max_tokens_field
        self.openai_parallel_tool_calls = openai_parallel_tool_calls
        if openai_reasoning_field == "auto":
            # DeepSeek rejects a tool-calling turn sent back without its
            # reasoning_content; other servers may reject the unknown field.
            deepseek = "deepseek" in self.base_url.lower()
            openai_reasoning_field = "reasoning_content" if deepseek else None
        self.openai_reasoning_field = openai_reasoning_field

    def _auth_headers(self) -> dict[str, str]:
        return openai_auth_headers(self._api_key, self.openai_organization, self.openai_project)

    def _encoder_options(self) -> dict[str, Any]:
        return dict(
            max_tokens_field=self.openai_max_tokens_field,
            stream_usage=self.openai_stream_usage,
            parallel_tool_calls=self.openai_parallel_tool_calls,
            reasoning_field=self.openai_reasoning_field,
        )

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        return openai_style_error(self, status_code, headers, body)


def openai_auth_headers(
    key: _Secret | None, organization: str | None, project: str | None
) -> dict[str, str]:
    """The credential headers of OpenAI and compatible servers: a bearer key
    (none for a keyless local server), the organization and the project."""
    headers: dict[str, str] = {}
    if key is not None:
        headers["authorization"] = f"Bearer {key.reveal()}"
    if organization:
        headers["openai-organization"] = organization
    if project:
        headers["openai-project"] = project
    return headers


def openai_style_error(
    provider: Provider, status_code: int, headers: Mapping[str, str], body: Any
) -> ProviderError:
    """Read the error shapes of OpenAI and compatible servers: ``{"error": {...}}``
    (OpenAI, Groq, DeepSeek), ``{"error": "text"}`` (Ollama), ``{"message": ...}``
    (vLLM, Mistral), ``{"detail": ...}`` (FastAPI-based servers)."""
    message: Any = None
    code: Any = None
    error_type: Any = None
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body_obj: dict[str, Any] = body[0]
    else:
        body_obj = dict_or_empty(body)
    error = body_obj.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        code = error.get("code")
        error_type = error.get("type")
    elif isinstance(error, str):
        message = error
    if message is None:
        message = body_obj.get("message") or body_obj.get("detail")
        code = code if code is not None else body_obj.get("code")
        error_type = error_type or body_obj.get("type")
    if message is not None and not isinstance(message, str):
        message = jsonio.dumps(message)
    return provider._build_error(
        status_code, headers, body, message=message, code=code, error_type=error_type
    )
